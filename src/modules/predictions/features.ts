// A customer's churn features at a day t, computed set-wise in SQL for a whole organisation: the same
// statement for today's predictions and for past snapshots. Nothing dated after t is read:
// contracts as their revisions stood at t (revintel_contracts_at, migration 0015), invoices issued
// by t and paid only if paid by t (void and draft ones not at all: when they became so is not
// known), tickets created by t with the intelligence they had when they came in (first_*,
// migration 0016; ticket statuses are not read). Each feature has a stable key, a label a person
// reads, and its value; a customer without invoices or tickets gets neutral values and the source
// is named in `missing`.
import { queryText, type Db } from '../../db/client.ts';
import { withoutJit } from '../../db/transaction.ts';
import { DRIVER_GROUPS, type DriverGroup } from './model.ts';

/** The churn signals that speak of leaving (not an outage or a billing dispute, which a fix ends). */
export const LEAVING_SIGNALS = ['cancellation', 'competitor', 'downgrade', 'refund'] as const;

interface Raw {
  customer_id: string;
  currency: string;
  segment: string | null;
  arr: number;
  arr_monthly: number;
  seats: number;
  arr_before: number;
  seats_before: number;
  counted: number;
  first_start: string | null;
  commitment_end: string | null;
  /** The customer's renewal by the one ARR rule (migration 0030): the earliest service end of a
   * counting contract, and whether it renews then. */
  renewal_date: string | null;
  renewing: boolean | null;
  /** The earliest end_date of a counting contract within the horizon (the renewal features). */
  renewal_due_date: string | null;
  /** The earliest service end of a counting contract that will not renew (notice given). */
  first_end_not_renewing: string | null;
  next_term_end: string | null;
  renewal_no_auto: boolean;
  renewal_auto: boolean;
  notice: boolean;
  last_end: string | null;
  invoices: number;
  overdue_amount: number;
  worst_dpd: number;
  due_365: number;
  late_365: number;
  tickets_total: number;
  t90: number;
  prev90: number;
  urgent90: number;
  negative90: number;
  signals90: number;
}

/** The statement, for a whole organisation or (`filtered`) only the customers in $7: then every
 * source is read through its (org_id, customer_id) index, and a chunk of a recompute or one stale
 * customer costs its own rows, not the organisation's.
 * Two texts rather than `$7 is null or …`: a prepared statement's generic plan would keep the scan
 * of the whole organisation for both. */
