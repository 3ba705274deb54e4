// Invoices as the API shows them, with `days_past_due` for today (docs/arr-data.md), always scoped
// to one organisation.
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';
import { andAll, idOrExternal, isoTime, limitTo, newestFirst } from '../../db/keyset.ts';
import { rowShape, typed, type RowOf } from '../../db/rows.ts';
import { invoices } from '../../db/schema/index.ts';
import {
  patchRecord,
  recordTable,
  softDeleteRecord,
  upsertRecords,
  type ConstraintViolation,
  type PatchOutcome,
  type RowOutcome,
} from '../../db/upsert.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { resolveContractReferences } from '../contracts/service.ts';
import { resolveCustomerReferences } from '../customers/service.ts';
import type { InvoicePatch } from './model.ts';
import { decodeCursor } from '../../lib/pagination.ts';

/** What the reads select of an invoice: its columns (`org_id` aside), how many days it is past due
 * on the day asked about, and its sort key at full database precision, for the cursor. */
export const INVOICE_ROW = rowShape(invoices, ['org_id'], { days_past_due: typed<number>(), sort_value: typed<string>() });
type InvoiceRow = RowOf<typeof INVOICE_ROW>;

const keyset = newestFirst('i');

function selectInvoices(orgId: string, today: string, where: SQL[]): SQL {
  return sql`
    select i.id, i.external_id, i.customer_id, i.contract_id, i.number, i.status, i.currency, i.amount_due, i.amount_paid,
           ${isoTime(sql`i.issued_at`)} as issued_at, i.due_date::text as due_date, ${isoTime(sql`i.paid_at`)} as paid_at,
           revintel_days_past_due(i.status, i.due_date, i.amount_due, i.amount_paid, ${today}::date) as days_past_due, i.metadata,
           ${isoTime(sql`i.created_at`)} as created_at, ${isoTime(sql`i.updated_at`)} as updated_at, ${isoTime(sql`i.deleted_at`)} as deleted_at,
           ${keyset.value} as sort_value
    from invoices i
    where i.org_id = ${orgId} ${andAll(where)}`;
}

interface InvoiceFilters {
  customerId?: string;
  contractId?: string;
  status?: string;
  currency?: string;
  overdue?: boolean;
  issuedAfter?: string;
  issuedBefore?: string;
  updatedSince?: string;
  includeDeleted?: boolean;
}

export async function listInvoices(
  db: Db,
  input: { orgId: string; today: string; filters: InvoiceFilters; limit: number; cursor?: string },
): Promise<InvoiceRow[]> {
  const { filters } = input;
  const where: SQL[] = [];
  if (!filters.includeDeleted) where.push(sql`i.deleted_at is null`);
  if (filters.customerId) where.push(sql`i.customer_id = ${filters.customerId}`);
  if (filters.contractId) where.push(sql`i.contract_id = ${filters.contractId}`);
  if (filters.status) where.push(sql`i.status = ${filters.status}`);
  if (filters.currency) where.push(sql`i.currency = ${filters.currency}`);
  if (filters.overdue !== undefined) {
    const overdue = sql`revintel_invoice_overdue_on(i.status, i.due_date, i.amount_due, i.amount_paid, ${input.today}::date)`;
    where.push(filters.overdue ? overdue : sql`not coalesce(${overdue}, false)`);
  }
  if (filters.issuedAfter) where.push(sql`i.issued_at > ${filters.issuedAfter}::timestamptz`);
  if (filters.issuedBefore) where.push(sql`i.issued_at < ${filters.issuedBefore}::timestamptz`);
  if (filters.updatedSince) where.push(sql`i.updated_at >= ${filters.updatedSince}::timestamptz`);
  if (input.cursor) {
    const position = decodeCursor(input.cursor, 'created_at', 'timestamp');
    where.push(keyset.after(position.value, position.id));
  }
  return await queryRows<InvoiceRow>(
    db,
    sql`${selectInvoices(input.orgId, input.today, where)} order by ${keyset.order} ${limitTo(input.limit + 1)}`,
  );
}

