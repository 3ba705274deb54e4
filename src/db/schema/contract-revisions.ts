import { bigint, boolean, date, foreignKey, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { BILLING_INTERVALS, CONTRACT_STATUSES, contracts } from './contracts.ts';
import { timestamptz } from './columns.ts';

/**
 * Append-only: one row per change of a contract's terms, written by triggers on contracts (migration
 * 0015), so the state of a contract at a past day can be rebuilt. Triggers refuse UPDATE, TRUNCATE
 * and any DELETE but the cascade of deleting the contract itself.
 */
export const contractRevisions = pgTable(
  'contract_revisions',
  {
    orgId: text('org_id').notNull(),
    contractId: text('contract_id').notNull(),
    /** 1 for the contract as first written, then one more per change. */
    revision: integer('revision').notNull(),
    /** The business day these terms hold from: the contract's start_date for its first revision
     * (imported history holds from its start; the day it was written if that is earlier), the UTC
     * day the change was recorded for later ones. */
    validFrom: date('valid_from', { mode: 'string' }).notNull(),
    recordedAt: timestamptz('recorded_at').notNull().defaultNow(),
    customerId: text('customer_id').notNull(),
    status: text('status', { enum: CONTRACT_STATUSES }).notNull(),
    startDate: date('start_date', { mode: 'string' }).notNull(),
    endDate: date('end_date', { mode: 'string' }),
    autoRenew: boolean('auto_renew').notNull(),
    billingInterval: text('billing_interval', { enum: BILLING_INTERVALS }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    seats: integer('seats'),
    cancelledAt: date('cancelled_at', { mode: 'string' }),
    /** The contract was (soft-)deleted by this change. */
    deleted: boolean('deleted').notNull().default(false),
  },
  (table) => [
    primaryKey({ columns: [table.contractId, table.revision] }),
    foreignKey({
      name: 'contract_revisions_contract_fk',
      columns: [table.orgId, table.contractId],
      foreignColumns: [contracts.orgId, contracts.id],
    }).onDelete('cascade'),
    // The rebuild walks an organisation's contracts, each one's revisions newest first.
    index('contract_revisions_org_contract_idx').on(table.orgId, table.contractId, table.revision),
    // Features of a few customers (a chunk of a recompute, one stale customer) read only their
    // contracts' revisions (migration 0021).
    index('contract_revisions_org_customer_idx').on(table.orgId, table.customerId),
  ],
);

export type ContractRevision = typeof contractRevisions.$inferSelect;
