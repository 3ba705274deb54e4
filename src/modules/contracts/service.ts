// Contracts as the API shows them, with their annualised `arr` and whether it counts today by the one
// ARR rule (revintel_contract_counted_on, migration 0030; docs/arr-data.md), always scoped to one
// organisation.
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';
import { findNamed } from '../../db/references.ts';
import { rowShape, typed, type RowOf } from '../../db/rows.ts';
import { contracts } from '../../db/schema/index.ts';
import { andAll, idOrExternal, isoTime, limitTo, newestFirst } from '../../db/keyset.ts';
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
import { resolveCustomerReferences } from '../customers/service.ts';
import type { ContractPatch } from './model.ts';
import { decodeCursor } from '../../lib/pagination.ts';

/** What the reads select of a contract: its columns (`org_id` aside), its annualised value, and its
 * sort key at full database precision, for the cursor. */
export const CONTRACT_ROW = rowShape(contracts, ['org_id'], {
  arr: typed<string | number>(),
  counts_today: typed<boolean>(),
  sort_value: typed<string>(),
});
type ContractRow = RowOf<typeof CONTRACT_ROW>;

const keyset = newestFirst('ct');

function selectContracts(orgId: string, today: string, where: SQL[]): SQL {
  return sql`
    select ct.id, ct.external_id, ct.customer_id, ct.name, ct.status, ct.start_date::text as start_date, ct.end_date::text as end_date,
           ct.auto_renew, ct.billing_interval, ct.amount, ct.currency, ct.seats, ct.cancelled_at::text as cancelled_at,
           revintel_contract_arr(ct.billing_interval, ct.amount) as arr,
           ct.deleted_at is null and revintel_contract_counted_on(ct.status, ct.start_date, ct.end_date, ct.cancelled_at, ${today}::date) as counts_today, ct.metadata,
           ${isoTime(sql`ct.created_at`)} as created_at, ${isoTime(sql`ct.updated_at`)} as updated_at, ${isoTime(sql`ct.deleted_at`)} as deleted_at,
           ${keyset.value} as sort_value
    from contracts ct
    where ct.org_id = ${orgId} ${andAll(where)}`;
}

interface ContractFilters {
  customerId?: string;
  status?: string;
  currency?: string;
  endingBefore?: string;
  endingAfter?: string;
  updatedSince?: string;
  includeDeleted?: boolean;
}

export async function listContracts(
  db: Db,
  input: { orgId: string; today: string; filters: ContractFilters; limit: number; cursor?: string },
): Promise<ContractRow[]> {
  const { filters } = input;
  const where: SQL[] = [];
  if (!filters.includeDeleted) where.push(sql`ct.deleted_at is null`);
  if (filters.customerId) where.push(sql`ct.customer_id = ${filters.customerId}`);
  if (filters.status) where.push(sql`ct.status = ${filters.status}`);
  if (filters.currency) where.push(sql`ct.currency = ${filters.currency}`);
  if (filters.endingBefore) where.push(sql`ct.end_date < ${filters.endingBefore}::date`);
  if (filters.endingAfter) where.push(sql`ct.end_date > ${filters.endingAfter}::date`);
  if (filters.updatedSince) where.push(sql`ct.updated_at >= ${filters.updatedSince}::timestamptz`);
  if (input.cursor) {
    const position = decodeCursor(input.cursor, 'created_at', 'timestamp');
    where.push(keyset.after(position.value, position.id));
  }
  return await queryRows<ContractRow>(
    db,
    sql`${selectContracts(input.orgId, input.today, where)} order by ${keyset.order} ${limitTo(input.limit + 1)}`,
  );
}

export async function getContract(
  db: Db,
  orgId: string,
  ref: string,
  today: string,
  options: { includeDeleted?: boolean } = {},
): Promise<ContractRow> {
  const match = idOrExternal('ct', ref);
  const [row] = await queryRows<ContractRow>(
    db,
    selectContracts(orgId, today, options.includeDeleted ? [match] : [match, sql`ct.deleted_at is null`]),
  );
  if (!row) throw notFound(`Contract ${ref}`);
  return row;
}

export function presentContract(row: ContractRow) {
  return {
    id: row.id,
    external_id: row.external_id,
    customer_id: row.customer_id,
    name: row.name,
    status: row.status,
    start_date: row.start_date,
    end_date: row.end_date,
    auto_renew: row.auto_renew,
    billing_interval: row.billing_interval,
    amount: Number(row.amount),
    currency: row.currency,
    seats: row.seats,
    cancelled_at: row.cancelled_at,
    arr: Number(row.arr),
    counts_today: row.counts_today,
    metadata: row.metadata,
    created_at: row.created_at,
    updated_at: row.updated_at,
    deleted_at: row.deleted_at,
  };
}

