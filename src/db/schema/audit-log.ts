import { bigint, index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { timestamptz } from './columns.ts';

/** Append-only: a trigger in the migrations refuses UPDATE and DELETE. No foreign key on org_id, so
 * the trail outlives what it describes. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    orgId: text('org_id'),
    /** Who did it: `cli:<user>`, `key:<key id>`, `system`. */
    actor: text('actor').notNull(),
    /** What happened: `org.created`, `key.revoked`, … */
    action: text('action').notNull(),
    targetType: text('target_type').notNull(),
    targetId: text('target_id').notNull(),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [index('audit_log_org_id_created_at_idx').on(table.orgId, table.createdAt)],
);

export type AuditEntry = typeof auditLog.$inferSelect;
