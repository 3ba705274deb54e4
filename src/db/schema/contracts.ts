import { sql } from 'drizzle-orm';
import { bigint, boolean, check, date, foreignKey, index, integer, jsonb, pgTable, text, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { customers, currencyCheck } from './customers.ts';
import { timestamps, timestamptz } from './columns.ts';

export const CONTRACT_STATUSES = ['draft', 'active', 'ended', 'cancelled'] as const;
export type ContractStatus = (typeof CONTRACT_STATUSES)[number];
export const BILLING_INTERVALS = ['month', 'quarter', 'year'] as const;
export type BillingInterval = (typeof BILLING_INTERVALS)[number];

export const contracts = pgTable(
  'contracts',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    customerId: text('customer_id').notNull(),
    externalId: text('external_id'),
    /** The plan or product. */
    name: text('name').notNull(),
    status: text('status', { enum: CONTRACT_STATUSES }).notNull().default('active'),
    startDate: date('start_date', { mode: 'string' }).notNull(),
    /** Null: evergreen. Inclusive: a contract ending today is active today. */
    endDate: date('end_date', { mode: 'string' }),
    autoRenew: boolean('auto_renew').notNull().default(false),
    billingInterval: text('billing_interval', { enum: BILLING_INTERVALS }).notNull(),
    /** The whole contract's charge per billing interval, in minor units (not per seat). */
    amount: bigint('amount', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    seats: integer('seats'),
    /** The day the cancellation became known (the notice; when it takes effect is end_date), or the
     * day an evergreen contract was marked ended. Set to today (UTC) by a trigger when the status
     * becomes cancelled without one; cleared when it leaves cancelled and ended (migration 0015). */
    cancelledAt: date('cancelled_at', { mode: 'string' }),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    ...timestamps,
    deletedAt: timestamptz('deleted_at'),
  },
  (table) => [
    foreignKey({ columns: [table.orgId, table.customerId], foreignColumns: [customers.orgId, customers.id] }).onDelete('cascade'),
    // A contract is in its customer's currency, and the customer's currency cannot change under it.
    foreignKey({
      name: 'contracts_customer_currency_fk',
      columns: [table.orgId, table.customerId, table.currency],
      foreignColumns: [customers.orgId, customers.id, customers.currency],
    }).onDelete('cascade'),
    unique('contracts_org_id_id_unique').on(table.orgId, table.id),
    // What an invoice references, so its contract is one of its own customer's.
    unique('contracts_org_customer_id_unique').on(table.orgId, table.customerId, table.id),
    uniqueIndex('contracts_org_external_id_unique').on(table.orgId, table.externalId).where(sql`${table.externalId} is not null`),
    index('contracts_org_customer_idx').on(table.orgId, table.customerId),
    index('contracts_org_created_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    index('contracts_org_updated_idx').on(table.orgId, table.updatedAt, table.id),
    index('contracts_org_end_date_idx').on(table.orgId, table.endDate),
    check('contracts_status_check', sql`${table.status} in ('draft', 'active', 'ended', 'cancelled')`),
    check('contracts_interval_check', sql`${table.billingInterval} in ('month', 'quarter', 'year')`),
    check('contracts_currency_check', currencyCheck(table.currency)),
    check('contracts_amount_check', sql`${table.amount} >= 0`),
    check('contracts_dates_check', sql`${table.endDate} is null or ${table.endDate} >= ${table.startDate}`),
    check('contracts_seats_check', sql`${table.seats} is null or ${table.seats} >= 0`),
    // Only a contract that stopped has the day it stopped: a live one with a date is a mistake.
    check('contracts_cancelled_at_check', sql`${table.cancelledAt} is null or ${table.status} in ('cancelled', 'ended')`),
  ],
);

export type Contract = typeof contracts.$inferSelect;
