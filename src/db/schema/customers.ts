import { sql } from 'drizzle-orm';
import { check, date, foreignKey, index, jsonb, pgTable, text, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { timestamps, timestamptz } from './columns.ts';

export const CUSTOMER_STATUSES = ['active', 'churned', 'trial'] as const;
export type CustomerStatus = (typeof CUSTOMER_STATUSES)[number];

export interface Csm {
  name: string | null;
  email: string | null;
  phone: string | null;
  slack_user_id: string | null;
}

/** ISO 4217: three capital letters (no FX: totals are reported per currency). */
export const currencyCheck = (column: unknown) => sql`${column} ~ '^[A-Z]{3}$'`;

export const customers = pgTable(
  'customers',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    /** The id in the source system: unique per organisation when present. */
    externalId: text('external_id'),
    name: text('name').notNull(),
    domain: text('domain'),
    email: text('email'),
    status: text('status', { enum: CUSTOMER_STATUSES }).notNull().default('active'),
    segment: text('segment'),
    country: text('country'),
    currency: text('currency').notNull(),
    csm: jsonb('csm').$type<Csm | null>(),
    /** The day the customer churned. Set to today (UTC) by a trigger when the status becomes
     * churned without one; cleared when a churned customer comes back (migration 0015). */
    churnedAt: date('churned_at', { mode: 'string' }),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    ...timestamps,
    /** Soft delete: the record leaves normal lists and stays visible to syncs as a tombstone. */
    deletedAt: timestamptz('deleted_at'),
  },
  (table) => [
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
    // (org_id, id) is what contracts and invoices reference, so a record can only point at a
    // customer of its own organisation.
    unique('customers_org_id_id_unique').on(table.orgId, table.id),
    // What contracts and invoices reference to carry their customer's currency (no FX conversion).
    unique('customers_org_id_currency_unique').on(table.orgId, table.id, table.currency),
    uniqueIndex('customers_org_external_id_unique').on(table.orgId, table.externalId).where(sql`${table.externalId} is not null`),
    index('customers_org_created_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    index('customers_org_updated_idx').on(table.orgId, table.updatedAt, table.id),
    index('customers_org_name_idx').on(table.orgId, table.name, table.id),
    index('customers_org_status_idx').on(table.orgId, table.status),
    index('customers_org_segment_idx').on(table.orgId, table.segment),
    // How a ticket finds its customer: by the requester's e-mail, then by its domain.
    index('customers_org_email_lower_idx').on(table.orgId, sql`lower(${table.email})`),
    index('customers_org_domain_lower_idx').on(table.orgId, sql`lower(${table.domain})`),
    index('customers_org_csm_email_idx').on(table.orgId, sql`(${table.csm}->>'email')`),
    check('customers_status_check', sql`${table.status} in ('active', 'churned', 'trial')`),
    check('customers_currency_check', currencyCheck(table.currency)),
    check('customers_churned_at_check', sql`${table.churnedAt} is null or ${table.status} = 'churned'`),
  ],
);

export type Customer = typeof customers.$inferSelect;