export async function getInvoice(
  db: Db,
  orgId: string,
  ref: string,
  today: string,
  options: { includeDeleted?: boolean } = {},
): Promise<InvoiceRow> {
  const match = idOrExternal('i', ref);
  const [row] = await queryRows<InvoiceRow>(
    db,
    selectInvoices(orgId, today, options.includeDeleted ? [match] : [match, sql`i.deleted_at is null`]),
  );
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
    deleted_at: row.deleted_at,
  };
}

// --- writes -----------------------------------------------------------------------------------

function explainInvoiceViolation(violation: ConstraintViolation): AppError {
  switch (violation.constraint) {
    case 'invoices_org_external_id_unique':
      return new AppError('conflict', 'external_id is already used by another invoice');
    case 'invoices_customer_currency_fk':
      return new AppError('unprocessable', "currency must be the customer's currency (no FX conversion)");
    case 'invoices_customer_contract_fk':
      return new AppError('unprocessable', "contract is not one of the invoice's customer's contracts");
    case 'invoices_org_id_customer_id_customers_org_id_id_fk':
      return new AppError('unprocessable', 'customer is not a customer of this organisation');
    default:
      return new AppError('unprocessable', `invoice breaks the rule ${violation.constraint || violation.code}`);
  }
}

export const INVOICES_TABLE = recordTable(invoices, 'inv', explainInvoiceViolation);

/** Resolves the customer and contract each input names: column values, or why not. A new invoice
 * that names only its contract belongs to the contract's customer (a PATCH never moves an invoice
 * to another customer by the way). */
async function invoiceValues(
  db: Db,
  orgId: string,
  inputs: InvoicePatch[],
  creating: boolean,
): Promise<(Record<string, unknown> | AppError)[]> {
  const contractsOf = await resolveContractReferences(db, orgId, inputs);
  const customerRefs = inputs.map((input, i) => {
    const contract = contractsOf[i];
    const namesCustomer = input.customer_id !== undefined || input.customer_external_id !== undefined;
    return creating && !namesCustomer && contract && !(contract instanceof AppError) && contract.customer_id
      ? { customer_id: contract.customer_id, currency: input.currency }
      : input;
  });
  const customersOf = await resolveCustomerReferences(db, orgId, customerRefs, creating);
  return inputs.map((input, i) => {
    const contract = contractsOf[i];
    const customer = customersOf[i];
    if (contract instanceof AppError) return contract;
    if (customer instanceof AppError) return customer;
    if (customer && contract?.customer_id && contract.customer_id !== customer.customer_id) {
      return new AppError('unprocessable', `contract ${contract.contract_id} is not a contract of customer ${customer.customer_id}`);
    }
    const { customer_id: _c, customer_external_id: _ce, contract_id: _k, contract_external_id: _ke, ...values } = input;
    return { ...values, ...(customer ?? {}), ...(contract ? { contract_id: contract.contract_id } : {}) };
  });
}

/** Creates invoices, or updates the ones whose external_id is known. */
export async function writeInvoices(db: Db, orgId: string, rows: { index: number; input: InvoicePatch }[]): Promise<RowOutcome[]> {
  const values = await invoiceValues(
    db,
    orgId,
    rows.map((row) => row.input),
    true,
  );
  return upsertRecords(
    db,
    INVOICES_TABLE,
    orgId,
    rows.map((row, i) => ({ index: row.index, values: values[i]! })),
  );
}

export async function patchInvoice(db: Db, orgId: string, ref: string, patch: InvoicePatch): Promise<PatchOutcome> {
  const [values] = await invoiceValues(db, orgId, [patch], false);
  if (values instanceof AppError) throw values;
  return patchRecord(db, INVOICES_TABLE, orgId, ref, values!);
}

export const deleteInvoice = (db: Db, orgId: string, ref: string) => softDeleteRecord(db, INVOICES_TABLE, orgId, ref);
