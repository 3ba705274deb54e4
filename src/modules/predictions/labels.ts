// What happened: each customer's churn days, and the labelled snapshots a model learns from.
//
// A customer churns on day d when it is marked churned with churned_at = d, or when d is the day
// after its last active contract's end and no contract becomes active within the grace period after
// (recognised at period end, as ChartMogul does). A churn day is known only once its grace period
// has passed. A snapshot (customer, t) is a customer active at t with the features of t
// (features.ts); its label is whether it churns within (t, t + horizon], so it is known only once
// t + horizon + grace ≤ today. Labels read today's knowledge — they are outcomes; features never do.
import { queryText, type Db } from '../../db/client.ts';
import type { FeatureRow } from './features.ts';
import { addDays, type Snapshot } from './training.ts';

const CHURN_DAYS_SQL = `
  with spans as (
    select customer_id, start_date as s,
      revintel_contract_service_end(status, end_date, cancelled_at) as e
    from contracts
    where org_id = $1 and deleted_at is null and status <> 'draft' and ($4::text[] is null or customer_id = any($4::text[]))
  ),
  period_end as (
    select distinct p.customer_id, p.e + 1 as d from spans p
    where p.e is not null and p.e + 1 + $2::int <= $3::date
      and not exists (
        select 1 from spans x
        where x.customer_id = p.customer_id and x.s <= p.e + 1 + $2::int and (x.e is null or x.e >= p.e + 1))
  ),
  marked as (
    select id as customer_id, churned_at as d from customers
    where org_id = $1 and deleted_at is null and churned_at is not null and churned_at <= $3::date and ($4::text[] is null or id = any($4::text[]))
  )
  select customer_id, d::text as day from marked
  union
  -- A period end near an explicit mark is the same churn, not a second one.
  select p.customer_id, p.d::text from period_end p
  where not exists (select 1 from marked m where m.customer_id = p.customer_id and abs(m.d - p.d) <= $2::int)
  order by 1, 2`;

/** Every known churn day of an organisation's customers (those named, or all), by customer, ascending. */
export async function churnDays(
  db: Db,
  args: { orgId: string; today: string; graceDays: number; customerIds?: string[] },
): Promise<Map<string, string[]>> {
  const rows = await queryText<{ customer_id: string; day: string }>(db, CHURN_DAYS_SQL, [
    args.orgId,
    args.graceDays,
    args.today,
    args.customerIds ?? null,
  ]);
  const byCustomer = new Map<string, string[]>();
  for (const row of rows) {
    const days = byCustomer.get(row.customer_id);
    if (days) days.push(row.day);
    else byCustomer.set(row.customer_id, [row.day]);
  }
  return byCustomer;
}

export interface SnapshotQuery {
  orgId: string;
  today: string;
  horizonDays: number;
  graceDays: number;
  /** How far back snapshots go (TRAIN_LOOKBACK_DAYS). */
  lookbackDays: number;
  /** Days between snapshots. */
  everyDays?: number;
  /** The latest snapshot day (default: the last whose label is known). */
  until?: string;
}

/** The snapshot days, newest first: every `everyDays` back from the last labelled day. */
export function snapshotDays(query: Omit<SnapshotQuery, 'orgId'>): string[] {
  const last = query.until ?? addDays(query.today, -(query.horizonDays + query.graceDays));
  const first = addDays(query.today, -query.lookbackDays);
  const days: string[] = [];
  for (let t = last; t >= first; t = addDays(t, -(query.everyDays ?? 30))) days.push(t);
  return days;
}

/** A customer's features at `t`, labelled by whether one of its churn days falls in (t, t + horizon]. */
export function labelled(
  row: Pick<FeatureRow, 'customerId' | 'values' | 'noticeKnown'>,
  t: string,
  churn: readonly string[] | undefined,
  horizonDays: number,
): Snapshot {
  const end = addDays(t, horizonDays);
  const churnDay = churn?.find((d) => d > t && d <= end) ?? null;
  return { customerId: row.customerId, t, values: row.values, outcome: churnDay ? 1 : 0, churnDay, noticeKnown: row.noticeKnown };
}