const featuresSql = (filtered: boolean) => {
  const only = (column: string) => (filtered ? `and ${column} = any($7::text[])` : '');
  // A chunk's row estimates are poor (the correlated max() of migration 0022): computed once each,
  // its sources are joined as they are rather than aggregated again per customer.
  const contractsAt = (day: string) =>
    filtered
      ? `materialized (select * from revintel_contracts_at($1, ${day}, $7::text[]))`
      : `(select * from revintel_contracts_at($1, ${day}))`;
  const cte = filtered ? 'materialized ' : '';
  return `
  with now_k as ${contractsAt('$2::date')},
  before_k as ${contractsAt('$2::date - 180')},
  cust as ${cte}(
    select c.id, c.currency, c.segment from customers c
    where c.org_id = $1 and (c.deleted_at is null or (c.deleted_at at time zone 'UTC')::date > $2::date)
      and not coalesce(c.churned_at <= $2::date, false)
      ${only('c.id')}
  ),
  k as ${cte}(
    select customer_id,
      min(start_date) filter (where status <> 'draft' and start_date <= $2::date) as first_start,
      coalesce(sum(arr) filter (where counted), 0)::float8 as arr,
      coalesce(sum(arr) filter (where counted and billing_interval = 'month'), 0)::float8 as arr_monthly,
      coalesce(sum(seats) filter (where counted), 0)::float8 as seats,
      count(*) filter (where counted)::int as counted,
      max(end_date) filter (where counted and end_date is not null and billing_interval <> 'month') as commitment_end,
      min(revintel_contract_service_end(status, end_date, cancelled_at)) filter (where counted) as renewal_date,
      min(revintel_contract_service_end(status, end_date, cancelled_at)) filter (where counted and not revintel_contract_renews(status)) as first_end_not_renewing,
      min(end_date) filter (where counted and end_date between $2::date and $2::date + $3::int) as renewal_due_date,
      min(end_date) filter (where counted and billing_interval <> 'month' and end_date >= $2::date) as next_term_end,
      coalesce(bool_or(counted and end_date between $2::date and $2::date + $3::int and not auto_renew), false) as renewal_no_auto,
      coalesce(bool_or(counted and end_date between $2::date and $2::date + $3::int and auto_renew and revintel_contract_renews(status)), false) as renewal_auto,
      coalesce(bool_or(counted and cancelled_at is not null), false) as notice,
      max(coalesce(end_date, cancelled_at)) filter (where not counted and status <> 'draft' and coalesce(end_date, cancelled_at) < $2::date) as last_end
    from now_k group by customer_id
  ),
  b as ${cte}(
    select customer_id, coalesce(sum(arr) filter (where counted), 0)::float8 as arr, coalesce(sum(seats) filter (where counted), 0)::float8 as seats
    from before_k group by customer_id
  ),
  inv as ${cte}(
    select customer_id,
      count(*)::int as invoices,
      coalesce(sum(amount_due) filter (where due_date < $2::date and (paid_day is null or paid_day > $2::date)), 0)::float8 as overdue_amount,
      coalesce(max($2::date - due_date) filter (where due_date < $2::date and (paid_day is null or paid_day > $2::date)), 0)::int as worst_dpd,
      count(*) filter (where due_date > $2::date - 365 and due_date <= $2::date)::int as due_365,
      count(*) filter (where due_date > $2::date - 365 and due_date <= $2::date
                         and ((paid_day <= $2::date and paid_day > due_date) or ((paid_day is null or paid_day > $2::date) and due_date < $2::date)))::int as late_365
    from (
      select customer_id, due_date, amount_due, (paid_at at time zone 'UTC')::date as paid_day
      from invoices
      where org_id = $1 ${only('customer_id')} and deleted_at is null and status not in ('void', 'draft') and (issued_at at time zone 'UTC')::date <= $2::date
    ) i
    group by customer_id
  ),
  tk as ${cte}(
    select customer_id,
      count(*)::int as tickets_total,
      count(*) filter (where day > $2::date - 90)::int as t90,
      count(*) filter (where day > $2::date - 180 and day <= $2::date - 90)::int as prev90,
      count(*) filter (where day > $2::date - 90 and first_urgency in ('high', 'critical'))::int as urgent90,
      count(*) filter (where day > $2::date - 90 and first_sentiment < -0.2)::int as negative90,
      count(*) filter (where day > $2::date - 90 and first_churn_signals ?| $4::text[])::int as signals90
    from (
      select customer_id, (coalesce(source_created_at, created_at) at time zone 'UTC')::date as day, first_urgency, first_sentiment, first_churn_signals
      from tickets where org_id = $1 ${only('customer_id')} and customer_id is not null
    ) t
    where day <= $2::date
    group by customer_id
  )
  select cust.id as customer_id, cust.currency, cust.segment,
    coalesce(k.arr, 0) as arr, coalesce(k.arr_monthly, 0) as arr_monthly, coalesce(k.seats, 0) as seats,
    coalesce(b.arr, 0) as arr_before, coalesce(b.seats, 0) as seats_before, coalesce(k.counted, 0) as counted,
    k.first_start::text as first_start, k.commitment_end::text as commitment_end, k.renewal_date::text as renewal_date,
    revintel_renewing(k.renewal_date, k.first_end_not_renewing) as renewing, k.renewal_due_date::text as renewal_due_date,
    k.first_end_not_renewing::text as first_end_not_renewing, k.next_term_end::text as next_term_end,
    coalesce(k.renewal_no_auto, false) as renewal_no_auto, coalesce(k.renewal_auto, false) as renewal_auto, coalesce(k.notice, false) as notice,
    k.last_end::text as last_end,
    coalesce(inv.invoices, 0) as invoices, coalesce(inv.overdue_amount, 0) as overdue_amount, coalesce(inv.worst_dpd, 0) as worst_dpd,
    coalesce(inv.due_365, 0) as due_365, coalesce(inv.late_365, 0) as late_365,
    coalesce(tk.tickets_total, 0) as tickets_total, coalesce(tk.t90, 0) as t90, coalesce(tk.prev90, 0) as prev90,
    coalesce(tk.urgent90, 0) as urgent90, coalesce(tk.negative90, 0) as negative90, coalesce(tk.signals90, 0) as signals90
  from cust
  join k on k.customer_id = cust.id
  left join b on b.customer_id = cust.id
  left join inv on inv.customer_id = cust.id
  left join tk on tk.customer_id = cust.id
  where k.counted > 0 or ($5::boolean and k.last_end >= $2::date - $6::int)
  order by cust.id`;
};
const FEATURES_SQL = { organisation: featuresSql(false), customers: featuresSql(true) };

