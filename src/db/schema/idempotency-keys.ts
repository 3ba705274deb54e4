import { foreignKey, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { timestamptz } from './columns.ts';

/** The first answer to a POST carrying an `Idempotency-Key`, replayed for 24 hours (docs/arr-data.md). Written in the transaction of the change it answers: a key is stored only with its change. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    orgId: text('org_id').notNull(),
    key: text('key').notNull(),
    /** SHA-256 of method, path and the body's canonical JSON: the same key with another request is a 409. */
    fingerprint: text('fingerprint').notNull(),
    responseStatus: integer('response_status').notNull(),
    /** The answer's JSON as it was sent (text, not jsonb: a replay is the same bytes, keys in order). */
    responseBody: text('response_body').notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.orgId, table.key] }),
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
  ],
);
