// The ARR history (GET /api/cfo/arr, `revintel arr`; definitions in docs/cfo.md): per calendar
// month and currency the opening ARR, its movements, the closing ARR and the trailing-twelve-month
// retention, from one set-wise query over the organisation's contract revisions.
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';
import { withoutJit } from '../../db/transaction.ts';
import { currentMonthSql, stepsSql } from './steps.ts';
import { monthIndex, monthOf, type Month } from './months.ts';
import { convertExact, roundExact } from './currencies.ts';
import { ratesFor, type MissingRate } from './fx.ts';

export interface ArrMonth {
  month: Month;
  start_arr: number;
  new: number;
  reactivation: number;
  expansion: number;
  contraction: number;
  churn: number;
  end_arr: number;
  customers_start: number;
  customers_end: number;
  new_customers: number;
  reactivated_customers: number;
  churned_customers: number;
  /** The closing ARR twelve months before, of the customers then: the base of the two ratios. */
  arr_12m_ago: number;
  /** Those customers' ARR now, each capped at what it was (GRR's numerator). */
  retained_arr_capped: number;
  /** Those customers' ARR now (NRR's numerator). */
  retained_arr: number;
  grr_12m: number | null;
  nrr_12m: number | null;
  /** The month under way: its close is today's. */
  partial: boolean;
}

export interface ArrSeries {
  currency: string;
  months: ArrMonth[];
}

export interface ArrHistory {
  from: Month;
  to: Month;
  as_of: string;
  /** What was asked: every currency apart, one, or the reporting currency. */
  currency: string;
  reporting_currency: string | null;
  /** The figures are in the reporting currency, each month at its own rate. */
  converted: boolean;
  /** Rates a conversion asked for lacked (then the series stay per currency). */
  missing_rates: MissingRate[];
  series: ArrSeries[];
}

/** Figures summed per currency and month from the customers' steps. */
export interface MonthSums {
  kind: 'movement' | 'retention';
  currency: string;
  k: number;
  new: number;
  reactivation: number;
  expansion: number;
  contraction: number;
  churn: number;
  new_customers: number;
  reactivated_customers: number;
  churned_customers: number;
  /** Customers with ARR after the month less before it. */
  customers_net: number;
  /** Changes, from this month on, of the retained ARR (NRR's and GRR's numerators). */
  retained: number;
  retained_capped: number;
}

/** The sums of a month (stored-sums.ts stores these per customer and in total). */
export const SUM_FIELDS = [
  'new',
  'reactivation',
  'expansion',
  'contraction',
  'churn',
  'new_customers',
  'reactivated_customers',
  'churned_customers',
  'customers_net',
  'retained',
  'retained_capped',
] as const;

const NUMERIC_FIELDS = ['k', ...SUM_FIELDS] as const;

/**
 * Every currency's (or one currency's) month sums over the organisation's whole history.
 *
 * Movements: a customer whose ARR goes from 0 is new the first time (its first step) and
 * reactivated after; to 0 is churn; up is expansion, down contraction. Retention: for each pair of
 * the customer's positive ARR runs (a, months [a0, a1)) and (b, [b0, b1)), the months k with k − 12
 * in the first and k in the second form [max(a0 + 12, b0), min(a1 + 12, b1)); there its ARR 12
 * months before was a and is now b. Those runs are few per customer, so the pairs are too.
 */
export async function monthSums(db: Db, input: { orgId: string; today: string; currency?: string }): Promise<MonthSums[]> {
  return parseSums(await withoutJit(db, (tx) => queryRows<Record<string, unknown>>(tx, monthSumsSql(input))));
}

/** Month sums rows as read (bigint sums come as strings). */
export function parseSums(rows: Record<string, unknown>[]): MonthSums[] {
  return rows.map((row) => {
    const out = { ...row } as Record<string, unknown>;
    for (const field of NUMERIC_FIELDS) out[field] = Number(row[field]);
    return out as unknown as MonthSums;
  });
}