/** Days since 1970-01-01 of a YYYY-MM-DD day, by arithmetic (Date.UTC) rather than parsing a string:
 * features read it a few times per customer, and a whole organisation's features per day. */
const epochDay = (day: string) => Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) / 86_400_000;
const days = (from: string, to: string) => Math.round(epochDay(to) - epochDay(from));
const clip = (x: number, low: number, high: number) => Math.min(high, Math.max(low, x));
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
/** "ends today", "ends tomorrow", "ends in 45 days". */
const endsIn = (left: number) => (left === 0 ? 'ends today' : left === 1 ? 'ends tomorrow' : `ends in ${plural(left, 'day')}`);

interface Context {
  raw: Raw;
  day: string;
}

/** The features, in the order models store their weights. `neutral` is the value of a customer
 * about whom the source says nothing; `prior` is the scorecard's weight (logit per unit of value),
 * the fixed points an organisation without churn history is scored by: a renewal without
 * auto-renew, a notice, tickets that speak of leaving and unpaid invoices raise the risk; tenure,
 * commitment, size and growth lower it. */
export const FEATURES: readonly {
  key: string;
  group: DriverGroup;
  neutral: number;
  prior: number;
  value(c: Context): number;
  label(c: Context): string;
}[] = [
  {
    key: 'tenure_years',
    group: 'tenure',
    neutral: 1,
    prior: -0.15,
    value: ({ raw, day }) => (raw.first_start ? clip(days(raw.first_start, day) / 365, 0, 10) : 0),
    label: ({ raw, day }) =>
      raw.first_start ? `Customer for ${(days(raw.first_start, day) / 365).toFixed(1)} years` : 'No contract history',
  },
  {
    key: 'commitment_months_left',
    group: 'renewal',
    neutral: 0,
    prior: -0.05,
    value: ({ raw, day }) => (raw.commitment_end ? clip(days(day, raw.commitment_end) / 30, 0, 36) : 0),
    label: ({ raw, day }) =>
      raw.commitment_end
        ? `Committed for ${plural(Math.round(days(day, raw.commitment_end) / 30), 'more month')}`
        : 'No committed term (monthly or evergreen)',
  },
  {
    key: 'renewal_due_no_autorenew',
    group: 'renewal',
    neutral: 0,
    prior: 1,
    value: ({ raw }) => (raw.renewal_no_auto ? 1 : 0),
    label: ({ raw, day }) => {
      const due = dueDate(raw);
      return raw.renewal_no_auto && due
        ? `Renewal in ${plural(days(day, due), 'day')}, no auto-renew`
        : 'Nothing due to renew without auto-renew';
    },
  },
  {
    key: 'renewal_due_autorenew',
    group: 'renewal',
    neutral: 0,
    prior: 0.2,
    value: ({ raw }) => (raw.renewal_auto ? 1 : 0),
    // A contract with notice given does not renew, whatever its auto-renew flag says.
    label: ({ raw, day }) => {
      const due = dueDate(raw);
      return raw.renewal_auto && due
        ? raw.notice
          ? noticeLabel(raw, day)
          : `Renews automatically in ${plural(days(day, due), 'day')}`
        : 'Nothing due to renew automatically';
    },
  },
  {
    key: 'monthly_billing_share',
    group: 'billing',
    neutral: 0,
    prior: 0.5,
    value: ({ raw }) => (raw.arr > 0 ? raw.arr_monthly / raw.arr : 0),
    label: ({ raw }) => `${Math.round(raw.arr > 0 ? (100 * raw.arr_monthly) / raw.arr : 0)}% of ARR billed monthly`,
  },
  {
    key: 'arr_log',
    group: 'arr_trend',
    neutral: Math.log1p(10_000),
    prior: -0.1,
    value: ({ raw }) => Math.log1p(raw.arr / 100),
    label: ({ raw }) => `ARR ${Math.round(raw.arr / 100).toLocaleString('en-US')} ${raw.currency}`,
  },
  {
    key: 'arr_change_180d',
    group: 'arr_trend',
    neutral: 0,
    prior: -1,
    value: ({ raw }) => (raw.arr_before > 0 ? clip((raw.arr - raw.arr_before) / raw.arr_before, -1, 1) : 0),
    label: ({ raw }) =>
      raw.arr_before > 0 ? `ARR ${signedPercent((raw.arr - raw.arr_before) / raw.arr_before)} over 180 days` : 'ARR new within 180 days',
  },
  {
    key: 'seats_change_180d',
    group: 'seats_trend',
    neutral: 0,
    prior: -0.8,
    value: ({ raw }) => (raw.seats_before > 0 ? clip((raw.seats - raw.seats_before) / raw.seats_before, -1, 1) : 0),
    label: ({ raw }) =>
      raw.seats_before > 0
        ? `Seats ${signedPercent((raw.seats - raw.seats_before) / raw.seats_before)} over 180 days`
        : 'Seats: none recorded 180 days ago',
  },
  {
    key: 'cancellation_notice',
    group: 'cancellation_notice',
    neutral: 0,
    prior: 3,
    value: ({ raw }) => (raw.notice ? 1 : 0),
    label: ({ raw }) => (raw.notice ? 'Cancellation notice given' : 'Contract running, no notice given'),
  },
  {
    key: 'overdue_months_of_revenue',
    group: 'payments',
    neutral: 0,
    prior: 0.3,
    value: ({ raw }) => clip(raw.overdue_amount / Math.max(raw.arr / 12, 1), 0, 12),
    label: ({ raw }) => `Overdue: ${(raw.overdue_amount / Math.max(raw.arr / 12, 1)).toFixed(1)} months of revenue`,
  },
  {
    key: 'worst_months_past_due',
    group: 'payments',
    neutral: 0,
    prior: 0.2,
    value: ({ raw }) => clip(raw.worst_dpd / 30, 0, 12),
    label: ({ raw }) =>
      raw.worst_dpd > 0 ? `Oldest unpaid invoice ${plural(raw.worst_dpd, 'day')} past due` : 'Nothing unpaid past its due date',
  },
  {
    key: 'late_paid_share_365d',
    group: 'payments',
    neutral: 0,
    prior: 0.8,
    value: ({ raw }) => (raw.due_365 > 0 ? raw.late_365 / raw.due_365 : 0),
    label: ({ raw }) => `${raw.late_365} of ${plural(raw.due_365, 'invoice')} due in a year paid late`,
  },
  {
    key: 'tickets_90d',
    group: 'ticket_volume',
    neutral: 0,
    prior: 0.1,
    value: ({ raw }) => Math.log1p(raw.t90),
    label: ({ raw }) => `${plural(raw.t90, 'ticket')} in 90 days`,
  },
  {
    key: 'ticket_trend',
    group: 'ticket_volume',
    neutral: 0,
    prior: 0.3,
    value: ({ raw }) => Math.log1p(raw.t90) - Math.log1p(raw.prev90),
    label: ({ raw }) => `${plural(raw.t90, 'ticket')} in 90 days against ${raw.prev90} in the 90 before`,
  },
  {
    key: 'urgent_tickets_90d',
    group: 'ticket_volume',
    neutral: 0,
    prior: 0.4,
    value: ({ raw }) => Math.log1p(raw.urgent90),
    label: ({ raw }) => `${plural(raw.urgent90, 'urgent ticket')} in 90 days`,
  },
  {
    key: 'negative_ticket_share_90d',
    group: 'ticket_tone',
    neutral: 0,
    prior: 0.8,
    value: ({ raw }) => (raw.t90 > 0 ? raw.negative90 / raw.t90 : 0),
    label: ({ raw }) => `${raw.negative90} of ${plural(raw.t90, 'ticket')} in 90 days negative`,
  },
  {
    key: 'churn_signal_tickets_90d',
    group: 'churn_signals',
    neutral: 0,
    prior: 1.2,
    value: ({ raw }) => Math.log1p(raw.signals90),
    label: ({ raw }) => `${plural(raw.signals90, 'ticket')} speaking of leaving in 90 days`,
  },
  // The segment, one-hot against mid-market (and an unknown segment): small customers leave more
  // often, large ones less. Last in the list: a model stored before them scores the features it
  // knows (logistic.ts reads values by position). The segment has no history: today's is read.
  {
    key: 'segment_enterprise',
    group: 'segment',
    neutral: 0,
    prior: -0.2,
    value: ({ raw }) => (segmentOf(raw) === 'enterprise' ? 1 : 0),
    label: ({ raw }) => segmentLabel(raw),
  },
  {
    key: 'segment_smb',
    group: 'segment',
    neutral: 0,
    prior: 0.2,
    value: ({ raw }) => (segmentOf(raw) === 'smb' ? 1 : 0),
    label: ({ raw }) => segmentLabel(raw),
  },
  // Added after the segment (same reason). Tenure lowers the risk most in the first years (a linear
  // term alone overstates the tenth year); a term ending within 30 days without notice is usually
  // renewing (notice periods are mostly longer), and one ending 91–180 days out cannot end inside a
  // 90-day horizon. Chosen on the demo's out-of-time split and a second seed's cross-validation
  // (docs/predictions.md "Features"); the scorecard leaves them at 0, so the prior is what it was.
  {
    key: 'tenure_log_years',
    group: 'tenure',
    neutral: Math.log1p(1),
    prior: 0,
    value: ({ raw, day }) => Math.log1p(raw.first_start ? clip(days(raw.first_start, day) / 365, 0, 10) : 0),
    label: ({ raw, day }) =>
      raw.first_start
        ? `Customer for ${(days(raw.first_start, day) / 365).toFixed(1)} years (the first years weigh most)`
        : 'No contract history',
  },
  {
    key: 'term_end_within_30d',
    group: 'renewal',
    neutral: 0,
    prior: 0,
    value: ({ raw, day }) => (termEndIn(raw, day) !== null && termEndIn(raw, day)! < 30 ? 1 : 0),
    label: ({ raw, day }) => {
      const left = termEndIn(raw, day);
      if (left === null) return 'Month-to-month or evergreen, no fixed term';
      return left < 30 ? `Term ${endsIn(left)}; ${raw.notice ? 'notice given' : 'no notice given'}` : `Next term ${endsIn(left)}`;
    },
  },
  {
    key: 'term_end_in_91_180d',
    group: 'renewal',
    neutral: 0,
    prior: 0,
    value: ({ raw, day }) => (termEndIn(raw, day) !== null && termEndIn(raw, day)! > 90 && termEndIn(raw, day)! <= 180 ? 1 : 0),
    label: ({ raw, day }) => {
      const left = termEndIn(raw, day);
      return left === null ? 'Month-to-month or evergreen, no fixed term' : `Next term ends in ${plural(left, 'day')}`;
    },
  },
];

