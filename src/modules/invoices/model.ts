import { t } from 'elysia';
import { INVOICE_STATUSES } from '../../db/schema/index.ts';
import { currency, day, enumOf, externalId, instant, label, metadata, money, nullable } from '../../lib/record-fields.ts';

export const ListInvoicesQuery = t.Object({
  customer_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  contract_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  currency: t.Optional(currency),
  status: t.Optional(t.Union(INVOICE_STATUSES.map((s) => t.Literal(s)))),
  overdue: t.Optional(t.BooleanString()),
  issued_after: t.Optional(instant),
  issued_before: t.Optional(instant),
  updated_since: t.Optional(instant),
  include_deleted: t.Optional(t.BooleanString()),
  limit: t.Optional(t.String()),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
});

export const InvoiceParams = t.Object({ id: t.String({ minLength: 1, maxLength: 300 }) });

/** An invoice's writable fields (docs/arr-data.md). Its customer is named by `customer_id` or
 * `customer_external_id`, its contract (optional, the customer's own) by `contract_id` or
 * `contract_external_id`; `currency` defaults to the customer's and may not differ from it. */
const invoiceFields = {
  external_id: t.Optional(nullable(externalId)),
  customer_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  customer_external_id: t.Optional(externalId),
  contract_id: t.Optional(nullable(t.String({ minLength: 1, maxLength: 300 }))),
  contract_external_id: t.Optional(nullable(externalId)),
  number: t.Optional(nullable(label(100))),
  status: t.Optional(enumOf(INVOICE_STATUSES)),
  currency: t.Optional(currency),
  amount_due: money,
  amount_paid: t.Optional(money),
  issued_at: instant,
  due_date: t.Optional(nullable(day)),
  paid_at: t.Optional(nullable(instant)),
  metadata: t.Optional(metadata),
};

export const InvoiceCreate = t.Object(invoiceFields, { additionalProperties: false });
export type InvoiceCreate = typeof InvoiceCreate.static;
export const InvoicePatch = t.Partial(t.Object(invoiceFields, { additionalProperties: false }));
export type InvoicePatch = typeof InvoicePatch.static;

/** An invoice as the API shows it (presentInvoice), with how many days it is past due today. The
 * `data` of GET, POST, PATCH and DELETE. */
export const Invoice = t.Object(
  {
    id: t.String(),
    external_id: nullable(t.String()),
    customer_id: t.String(),
    contract_id: nullable(t.String()),
    number: nullable(t.String()),
    status: enumOf(INVOICE_STATUSES),
    currency,
    amount_due: t.Integer(),
    amount_paid: t.Integer(),
    issued_at: instant,
    due_date: nullable(day),
    paid_at: nullable(instant),
    days_past_due: t.Integer(),
    metadata,
    created_at: instant,
    updated_at: instant,
    deleted_at: nullable(instant),
  },
  { additionalProperties: false },
);
