// An organisation's ARR data as it stood on a past day, rebuilt from business dates: contracts from
// their revision log, cancellations from cancelled_at, churn from churned_at (docs/arr-data.md "Point in
// time"). The rules live in SQL (migration 0015: revintel_contracts_at, revintel_customers_at), so
// the features of the predictions can join them set-wise; these are the typed doors to them.
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';
import type { BillingInterval, ContractStatus } from '../../db/schema/index.ts';

/** A contract on `day`: the terms of its revision holding then, nothing dated after it. */
export interface ContractAt {
  contract_id: string;
  customer_id: string;
  revision: number;
  valid_from: string;
  /** What could be seen that day: `cancelled` only once the notice was given, `ended` once it
   * stopped counting, else `active` (or `draft`). */
  status: ContractStatus;
  start_date: string;
  end_date: string | null;
  auto_renew: boolean;
  billing_interval: BillingInterval;
  amount: number;
  currency: string;
  seats: number | null;
  /** Null while the cancellation is not known yet. */
  cancelled_at: string | null;
  arr: number;
  /** Whether it counted that day (non-draft, started, not past its end or its stop). */
  counted: boolean;
}

export interface CustomerAt {
  customer_id: string;
  churned: boolean;
  churned_at: string | null;
  contracts_counted: number;
  arr: number;
}

/** The set of contracts on `day`, as a FROM item for larger queries (alias it). */
export const contractsAtSql = (orgId: string, day: string): SQL => sql`revintel_contracts_at(${orgId}, ${day}::date)`;

/** The set of customers on `day`, as a FROM item for larger queries (alias it). */
export const customersAtSql = (orgId: string, day: string): SQL => sql`revintel_customers_at(${orgId}, ${day}::date)`;

/** Dates as YYYY-MM-DD text and int8 as numbers, the same on both drivers. */
export async function contractsAt(db: Db, input: { orgId: string; day: string }): Promise<ContractAt[]> {
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select k.contract_id, k.customer_id, k.revision, k.valid_from::text as valid_from, k.status, k.start_date::text as start_date,
               k.end_date::text as end_date, k.auto_renew, k.billing_interval, k.amount, k.currency, k.seats,
               k.cancelled_at::text as cancelled_at, k.arr, k.counted
        from ${contractsAtSql(input.orgId, input.day)} k
        order by k.customer_id, k.start_date, k.contract_id`,
  );
  return rows.map((row) => ({ ...row, amount: Number(row.amount), arr: Number(row.arr) }) as ContractAt);
}

export async function customersAt(db: Db, input: { orgId: string; day: string }): Promise<CustomerAt[]> {
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select c.customer_id, c.churned, c.churned_at::text as churned_at, c.contracts_counted, c.arr
        from ${customersAtSql(input.orgId, input.day)} c
        order by c.customer_id`,
  );
  return rows.map((row) => ({ ...row, arr: Number(row.arr) }) as CustomerAt);
}
