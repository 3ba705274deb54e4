// What `revintel billing` asks of the database, as units of work (the CLI's own connection, or the
// running server's admin socket on the embedded database). Secrets arrive sealed by the CLI.
import type { Db } from '../../db/client.ts';
import { applyPart } from './apply-job.ts';
import {
  connectorStatus,
  createBillingConnector,
  deleteBillingConnector,
  findBillingConnector,
  listBillingConnectors,
  type CreateBillingConnectorInput,
} from './connectors.ts';
import { billingConnectorStatus, replayDeadEvent } from './status.ts';
import { loadSync, startSync, syncUnits } from './sync.ts';

export const billingAdminUnits = {
  'billing.add': (db: Db, input: CreateBillingConnectorInput) => createBillingConnector(db, input),
  /** Removes the organisation's connector of that name, if it has one (the demo's, before it is made again). */
  'billing.remove-named': async (db: Db, input: { orgId: string; name: string; actor: string }) => {
    const [row] = await listBillingConnectors(db, { orgId: input.orgId }).then((rows) => rows.filter((r) => r.name === input.name));
    if (row) await deleteBillingConnector(db, { connector: row.id, orgId: input.orgId, actor: input.actor });
    return { removed: row ? 1 : 0 };
  },
  'billing.list': async (db: Db, filter: { org?: string }) => {
    const rows = await listBillingConnectors(db, filter);
    return Promise.all(rows.map(async (row) => ({ row, status: await connectorStatus(db, row.id) })));
  },
  'billing.find': (db: Db, input: { connector: string; org?: string }) => findBillingConnector(db, input.connector, { org: input.org }),
  'billing.sync-start': (db: Db, input: { connectorId: string }) => startSync(db, input),
  'billing.sync-show': (db: Db, input: { syncId: string }) => loadSync(db, input),
  'billing.status': async (db: Db, input: { connector: string; org?: string; publicUrl: string | null }) =>
    billingConnectorStatus(db, await findBillingConnector(db, input.connector, { org: input.org }), input.publicUrl),
  'billing.replay': (db: Db, input: { connector: string; org?: string; eventRef: string; actor: string }) => replayDeadEvent(db, input),
  /** One part of the connector's pending events applied (applyInParts runs them all). */
  'billing.apply': applyPart,
  ...syncUnits,
};
