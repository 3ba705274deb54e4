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
