// Helpers for the ticket pipeline's tests: connectors with real sealed secrets, signed deliveries,
// and one round of the worker's processing run in-process (the same units the worker thread runs).
import { createHmac } from 'node:crypto';
import { localRunner } from '../../src/db/units-of-work.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import type { Database } from '../../src/db/client.ts';
import { newConnectorId } from '../../src/lib/ids.ts';
import { createLogger } from '../../src/lib/log.ts';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { createConnector } from '../../src/modules/tickets/connectors/service.ts';
import { hashToken } from '../../src/modules/webhooks/signatures.ts';
import { workerUnits } from '../../src/jobs/worker-units.ts';
import { processDueEvents } from '../../src/modules/tickets/queue/loop.ts';
import type { Platform } from '../../src/modules/tickets/platforms.ts';

/** The SECRET_KEY of test apps. */
export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdefghijklmnop';

export async function makeConnector(
  database: Database,
  orgId: string,
  options: { platform?: Platform; name?: string; secret?: string | null; token?: string | null } = {},
) {
  const id = newConnectorId();
  return database.db.transaction((tx) =>
    createConnector(tx as never, {
      id,
      org: orgId,
      name: options.name ?? `connector-${id.slice(-6)}`,
      platform: options.platform ?? 'generic',
      secretSealed: options.secret ? sealSecret(options.secret, TEST_SECRET_KEY, id) : null,
      tokenHash: options.token ? hashToken(options.token) : null,
      actor: 'test',
    }),
  );
}

/** The `x-hub-signature-256` value for `body`: `sha256=` + hex HMAC-SHA256. */
export const hubSignature = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** Processes every due event as the worker thread would, round after round, until none is left. */
export async function drainQueue(database: Database, owner = 'test-worker'): Promise<number> {
  const units = localRunner(database.db, workerUnits, DEFAULT_SETTINGS);
  const log = createLogger('silent');
  let total = 0;
  for (;;) {
    const claimed = await processDueEvents({ units, owner, log });
    if (claimed === 0) return total;
    total += claimed;
  }
}