/** Days from `day` to the end of the customer's next committed term (not monthly), if any. */
const termEndIn = (raw: Raw, day: string) => (raw.next_term_end ? days(day, raw.next_term_end) : null);

/** `enterprise`, `smb`, or anything else (mid-market, unknown): spelled as people write it. */
function segmentOf(raw: Raw): 'enterprise' | 'smb' | 'other' {
  const s = (raw.segment ?? '').trim().toLowerCase();
  return s === 'enterprise' ? 'enterprise' : s === 'smb' || s === 'small business' ? 'smb' : 'other';
}
const segmentLabel = (raw: Raw) => (raw.segment ? `Segment: ${raw.segment}` : 'No segment');

export const FEATURE_KEYS = FEATURES.map((f) => f.key);

/** The end of a counting contract within the horizon: the renewal the renewal features speak of.
 * Every label reads it from here. */
const dueDate = (raw: Raw) => raw.renewal_due_date;

/** "Term ends in 45 days; notice given": a contract with notice given runs to its service end and
 * stops (an evergreen one on its cancelled_at), also when that is beyond the horizon. */
function noticeLabel(raw: Raw, day: string): string {
  const end = raw.first_end_not_renewing ?? dueDate(raw) ?? raw.next_term_end;
  return end ? `Term ${endsIn(days(day, end))}; notice given` : 'Notice given; no end date set';
}