/** What monthSumsSql sums: the whole organisation per currency and month, or (`byCustomer`) each
 * customer's share apart, of every customer or of those `customers` (a query of their ids) lists. */
export interface SumsScope {
  byCustomer?: boolean;
  customers?: SQL;
}

export function monthSumsSql(input: { orgId: string; today: string; currency?: string }, scope: SumsScope = {}): SQL {
  const current = currentMonthSql(input.today);
  const by = scope.byCustomer ? sql`customer_id, ` : sql``;
  return sql`with ${stepsSql(input.orgId, input.today, input.currency, scope.customers)},
    moves as (
      -- One window pass over the steps, in their order: the movements and the runs of constant ARR.
      select customer_id, currency, k, arr_after - delta as before, arr_after as after,
             count(*) filter (where arr_after = delta) over w as starts,
             coalesce(lead(k) over w, ${current} + 1) as until_k
      from steps
      window w as (partition by customer_id, currency order by k)
    ),
    positive as (select customer_id, currency, k as from_k, until_k, after as arr from moves where after > 0),
    pairs as (
      select a.customer_id, a.currency, greatest(a.from_k + 12, b.from_k) as lo, least(a.until_k + 12, b.until_k) as hi, b.arr as retained, least(a.arr, b.arr) as capped
      from positive a join positive b on b.customer_id = a.customer_id and b.currency = a.currency
      where greatest(a.from_k + 12, b.from_k) < least(a.until_k + 12, b.until_k)
    ),
    retention as (
      select customer_id, currency, lo as k, retained, capped from pairs
      union all
      select customer_id, currency, hi, -retained, -capped from pairs where hi <= ${current}
    )
    select 'movement' as kind, ${by}currency, k,
           coalesce(sum(after) filter (where before = 0 and starts = 1), 0)::bigint as new,
           coalesce(sum(after) filter (where before = 0 and starts > 1), 0)::bigint as reactivation,
           coalesce(sum(after - before) filter (where before > 0 and after > before), 0)::bigint as expansion,
           coalesce(sum(before - after) filter (where after > 0 and after < before), 0)::bigint as contraction,
           coalesce(sum(before) filter (where after = 0), 0)::bigint as churn,
           (count(*) filter (where before = 0 and starts = 1))::int as new_customers,
           (count(*) filter (where before = 0 and starts > 1))::int as reactivated_customers,
           (count(*) filter (where after = 0))::int as churned_customers,
           (count(*) filter (where before = 0) - count(*) filter (where after = 0))::int as customers_net,
           0::bigint as retained, 0::bigint as retained_capped
    from moves group by ${by}currency, k
    union all
    select 'retention', ${by}currency, k, 0, 0, 0, 0, 0, 0, 0, 0, 0, sum(retained)::bigint, sum(capped)::bigint
    from retention group by ${by}currency, k${
      scope.byCustomer
        ? sql``
        : sql`
    order by 2, 3`
    }`;
}

/** Reads an organisation's month sums: straight from the database, or through a keepSums memo. */
export type SumsReader = (db: Db, input: { orgId: string; today: string; currency?: string }) => Promise<MonthSums[]>;

/**
 * Month sums kept per organisation, data version, day and currency, the `keep` most recently read:
 * a board deck or a dashboard asks for the same history again and again, and the whole history is
 * one query over every revision of the organisation (bench/cfo.ts). Any write to its customers,
 * contracts or invoices bumps the data version in its own transaction (migration 0013), so a kept
 * answer is never served after a change, on any instance; the day is in the key because closes
 * move with it.
 */
