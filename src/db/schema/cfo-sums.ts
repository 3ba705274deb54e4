import { bigint, bigserial, date, doublePrecision, foreignKey, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';

/** The figures of one month sums row (cfo-history/history.ts `MonthSums`). */
const sums = {
  kind: text('kind').notNull(),
  currency: text('currency').notNull(),
  k: integer('k').notNull(),
  new: bigint('new', { mode: 'number' }).notNull(),
  reactivation: bigint('reactivation', { mode: 'number' }).notNull(),
  expansion: bigint('expansion', { mode: 'number' }).notNull(),
  contraction: bigint('contraction', { mode: 'number' }).notNull(),
  churn: bigint('churn', { mode: 'number' }).notNull(),
  newCustomers: integer('new_customers').notNull(),
  reactivatedCustomers: integer('reactivated_customers').notNull(),
  churnedCustomers: integer('churned_customers').notNull(),
  customersNet: integer('customers_net').notNull(),
  retained: bigint('retained', { mode: 'number' }).notNull(),
  retainedCapped: bigint('retained_capped', { mode: 'number' }).notNull(),
};

/** Which day an organisation's stored month sums are as of (the month under way closes on it). */
export const cfoSumsState = pgTable(
  'cfo_sums_state',
  {
    orgId: text('org_id').primaryKey(),
    asOf: date('as_of', { mode: 'string' }).notNull(),
    builtAt: timestamp('built_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade')],
);

/** The ARR history's month sums of an organisation, per kind, currency and month index k, as of
 * cfo_sums_state.as_of, without the customers marked in cfo_sums_changes' latest changes. */
export const cfoMonthSums = pgTable('cfo_month_sums', { orgId: text('org_id').notNull(), ...sums }, (table) => [
  primaryKey({ columns: [table.orgId, table.kind, table.currency, table.k] }),
  foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
]);

/** Each customer's share of cfo_month_sums, so that a change to a few customers replaces theirs.
 * No foreign key to customers: a deleted customer's share must stay until it is taken off. */
export const cfoCustomerMonthSums = pgTable(
  'cfo_customer_month_sums',
  { orgId: text('org_id').notNull(), customerId: text('customer_id').notNull(), ...sums },
  (table) => [
    primaryKey({ columns: [table.orgId, table.customerId, table.kind, table.currency, table.k] }),
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
  ],
);

/** Customers whose contract revisions changed since their share was stored (a trigger on
 * contract_revisions writes them, migration 0037); `seq` grows with every change, so that taking a
 * mark off can tell a change it stored from one made since. */
export const cfoSumsChanges = pgTable(
  'cfo_sums_changes',
  {
    orgId: text('org_id').notNull(),
    customerId: text('customer_id').notNull(),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.orgId, table.customerId] }),
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
  ],
);

/** Which day (and grace) an organisation's stored forecast features are as of. */
export const cfoFeaturesState = pgTable(
  'cfo_features_state',
  {
    orgId: text('org_id').primaryKey(),
    asOf: date('as_of', { mode: 'string' }).notNull(),
    graceDays: integer('grace_days').notNull(),
    builtAt: timestamp('built_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade')],
);

/** The forecast's book as of cfo_features_state.as_of: each customer with a contract counting that
 * day, its features at a year's horizon (in FEATURES' order, as JSON), ARR and term end. */
export const cfoStoredFeatures = pgTable(
  'cfo_stored_features',
  {
    orgId: text('org_id').notNull(),
    customerId: text('customer_id').notNull(),
    currency: text('currency').notNull(),
    arr: doublePrecision('arr').notNull(),
    renewalDate: date('renewal_date', { mode: 'string' }),
    values: text('values').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.orgId, table.customerId] }),
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
  ],
);

/** Customers whose features' inputs (their row, contract revisions, invoices, tickets) changed since
 * their stored features were computed (triggers, migration 0038); `seq` as in cfo_sums_changes. */
export const cfoFeatureChanges = pgTable(
  'cfo_feature_changes',
  {
    orgId: text('org_id').notNull(),
    customerId: text('customer_id').notNull(),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.orgId, table.customerId] }),
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
  ],
);
