// The billing connector a webhook names, with its secrets opened, kept for a moment as the ticket
// webhook keeps its connectors (lib/ttl-cache.ts): one query every two seconds per connector, not one
// per event, and no decryption per delivery. A change made here is seen at once here (the admin
// routes and the admin socket clear it); on another instance within two seconds.
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { billingConnectors, type BillingConnector } from '../../db/schema/index.ts';
import { createTtlCache, SENDER_CACHE } from '../../lib/ttl-cache.ts';
import { openBillingSecrets, type OpenedBillingSecrets } from './connectors.ts';

export interface BillingSender {
  id: string;
  row: BillingConnector;
  /** Null: a secret does not open with this server's SECRET_KEY, and every delivery is refused. */
  secrets: OpenedBillingSecrets | null;
}

export interface BillingConnectorLookup {
  find(id: string): BillingSender | null | Promise<BillingSender | null>;
  invalidate(): void;
}

export function createBillingConnectorLookup(db: Db, secretKey: string | null): BillingConnectorLookup {
  const load = async (id: string): Promise<BillingSender | null> => {
    const [row] = await db.select().from(billingConnectors).where(eq(billingConnectors.id, id));
    if (!row) return null;
    let secrets: OpenedBillingSecrets | null = null;
    try {
      secrets = openBillingSecrets(row, secretKey);
    } catch {
      secrets = null;
    }
    return { id: row.id, row, secrets };
  };
  const cache = createTtlCache(load, SENDER_CACHE);
  return { find: cache.get, invalidate: cache.clear };
}