export function keepSums(keep = 32): SumsReader {
  // Promises, so that a read asked for while the same one runs waits for it rather than running it
  // again (the forecast starts its history read early, beside its features read).
  const kept = new Map<string, Promise<MonthSums[]>>();
  return async (db, input) => {
    const [row] = await queryRows<{ version: string | number }>(
      db,
      sql`select coalesce((select version from org_data_versions where org_id = ${input.orgId}), 0) as version`,
    );
    const key = `${input.orgId} ${row?.version ?? 0} ${input.today} ${input.currency ?? ''}`;
    const hit = kept.get(key);
    if (hit) {
      kept.delete(key);
      kept.set(key, hit);
      return hit;
    }
    const sums = monthSums(db, input);
    kept.set(key, sums);
    if (kept.size > keep) kept.delete(kept.keys().next().value!);
    // A failed read is not kept: the next asks again.
    sums.catch(() => {
      if (kept.get(key) === sums) kept.delete(key);
    });
    return sums;
  };
}

const ratio = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 1e6) / 1e6 : null);

/** One currency's months `from`..`to` from its month sums (every month of its history, in order). */
export function seriesOf(currency: string, sums: MonthSums[], range: { from: Month; to: Month; today: string }): ArrSeries {
  const fromK = monthIndex(range.from);
  const toK = monthIndex(range.to);
  const currentK = monthIndex(range.today.slice(0, 7));
  const firstK = Math.min(fromK - 12, ...sums.map((s) => s.k));
  const span = toK - firstK + 1;
  const endArr = new Array<number>(span).fill(0);
  const customers = new Array<number>(span).fill(0);
  const retained = new Array<number>(span).fill(0);
  const capped = new Array<number>(span).fill(0);
  const movement = new Map<number, MonthSums>();
  for (const s of sums) {
    if (s.k > toK) continue;
    const i = s.k - firstK;
    if (s.kind === 'movement') {
      movement.set(s.k, s);
      endArr[i]! += s.new + s.reactivation + s.expansion - s.contraction - s.churn;
      customers[i]! += s.customers_net;
    } else {
      retained[i]! += s.retained;
      capped[i]! += s.retained_capped;
    }
  }
  for (let i = 1; i < span; i++) {
    endArr[i]! += endArr[i - 1]!;
    customers[i]! += customers[i - 1]!;
    retained[i]! += retained[i - 1]!;
    capped[i]! += capped[i - 1]!;
  }
  const months: ArrMonth[] = [];
  for (let k = fromK; k <= toK; k++) {
    const i = k - firstK;
    const m = movement.get(k);
    const base = endArr[i - 12] ?? 0;
    months.push({
      month: monthOf(k),
      start_arr: endArr[i - 1] ?? 0,
      new: m?.new ?? 0,
      reactivation: m?.reactivation ?? 0,
      expansion: m?.expansion ?? 0,
      contraction: m?.contraction ?? 0,
      churn: m?.churn ?? 0,
      end_arr: endArr[i]!,
      customers_start: customers[i - 1] ?? 0,
      customers_end: customers[i]!,
      new_customers: m?.new_customers ?? 0,
      reactivated_customers: m?.reactivated_customers ?? 0,
      churned_customers: m?.churned_customers ?? 0,
      arr_12m_ago: base,
      retained_arr_capped: capped[i]!,
      retained_arr: retained[i]!,
      grr_12m: ratio(capped[i]!, base),
      nrr_12m: ratio(retained[i]!, base),
      partial: k === currentK,
    });
  }
  return { currency, months };
}

/** Whether a month of a series holds anything (a currency with nothing then needs no rate). */
const holdsArr = (m: ArrMonth) => m.start_arr !== 0 || m.end_arr !== 0 || m.arr_12m_ago !== 0 || m.churn !== 0;

