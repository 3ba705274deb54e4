import { t } from 'elysia';
import { INVOICE_STATUSES } from '../../db/schema/index.ts';

export const ListInvoicesQuery = t.Object({
  customer_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  contract_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  status: t.Optional(t.Union(INVOICE_STATUSES.map((s) => t.Literal(s)))),
  overdue: t.Optional(t.BooleanString()),
  issued_after: t.Optional(t.String({ format: 'date-time' })),
  issued_before: t.Optional(t.String({ format: 'date-time' })),
  updated_since: t.Optional(t.String({ format: 'date-time' })),
  include_deleted: t.Optional(t.BooleanString()),
  limit: t.Optional(t.String()),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
});

export const InvoiceParams = t.Object({ id: t.String({ minLength: 1, maxLength: 300 }) });
