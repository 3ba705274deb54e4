// Contracts as the API shows them, with their annualised `arr` (README "ARR data"), always scoped
// to one organisation.
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { andAll, idOrExternal, isoTime, newestFirst } from '../../db/keyset.ts';
import { notFound } from '../../lib/errors.ts';
import { decodeCursor } from '../../lib/pagination.ts';

export interface ContractRow {
  id: string;
  external_id: string | null;
  customer_id: string;
  name: string;
  status: string;
  start_date: string;
  end_date: string | null;
  auto_renew: boolean;
  billing_interval: string;
  amount: string | number;
  currency: string;
  seats: number | null;
  arr: string | number;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  sort_value: string;
}

const keyset = newestFirst('ct');

function selectContracts(orgId: string, where: SQL[]): SQL {
  return sql`
    select ct.id, ct.external_id, ct.customer_id, ct.name, ct.status, ct.start_date::text as start_date, ct.end_date::text as end_date,
           ct.auto_renew, ct.billing_interval, ct.amount, ct.currency, ct.seats,
           revintel_contract_arr(ct.billing_interval, ct.amount) as arr, ct.metadata,
           ${isoTime(sql`ct.created_at`)} as created_at, ${isoTime(sql`ct.updated_at`)} as updated_at, ${isoTime(sql`ct.deleted_at`)} as deleted_at,
           ${keyset.value} as sort_value
    from contracts ct
    where ct.org_id = ${orgId} ${andAll(where)}`;
}

export interface ContractFilters {
  customerId?: string;
  status?: string;
  endingBefore?: string;
  endingAfter?: string;
  updatedSince?: string;
  includeDeleted?: boolean;
}

export async function listContracts(db: Db, input: { orgId: string; filters: ContractFilters; limit: number; cursor?: string }): Promise<ContractRow[]> {
  const { filters } = input;
  const where: SQL[] = [];
  if (!filters.includeDeleted) where.push(sql`ct.deleted_at is null`);
  if (filters.customerId) where.push(sql`ct.customer_id = ${filters.customerId}`);
  if (filters.status) where.push(sql`ct.status = ${filters.status}`);
  if (filters.endingBefore) where.push(sql`ct.end_date < ${filters.endingBefore}::date`);
  if (filters.endingAfter) where.push(sql`ct.end_date > ${filters.endingAfter}::date`);
  if (filters.updatedSince) where.push(sql`ct.updated_at >= ${filters.updatedSince}::timestamptz`);
  if (input.cursor) {
    const position = decodeCursor(input.cursor, 'created_at');
    where.push(keyset.after(position.value, position.id));
  }
  return rowsOf<ContractRow>(await db.execute(sql`${selectContracts(input.orgId, where)} order by ${keyset.order} limit ${input.limit + 1}`));
}

export async function getContract(db: Db, orgId: string, ref: string): Promise<ContractRow> {
  const match = idOrExternal('ct', ref);
  const [row] = rowsOf<ContractRow>(await db.execute(selectContracts(orgId, [match, sql`ct.deleted_at is null`])));
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
    arr: Number(row.arr),
    metadata: row.metadata,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.deleted_at ? { deleted_at: row.deleted_at } : {}),
  };
}