export async function arrHistory(
  db: Db,
  input: { orgId: string; from: Month; to: Month; today: string; currency?: string; reportingCurrency: string | null },
  readSums: SumsReader = monthSums,
): Promise<ArrHistory> {
  const wanted = input.currency === 'reporting' ? undefined : input.currency;
  const sums = await readSums(db, { orgId: input.orgId, today: input.today, currency: wanted });
  const currencies = [...new Set(sums.map((s) => s.currency))].sort();
  const series = currencies.map((c) =>
    seriesOf(
      c,
      sums.filter((s) => s.currency === c),
      input,
    ),
  );
  const answer: ArrHistory = {
    from: input.from,
    to: input.to,
    as_of: input.today,
    currency: input.currency ?? 'all',
    reporting_currency: input.reportingCurrency,
    converted: false,
    missing_rates: [],
    series,
  };
  if (input.currency !== 'reporting' || !input.reportingCurrency) return answer;
  const reporting = input.reportingCurrency;
  const needed = series.flatMap((s) =>
    s.currency === reporting ? [] : s.months.filter(holdsArr).map((m) => ({ currency: s.currency, month: m.month })),
  );
  const { rates, missing } = await ratesFor(db, { orgId: input.orgId, quote: reporting, needed });
  if (missing.length > 0) return { ...answer, missing_rates: missing };
  return { ...answer, converted: true, series: [convertSeries(series, reporting, input, rates)] };
}

const CHAIN = ['new', 'reactivation', 'expansion', 'contraction', 'churn'] as const;
const SIGN = { new: 1n, reactivation: 1n, expansion: 1n, contraction: -1n, churn: -1n } as const;

/**
 * The series in the reporting currency, each month at its own rate (constant currency within the
 * month, so retention ratios carry no FX effect). Exact sums are rounded once per month along the
 * chain start → +new → +reactivation → +expansion → −contraction → −churn = end: each movement is
 * the difference of two rounded partial sums, so the identity holds to the minor unit and start
 * and end are each the exact figure rounded.
 */
function convertSeries(series: ArrSeries[], reporting: string, range: { from: Month; to: Month }, rates: Map<string, bigint>): ArrSeries {
  const months: ArrMonth[] = [];
  const one = 10n ** 12n;
  for (let k = monthIndex(range.from); k <= monthIndex(range.to); k++) {
    const month = monthOf(k);
    const exact = { start: 0n, new: 0n, reactivation: 0n, expansion: 0n, contraction: 0n, churn: 0n, base: 0n, retained: 0n, capped: 0n };
    const counts = { customers_start: 0, customers_end: 0, new_customers: 0, reactivated_customers: 0, churned_customers: 0 };
    for (const s of series) {
      const m = s.months[k - monthIndex(range.from)]!;
      const rate = s.currency === reporting ? one : rates.get(`${s.currency} ${month}`);
      if (rate !== undefined) {
        const at = (minor: number) => convertExact(minor, rate, s.currency, reporting);
        exact.start += at(m.start_arr);
        for (const field of CHAIN) exact[field] += at(m[field]);
        exact.base += at(m.arr_12m_ago);
        exact.retained += at(m.retained_arr);
        exact.capped += at(m.retained_arr_capped);
      }
      for (const field of Object.keys(counts) as (keyof typeof counts)[]) counts[field] += m[field];
    }
    let partial = exact.start;
    let rounded = roundExact(partial);
    const start = rounded;
    const moved = {} as Record<(typeof CHAIN)[number], number>;
    for (const field of CHAIN) {
      partial += SIGN[field] * exact[field];
      const next = roundExact(partial);
      moved[field] = Number(SIGN[field]) * (next - rounded);
      rounded = next;
    }
    const base = roundExact(exact.base);
    const retained = roundExact(exact.retained);
    const capped = roundExact(exact.capped);
    months.push({
      month,
      start_arr: start,
      ...moved,
      end_arr: rounded,
      ...counts,
      arr_12m_ago: base,
      retained_arr_capped: capped,
      retained_arr: retained,
      grr_12m: ratio(Number(exact.capped), Number(exact.base)),
      nrr_12m: ratio(Number(exact.retained), Number(exact.base)),
      partial: series[0]?.months[k - monthIndex(range.from)]?.partial ?? false,
    });
  }
  return { currency: reporting, months };
}