const years = (from: string, day: string) => {
  const months = Math.floor(days(from, day) / 30.44);
  return months < 12 ? plural(months, 'month') : `${(days(from, day) / 365).toFixed(1)} years`;
};

/** Each group's label: the customer's actual situation in that concept, in positive form (what is
 * so, not the absence of a risk), and never contradicting the record — notice given wins over any
 * auto-renew flag. */
const GROUP_LABELS: Record<DriverGroup, (c: Context) => string> = {
  tenure: ({ raw, day }) => (raw.first_start ? `Customer for ${years(raw.first_start, day)}` : 'New customer, no contract started yet'),
  renewal: ({ raw, day }) => {
    if (raw.counted === 0 && raw.last_end) return `Contract ended ${plural(days(raw.last_end, day), 'day')} ago`;
    if (raw.notice) return noticeLabel(raw, day);
    const due = dueDate(raw);
    if (raw.renewal_no_auto && due) return `Renewal in ${plural(days(day, due), 'day')}, no auto-renew`;
    if (raw.renewal_auto && due) return `Renews automatically in ${plural(days(day, due), 'day')}`;
    const left = termEndIn(raw, day);
    return left !== null ? `Term ${endsIn(left)}` : 'Month-to-month or evergreen, no fixed term';
  },
  billing: ({ raw }) => {
    const share = raw.arr > 0 ? raw.arr_monthly / raw.arr : 0;
    return share >= 1
      ? 'All ARR billed monthly'
      : share <= 0
        ? 'Billed quarterly or yearly, none monthly'
        : `${Math.round(100 * share)}% of ARR billed monthly`;
  },
  arr_trend: ({ raw }) => {
    const arr = `ARR ${Math.round(raw.arr / 100).toLocaleString('en-US')} ${raw.currency}`;
    if (raw.arr_before <= 0) return `${arr}, new within 180 days`;
    const change = (raw.arr - raw.arr_before) / raw.arr_before;
    return Math.round(100 * change) === 0 ? `${arr}, steady over 180 days` : `${arr}, ${signedPercent(change)} over 180 days`;
  },
  seats_trend: ({ raw }) => {
    if (raw.seats_before > 0) {
      const change = (raw.seats - raw.seats_before) / raw.seats_before;
      return raw.seats === raw.seats_before
        ? `${plural(raw.seats, 'seat')}, steady over 180 days`
        : `Seats ${signedPercent(change)} over 180 days (${raw.seats_before} → ${raw.seats})`;
    }
    return raw.seats > 0 ? `${plural(raw.seats, 'seat')}, all added within 180 days` : 'Seats not recorded on contracts';
  },
  payments: ({ raw }) => {
    if (raw.invoices === 0) return 'Invoices: none on record';
    const parts: string[] = [];
    if (raw.worst_dpd > 0)
      parts.push(
        `${(raw.overdue_amount / Math.max(raw.arr / 12, 1)).toFixed(1)} months of revenue overdue, oldest ${plural(raw.worst_dpd, 'day')} past due`,
      );
    if (raw.late_365 > 0) parts.push(`${raw.late_365} of ${plural(raw.due_365, 'invoice')} due in a year paid late`);
    return parts.length > 0 ? parts.join('; ') : `Invoices paid on time (${raw.due_365} due in a year)`;
  },
  ticket_volume: ({ raw }) =>
    raw.t90 === 0 && raw.prev90 === 0
      ? 'Quiet: no tickets in 180 days'
      : `${plural(raw.t90, 'ticket')} in 90 days (${raw.prev90} in the 90 before)${raw.urgent90 > 0 ? `, ${raw.urgent90} urgent` : ''}`,
  ticket_tone: ({ raw }) =>
    raw.t90 === 0
      ? 'Tone: no tickets in 90 days'
      : raw.negative90 > 0
        ? `${raw.negative90} of ${plural(raw.t90, 'ticket')} in 90 days negative`
        : `${raw.t90 === 1 ? 'The ticket' : `All ${raw.t90} tickets`} in 90 days neutral or positive`,
  churn_signals: ({ raw }) =>
    raw.signals90 > 0
      ? `${plural(raw.signals90, 'ticket')} in 90 days ${raw.signals90 === 1 ? 'speaks' : 'speak'} of leaving`
      : raw.t90 > 0
        ? `Tickets in 90 days: none speaks of leaving (of ${raw.t90})`
        : 'Tickets in 90 days: none',
  cancellation_notice: ({ raw }) => (raw.notice ? 'Cancellation notice given' : 'Contract running, no notice given'),
  segment: ({ raw }) => (raw.segment ? `Segment: ${raw.segment}` : 'Segment not set'),
};

