// The ticket connector a webhook names, with its secrets opened, kept for a moment (lib/ttl-cache.ts):
// a platform posting thousands of events a minute costs one query every two seconds, not one per
// event. A rotation or a change reaches every instance within that time (at once on the instance
// that made it).
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';
import type { Logger } from '../../lib/log.ts';
import { openSecret } from '../../lib/secret-box.ts';
import { createTtlCache, SENDER_CACHE } from '../../lib/ttl-cache.ts';
import type { Platform } from '../tickets/platforms.ts';

export interface WebhookConnector {
  id: string;
  orgId: string;
  name: string;
  platform: Platform;
  /** The secrets a signature may be made with now: the current one and, during a rotation, the
   * previous one. */
  secrets: string[];
  tokenHash: string | null;
  /** The connector has a secret this server cannot open (its SECRET_KEY is not the one that sealed
   * it): every delivery is refused until the operator sets the secret again. */
  unreadableSecret: boolean;
}

export interface ConnectorLookup {
  find(id: string): WebhookConnector | null | Promise<WebhookConnector | null>;
  invalidate(): void;
}

interface Row {
  id: string;
  org_id: string;
  name: string;
  platform: Platform;
  secret_sealed: string | null;
  previous_secret_sealed: string | null;
  previous_valid: boolean | null;
  token_hash: string | null;
}

export function createConnectorLookup(db: Db, secretKey: string | null, log: Logger): ConnectorLookup {
  const open = (row: Row): WebhookConnector => {
    const sealed = [row.secret_sealed, row.previous_valid ? row.previous_secret_sealed : null].filter((s): s is string => s !== null);
    const secrets: string[] = [];
    let unreadableSecret = false;
    for (const text of sealed) {
      try {
        if (!secretKey) throw new Error('SECRET_KEY is not set');
        secrets.push(openSecret(text, secretKey, row.id));
      } catch (error) {
        unreadableSecret = true;
        log.error('a connector secret cannot be opened: set SECRET_KEY to the key it was sealed with, or set the secret again', {
          connector_id: row.id,
          error: (error as Error).message,
        });
      }
    }
    return { id: row.id, orgId: row.org_id, name: row.name, platform: row.platform, secrets, tokenHash: row.token_hash, unreadableSecret };
  };

  const load = async (id: string): Promise<WebhookConnector | null> => {
    const [row] = await queryRows<Row>(
      db,
      sql`select id, org_id, name, platform, secret_sealed, previous_secret_sealed, previous_secret_expires_at > now() as previous_valid, token_hash
          from connectors where id = ${id} and builtin is null`,
    );
    return row ? open(row) : null;
  };

  const cache = createTtlCache(load, SENDER_CACHE);
  return { find: cache.get, invalidate: cache.clear };
}
