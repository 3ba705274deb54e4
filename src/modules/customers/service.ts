// Customers as the API shows them: with their derived values (README "ARR data"), computed in the
// query by the SQL functions of migration 0005 for the day the caller names, always scoped to one
// organisation.
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import type { Csm, CustomerStatus } from '../../db/schema/index.ts';
import { notFound } from '../../lib/errors.ts';
import { andAll, idOrExternal, isoTime, newestFirst } from '../../db/keyset.ts';
import { decodeCursor, type CursorValue } from '../../lib/pagination.ts';
import type { CustomerSort } from './model.ts';

export interface CustomerRow {
  id: string;
  external_id: string | null;
  name: string;
  domain: string | null;
  email: string | null;
  status: CustomerStatus;
  segment: string | null;
  country: string | null;
  currency: string;
  csm: Csm | null;
  metadata: Record<string, unknown>;
  arr: string | number;
  mrr: string | number;
  renewal_date: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** The sort key at full database precision, for the cursor. */
  sort_value: string | number | null;
}

export interface CustomerFilters {
  status?: CustomerStatus;
  segment?: string;
  csmEmail?: string;
  q?: string;
  updatedSince?: string;
  renewingBefore?: string;
  includeDeleted?: boolean;
}

/** `%` and `_` in a search are letters, not wildcards. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The customer with its derived values for `today`; `where` narrows it, `tail` may order and limit
 * it (on the customers' own columns, so an index is walked and the derived values are computed for
 * the rows of the page only). */
function customersWithDerived(orgId: string, today: string, where: SQL[], extra: SQL = sql``, tail: SQL = sql``): SQL {
  return sql`
    select ${extra} c.id, c.external_id, c.name, c.domain, c.email, c.status, c.segment, c.country, c.currency, c.csm, c.metadata,
           coalesce(d.arr, 0) as arr, revintel_mrr(coalesce(d.arr, 0)) as mrr, d.renewal_date::text as renewal_date,
           ${isoTime(sql`c.created_at`)} as created_at, ${isoTime(sql`c.updated_at`)} as updated_at, ${isoTime(sql`c.deleted_at`)} as deleted_at,
           c.created_at::text as created_at_exact
    from customers c
    left join lateral (
      select sum(revintel_contract_arr(ct.billing_interval, ct.amount))::bigint as arr,
             min(ct.end_date) filter (where ct.end_date is not null) as renewal_date
      from contracts ct
      where ct.org_id = c.org_id and ct.customer_id = c.id and ct.deleted_at is null
        and revintel_contract_active_on(ct.status, ct.start_date, ct.end_date, ${today}::date)
    ) d on true
    where c.org_id = ${orgId} ${andAll(where)}
    ${tail}`;
}

export interface ListCustomersInput {
  orgId: string;
  today: string;
  filters: CustomerFilters;
  sort: CustomerSort;
  limit: number;
  cursor?: string;
}

/** One page (limit + 1 rows: the extra one says whether there is more), in a stable order. */
export async function listCustomers(db: Db, input: ListCustomersInput): Promise<CustomerRow[]> {
  const { filters } = input;
  const where: SQL[] = [];
  if (!filters.includeDeleted) where.push(sql`c.deleted_at is null`);
  if (filters.status) where.push(sql`c.status = ${filters.status}`);
  if (filters.segment) where.push(sql`c.segment = ${filters.segment}`);
  if (filters.csmEmail) where.push(sql`lower(c.csm->>'email') = lower(${filters.csmEmail})`);
  if (filters.q) {
    const pattern = likePattern(filters.q);
    where.push(sql`(c.name ilike ${pattern} or c.domain ilike ${pattern} or c.email ilike ${pattern})`);
  }
  if (filters.updatedSince) where.push(sql`c.updated_at >= ${filters.updatedSince}::timestamptz`);

  // The sort key, and how a cursor's position continues the walk: newest first by creation; names
  // A to Z; largest ARR first. Ties are broken by id, in the sort's direction. Sorts on the
  // customers' own columns order and limit the customers themselves (walking an index; the orders
  // match the indexes' NULLS LAST); a sort or filter on a derived value needs every customer's.
  const position = input.cursor ? decodeCursor(input.cursor, input.sort) : null;
  type Keyset = { value: SQL; order: SQL; after: (value: CursorValue, id: string) => SQL };
  const onColumns: Partial<Record<CustomerSort, Keyset>> = {
    created_at: newestFirst('c'),
    name: {
      value: sql`c.name`,
      order: sql`c.name asc, c.id asc`,
      after: (value, id) => sql`(c.name, c.id) > (${value}, ${id})`,
    },
  };
  const limit = input.limit + 1;
  const direct = onColumns[input.sort];
  if (direct && !filters.renewingBefore) {
    if (position) where.push(direct.after(position.value, position.id));
    const query = customersWithDerived(input.orgId, input.today, where, sql`${direct.value} as sort_value,`, sql`order by ${direct.order} limit ${limit}`);
    return rowsOf<CustomerRow>(await db.execute(query));
  }

  const onDerived: Record<CustomerSort, Keyset> = {
    created_at: {
      value: sql`x.created_at_exact`,
      order: sql`x.created_at_exact::timestamptz desc, x.id desc`,
      after: (value, id) => sql`(x.created_at_exact::timestamptz, x.id) < (${value}::timestamptz, ${id})`,
    },
    name: {
      value: sql`x.name`,
      order: sql`x.name asc, x.id asc`,
      after: (value, id) => sql`(x.name, x.id) > (${value}, ${id})`,
    },
    arr: {
      value: sql`x.arr`,
      order: sql`x.arr desc, x.id desc`,
      after: (value, id) => sql`(x.arr, x.id) < (${value}::bigint, ${id})`,
    },
  };
  const sorting = onDerived[input.sort];
  const outer: SQL[] = [];
  if (filters.renewingBefore) outer.push(sql`x.renewal_date is not null and x.renewal_date::date < ${filters.renewingBefore}::date`);
  if (position) outer.push(sorting.after(position.value, position.id));
  const query = sql`
    select x.*, ${sorting.value} as sort_value
    from (${customersWithDerived(input.orgId, input.today, where)}) x
    ${outer.length ? sql`where ${sql.join(outer, sql` and `)}` : sql``}
    order by ${sorting.order}
    limit ${limit}`;
  return rowsOf<CustomerRow>(await db.execute(query));
}

/** By id, or by `ext:<external_id>`; deleted customers are not found. */
export async function getCustomer(db: Db, orgId: string, ref: string, today: string): Promise<CustomerRow> {
  const match = idOrExternal('c', ref);
  const [row] = rowsOf<CustomerRow>(await db.execute(customersWithDerived(orgId, today, [match, sql`c.deleted_at is null`])));
  if (!row) throw notFound(`Customer ${ref}`);
  return row;
}

/** The API's view of a customer (SPEC §5). */
export function presentCustomer(row: CustomerRow) {
  return {
    id: row.id,
    external_id: row.external_id,
    name: row.name,
    domain: row.domain,
    email: row.email,
    status: row.status,
    segment: row.segment,
    country: row.country,
    currency: row.currency,
    csm: row.csm,
    arr: Number(row.arr),
    mrr: Number(row.mrr),
    renewal_date: row.renewal_date,
    churn_risk: null as string | null, // the churn predictions issue fills this
    metadata: row.metadata,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.deleted_at ? { deleted_at: row.deleted_at } : {}),
  };
}
