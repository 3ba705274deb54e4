import { bigint, foreignKey, pgTable, text } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';

/** A number per organisation that changes whenever its ARR data does: triggers on customers,
 * contracts and invoices bump it in the transaction of the change (migration 0013), so every
 * process can tell, with one indexed read, whether a list page it answered before still holds
 * (lib/list-cache.ts). The row lock the bump takes orders the versions as the commits. */
export const orgDataVersions = pgTable(
  'org_data_versions',
  {
    orgId: text('org_id').primaryKey(),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
  },
  (table) => [foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade')],
);

/** The same for what GET /api/cfo/predictions answers beyond the ARR data: its predictions, stale
 * marks and models. Triggers on predictions, risk_input_changes and prediction_models bump it
 * (migration 0023); a predictions page is kept under both versions. Apart from org_data_versions, so
 * a rescore or a ticket's stale mark leaves the kept customers pages alone. */
export const orgPredictionVersions = pgTable(
  'org_prediction_versions',
  {
    orgId: text('org_id').primaryKey(),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
  },
  (table) => [foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade')],
);
