// Cohorts (GET /api/cfo/cohorts; docs/cfo.md "Cohorts"): customers grouped by the first month whose
// close shows them with ARR, and at each month k after it the cohort's ARR (net: expansion and
// reactivation included) and how many of its customers still have ARR, against month 0.
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';
import { withoutJit } from '../../db/transaction.ts';
import { currentMonthSql, stepsSql } from './steps.ts';
import { monthIndex, monthOf, type Month } from './months.ts';

export interface CohortAge {
  /** Months since the cohort's first month (0: that month). */
  k: number;
  month: Month;
  arr: number;
  customers: number;
  /** arr ÷ the cohort's ARR at month 0. */
  net_arr_retention: number;
  /** customers ÷ the cohort's size. */
  logo_retention: number;
}

export interface Cohort {
  currency: string;
  month: Month;
  customers: number;
  start_arr: number;
  ages: CohortAge[];
}

export interface Cohorts {
  from: Month;
  to: Month;
  as_of: string;
  currency: string;
  cohorts: Cohort[];
}

const ratio = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 1e6) / 1e6 : 0);

export async function cohorts(
  db: Db,
  input: { orgId: string; from: Month; to: Month; today: string; currency?: string },
): Promise<Cohorts> {
  const current = currentMonthSql(input.today);
  const rows = await withoutJit(db, (tx) =>
    queryRows<{ currency: string; cohort: number; age: number; arr: string | number; customers: number }>(
      tx,
      sql`with ${stepsSql(input.orgId, input.today, input.currency)},
    runs as (
      select customer_id, currency, k as from_k, coalesce(lead(k) over (partition by customer_id, currency order by k), ${current} + 1) as until_k, arr_after as arr
      from steps
    ),
    first_month as (
      select customer_id, currency, min(k) as cohort from steps group by customer_id, currency
      having min(k) between ${monthIndex(input.from)} and ${monthIndex(input.to)}
    ),
    cohort_changes as (
      select r.currency, f.cohort, r.from_k - f.cohort as age, r.arr, 1 as customers
      from runs r join first_month f on f.customer_id = r.customer_id and f.currency = r.currency where r.arr > 0
      union all
      select r.currency, f.cohort, r.until_k - f.cohort, -r.arr, -1
      from runs r join first_month f on f.customer_id = r.customer_id and f.currency = r.currency where r.arr > 0 and r.until_k <= ${current}
    )
    select currency, cohort, age, sum(arr)::bigint as arr, sum(customers)::int as customers
    from cohort_changes group by currency, cohort, age order by currency, cohort, age`,
    ),
  );
  const currentK = monthIndex(input.today.slice(0, 7));
  const byCohort = new Map<string, { currency: string; cohort: number; changes: Map<number, { arr: number; customers: number }> }>();
  for (const row of rows) {
    const key = `${row.currency} ${row.cohort}`;
    let entry = byCohort.get(key);
    if (!entry) byCohort.set(key, (entry = { currency: row.currency, cohort: Number(row.cohort), changes: new Map() }));
    entry.changes.set(Number(row.age), { arr: Number(row.arr), customers: Number(row.customers) });
  }
  const list: Cohort[] = [];
  for (const { currency, cohort, changes } of byCohort.values()) {
    let arr = 0;
    let customers = 0;
    const ages: CohortAge[] = [];
    for (let k = 0; cohort + k <= currentK; k++) {
      const change = changes.get(k);
      arr += change?.arr ?? 0;
      customers += change?.customers ?? 0;
      ages.push({ k, month: monthOf(cohort + k), arr, customers, net_arr_retention: 0, logo_retention: 0 });
    }
    const base = ages[0]!;
    for (const age of ages) {
      age.net_arr_retention = ratio(age.arr, base.arr);
      age.logo_retention = ratio(age.customers, base.customers);
    }
    list.push({ currency, month: monthOf(cohort), customers: base.customers, start_arr: base.arr, ages });
  }
  return { from: input.from, to: input.to, as_of: input.today, currency: input.currency ?? 'all', cohorts: list };
}
