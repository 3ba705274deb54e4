import { sql } from 'drizzle-orm';
import { bigint, check, date, foreignKey, index, jsonb, pgTable, text, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { customers, currencyCheck } from './customers.ts';
import { contracts } from './contracts.ts';
import { timestamps, timestamptz } from './columns.ts';

export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'void', 'uncollectible'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export const invoices = pgTable(
  'invoices',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    customerId: text('customer_id').notNull(),
    contractId: text('contract_id'),
    externalId: text('external_id'),
    number: text('number'),
    status: text('status', { enum: INVOICE_STATUSES }).notNull().default('open'),
    currency: text('currency').notNull(),
    amountDue: bigint('amount_due', { mode: 'number' }).notNull(),
    amountPaid: bigint('amount_paid', { mode: 'number' }).notNull().default(0),
    issuedAt: timestamptz('issued_at').notNull(),
    dueDate: date('due_date', { mode: 'string' }),
    paidAt: timestamptz('paid_at'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    ...timestamps,
    deletedAt: timestamptz('deleted_at'),
  },
  (table) => [
    foreignKey({ columns: [table.orgId, table.customerId], foreignColumns: [customers.orgId, customers.id] }).onDelete('cascade'),
    foreignKey({
      name: 'invoices_customer_currency_fk',
      columns: [table.orgId, table.customerId, table.currency],
      foreignColumns: [customers.orgId, customers.id, customers.currency],
    }).onDelete('cascade'),
    // Null contract_id: no contract, nothing checked (MATCH SIMPLE).
    foreignKey({
      name: 'invoices_customer_contract_fk',
      columns: [table.orgId, table.customerId, table.contractId],
      foreignColumns: [contracts.orgId, contracts.customerId, contracts.id],
    }),
    unique('invoices_org_id_id_unique').on(table.orgId, table.id),
    uniqueIndex('invoices_org_external_id_unique').on(table.orgId, table.externalId).where(sql`${table.externalId} is not null`),
    index('invoices_org_customer_idx').on(table.orgId, table.customerId),
    index('invoices_org_contract_idx').on(table.orgId, table.contractId),
    index('invoices_org_created_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    index('invoices_org_updated_idx').on(table.orgId, table.updatedAt, table.id),
    index('invoices_org_issued_idx').on(table.orgId, table.issuedAt),
    index('invoices_org_status_due_idx').on(table.orgId, table.status, table.dueDate),
    check('invoices_status_check', sql`${table.status} in ('draft', 'open', 'paid', 'void', 'uncollectible')`),
    check('invoices_currency_check', currencyCheck(table.currency)),
    check('invoices_amounts_check', sql`${table.amountDue} >= 0 and ${table.amountPaid} >= 0`),
  ],
);

export type Invoice = typeof invoices.$inferSelect;
