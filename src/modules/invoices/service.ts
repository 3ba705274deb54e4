// Invoices as the API shows them, with `days_past_due` for today (README "ARR data"), always scoped
// to one organisation.
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { andAll, idOrExternal, isoTime, newestFirst } from '../../db/keyset.ts';
import { notFound } from '../../lib/errors.ts';
import { decodeCursor } from '../../lib/pagination.ts';

export interface InvoiceRow {
  id: string;
  external_id: string | null;
  customer_id: string;
  contract_id: string | null;
  number: string | null;
  status: string;
  currency: string;
  amount_due: string | number;
  amount_paid: string | number;
  issued_at: string;
  due_date: string | null;
  paid_at: string | null;
  days_past_due: number;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  sort_value: string;
}

const keyset = newestFirst('i');

function selectInvoices(orgId: string, today: string, where: SQL[]): SQL {
  return sql`
    select i.id, i.external_id, i.customer_id, i.contract_id, i.number, i.status, i.currency, i.amount_due, i.amount_paid,
           ${isoTime(sql`i.issued_at`)} as issued_at, i.due_date::text as due_date, ${isoTime(sql`i.paid_at`)} as paid_at,
           revintel_days_past_due(i.status, i.due_date, ${today}::date) as days_past_due, i.metadata,
           ${isoTime(sql`i.created_at`)} as created_at, ${isoTime(sql`i.updated_at`)} as updated_at, ${isoTime(sql`i.deleted_at`)} as deleted_at,
           ${keyset.value} as sort_value
    from invoices i
    where i.org_id = ${orgId} ${andAll(where)}`;
}

export interface InvoiceFilters {
  customerId?: string;
  contractId?: string;
  status?: string;
  overdue?: boolean;
  issuedAfter?: string;
  issuedBefore?: string;
  updatedSince?: string;
  includeDeleted?: boolean;
}

export async function listInvoices(db: Db, input: { orgId: string; today: string; filters: InvoiceFilters; limit: number; cursor?: string }): Promise<InvoiceRow[]> {
  const { filters } = input;
  const where: SQL[] = [];
  if (!filters.includeDeleted) where.push(sql`i.deleted_at is null`);
  if (filters.customerId) where.push(sql`i.customer_id = ${filters.customerId}`);
  if (filters.contractId) where.push(sql`i.contract_id = ${filters.contractId}`);
  if (filters.status) where.push(sql`i.status = ${filters.status}`);
  if (filters.overdue !== undefined) {
    const pastDue = sql`revintel_days_past_due(i.status, i.due_date, ${input.today}::date) > 0`;
    where.push(filters.overdue ? pastDue : sql`not (${pastDue})`);
  }
  if (filters.issuedAfter) where.push(sql`i.issued_at > ${filters.issuedAfter}::timestamptz`);
  if (filters.issuedBefore) where.push(sql`i.issued_at < ${filters.issuedBefore}::timestamptz`);
  if (filters.updatedSince) where.push(sql`i.updated_at >= ${filters.updatedSince}::timestamptz`);
  if (input.cursor) {
    const position = decodeCursor(input.cursor, 'created_at');
    where.push(keyset.after(position.value, position.id));
  }
  return rowsOf<InvoiceRow>(await db.execute(sql`${selectInvoices(input.orgId, input.today, where)} order by ${keyset.order} limit ${input.limit + 1}`));
}

export async function getInvoice(db: Db, orgId: string, ref: string, today: string): Promise<InvoiceRow> {
  const match = idOrExternal('i', ref);
  const [row] = rowsOf<InvoiceRow>(await db.execute(selectInvoices(orgId, today, [match, sql`i.deleted_at is null`])));
  if (!row) throw notFound(`Invoice ${ref}`);
  return row;
}

export function presentInvoice(row: InvoiceRow) {
  return {
    id: row.id,
    external_id: row.external_id,
    customer_id: row.customer_id,
    contract_id: row.contract_id,
    number: row.number,
    status: row.status,
    currency: row.currency,
    amount_due: Number(row.amount_due),
    amount_paid: Number(row.amount_paid),
    issued_at: row.issued_at,
    due_date: row.due_date,
    paid_at: row.paid_at,
    days_past_due: Number(row.days_past_due),
    metadata: row.metadata,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.deleted_at ? { deleted_at: row.deleted_at } : {}),
  };
}