// --- writes -----------------------------------------------------------------------------------

function explainContractViolation(violation: ConstraintViolation): AppError {
  switch (violation.constraint) {
    case 'contracts_org_external_id_unique':
      return new AppError('conflict', 'external_id is already used by another contract');
    case 'contracts_dates_check':
      return new AppError('unprocessable', 'end_date must not be before start_date');
    case 'contracts_cancelled_at_check':
      return new AppError(
        'validation_failed',
        'Invalid field "cancelled_at": only a cancelled or ended contract has one (set its status, or leave cancelled_at out)',
      );
    case 'contracts_customer_currency_fk':
      return new AppError('unprocessable', "currency must be the customer's currency (no FX conversion)");
    case 'contracts_org_id_customer_id_customers_org_id_id_fk':
      return new AppError('unprocessable', 'customer is not a customer of this organisation');
    case 'invoices_customer_contract_fk':
      return new AppError('unprocessable', 'the customer of a contract with invoices cannot change');
    default:
      return new AppError('unprocessable', `contract breaks the rule ${violation.constraint || violation.code}`);
  }
}

export const CONTRACTS_TABLE = recordTable(contracts, 'ctr', explainContractViolation);

/** Column values of a contract input: its customer reference resolved to `customer_id` and the
 * customer's `currency` (unless the input leaves both out, on a PATCH). */
function contractValues(input: ContractPatch, customer: { customer_id: string; currency: string } | null): Record<string, unknown> {
  const { customer_id: _id, customer_external_id: _external, ...values } = input;
  return customer ? { ...values, ...customer } : values;
}

/** Creates contracts, or updates the ones whose external_id is known. */
export async function writeContracts(db: Db, orgId: string, rows: { index: number; input: ContractPatch }[]): Promise<RowOutcome[]> {
  const customers = await resolveCustomerReferences(
    db,
    orgId,
    rows.map((row) => row.input),
    true,
  );
  return upsertRecords(
    db,
    CONTRACTS_TABLE,
    orgId,
    rows.map((row, i) => {
      const customer = customers[i]!;
      return { index: row.index, values: customer instanceof AppError ? customer : contractValues(row.input, customer) };
    }),
  );
}

export async function patchContract(db: Db, orgId: string, ref: string, patch: ContractPatch): Promise<PatchOutcome> {
  const [customer] = await resolveCustomerReferences(db, orgId, [patch], false);
  if (customer instanceof AppError) throw customer;
  return patchRecord(db, CONTRACTS_TABLE, orgId, ref, contractValues(patch, customer ?? null));
}

/** Soft-deletes the contract; its invoices stay (they were issued) and keep pointing at it. */
export const deleteContract = (db: Db, orgId: string, ref: string) => softDeleteRecord(db, CONTRACTS_TABLE, orgId, ref);

/** How an invoice names its contract. */
interface ContractReference {
  contract_id?: string | null;
  contract_external_id?: string | null;
}

/** The contract each reference names (id and customer), or why it cannot be used; null where
 * none is named (an explicit null clears it). */
export async function resolveContractReferences(
  db: Db,
  orgId: string,
  refs: ContractReference[],
): Promise<({ contract_id: string | null; customer_id: string | null } | AppError | undefined)[]> {
  const { byId, byExternal } = await findNamed<{ id: string; external_id: string | null; customer_id: string }>(
    db,
    'contracts',
    orgId,
    {
      ids: refs.flatMap((r) => (r.contract_id ? [r.contract_id] : [])),
      externalIds: refs.flatMap((r) => (r.contract_external_id ? [r.contract_external_id] : [])),
    },
    sql`customer_id`,
  );
  return refs.map((ref) => {
    if (ref.contract_id === undefined && ref.contract_external_id === undefined) return undefined;
    if (!ref.contract_id && !ref.contract_external_id) return { contract_id: null, customer_id: null };
    const named = ref.contract_id ? byId.get(ref.contract_id) : undefined;
    const namedExternally = ref.contract_external_id ? byExternal.get(ref.contract_external_id) : undefined;
    if (ref.contract_id && !named)
      return new AppError('unprocessable', `contract_id "${ref.contract_id}" is not a contract of this organisation`);
    if (ref.contract_external_id && !namedExternally) {
      return new AppError('unprocessable', `contract_external_id "${ref.contract_external_id}" is not a contract of this organisation`);
    }
    if (named && namedExternally && named.id !== namedExternally.id) {
      return new AppError('unprocessable', 'contract_id and contract_external_id name different contracts');
    }
    const contract = (named ?? namedExternally)!;
    return { contract_id: contract.id, customer_id: contract.customer_id };
  });
}