/** The scorecard of the `prior` tier (training.ts). */
export const PRIOR_SCORECARD = FEATURES.map((f) => ({ key: f.key, weight: f.prior, neutral: f.neutral }));

const signedPercent = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(Math.round(100 * x))}%`;

export type Source = 'invoices' | 'tickets';

export interface FeatureRow {
  customerId: string;
  currency: string;
  segment: string | null;
  /** In the order of FEATURES. */
  values: number[];
  labels: string[];
  /** The label of each driver group: the customer's situation in that concept. */
  groupLabels: Record<DriverGroup, string>;
  /** Sources with nothing about this customer by the day: their features are neutral. */
  missing: Source[];
  arr: number;
  renewalDate: string | null;
  renewing: boolean | null;
  /** A cancellation was known at the day. */
  noticeKnown: boolean;
}

export interface FeatureQuery {
  orgId: string;
  /** YYYY-MM-DD */
  day: string;
  horizonDays: number;
  /** Who: `active` (a contract counts at the day: a training snapshot) or `scored` (also a
   * contract that ended within `graceDays`: the riskiest, still scored). */
  population: 'active' | 'scored';
  graceDays: number;
  customerIds?: string[];
  /** Write the labels (default): a training snapshot reads values only, and skips them. */
  labels?: boolean;
}

/** The features of an organisation's customers at `day`. */
export async function featuresAt(db: Db, query: FeatureQuery): Promise<FeatureRow[]> {
  const params = [query.orgId, query.day, query.horizonDays, [...LEAVING_SIGNALS], query.population === 'scored', query.graceDays];
  const rows = query.customerIds
    ? await queryText<Raw>(db, FEATURES_SQL.customers, [...params, query.customerIds])
    : await withoutJit(db, (tx) => queryText<Raw>(tx, FEATURES_SQL.organisation, params));
  const labelled = query.labels !== false;
  return rows.map((raw) => {
    const numeric: Raw = {
      ...raw,
      arr: Number(raw.arr),
      arr_monthly: Number(raw.arr_monthly),
      seats: Number(raw.seats),
      arr_before: Number(raw.arr_before),
      seats_before: Number(raw.seats_before),
      overdue_amount: Number(raw.overdue_amount),
    };
    const missing: Source[] = [];
    if (numeric.invoices === 0) missing.push('invoices');
    if (numeric.tickets_total === 0) missing.push('tickets');
    const context = { raw: numeric, day: query.day };
    return {
      customerId: raw.customer_id,
      currency: raw.currency,
      segment: raw.segment,
      values: FEATURES.map((f) => f.value(context)),
      labels: labelled ? FEATURES.map((f) => f.label(context)) : [],
      groupLabels: (labelled ? Object.fromEntries(DRIVER_GROUPS.map((g) => [g, GROUP_LABELS[g](context)])) : {}) as Record<
        DriverGroup,
        string
      >,
      missing,
      arr: numeric.arr,
      renewalDate: raw.renewal_date,
      renewing: raw.renewing,
      noticeKnown: raw.notice,
    };
  });
}
