// What `revintel billing` asks of the database, as units of work (the CLI's own connection, or the
// running server's admin socket on the embedded database). Secrets arrive sealed by the CLI.
import type { Db } from '../../db/client.ts';
import { actionSettings } from '../agent-actions/settings.ts';
import { applyPendingEvents } from './apply.ts';
import {
  connectorStatus,
  createBillingConnector,
  findBillingConnector,
  listBillingConnectors,
  type CreateBillingConnectorInput,
} from './connectors.ts';
import { loadSync, startSync, syncUnits } from './sync.ts';

export const billingAdminUnits = {
  'billing.add': (db: Db, input: CreateBillingConnectorInput) => createBillingConnector(db, input),
  'billing.list': async (db: Db, filter: { org?: string }) => {
    const rows = await listBillingConnectors(db, filter);
    return Promise.all(rows.map(async (row) => ({ row, status: await connectorStatus(db, row.id) })));
  },
  'billing.find': (db: Db, input: { connector: string; org?: string }) => findBillingConnector(db, input.connector, { org: input.org }),
  'billing.sync-start': (db: Db, input: { connectorId: string }) => startSync(db, input),
  'billing.sync-show': (db: Db, input: { syncId: string }) => loadSync(db, input),
  /** One run's worth of the connector's pending events applied. */
  'billing.apply': (db: Db, input: { connectorId: string; stripeApiBase?: string }) =>
    applyPendingEvents(db, input.connectorId, { stripeApiBase: input.stripeApiBase, secretKey: actionSettings().secretKey }),
  ...syncUnits,
};
