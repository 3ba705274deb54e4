// An organisation's labelled history, gathered for fitting in units short enough that, on the
// embedded database (whose statements run on the server's own thread), a webhook or a chat click
// never waits long behind them: the customers first, then their churn days and each snapshot day's
// features a chunk of customers at a time. The fitting thread asks; the database's owner answers.
import { queryText, type Db } from '../../db/client.ts';
import type { UnitRunner } from '../../db/units-of-work.ts';
import { featuresAt } from './features.ts';
import { churnDays, labelled } from './labels.ts';
import type { Snapshot } from './training.ts';

/** Customers per unit: measured on PGlite at 4,000 demo customers, one day's features of 1,000
 * customers took 130–370 ms, of 300 30–80 ms, of 100 15–20 ms. */
export const HISTORY_CHUNK_CUSTOMERS = 250;

export const historyUnits = {
  /** The customers whose history is read: all of them, or a sample the same every time (by the
   * hash of the id) when there are more than `maxCustomers`. */
  'predictions.population': async (db: Db, args: { orgId: string; maxCustomers: number }) => {
    const ids = await queryText<{ id: string }>(db, `select id from customers where org_id = $1 order by md5(id) limit $2`, [
      args.orgId,
      args.maxCustomers,
    ]);
    const [total] = await queryText<{ n: number }>(db, `select count(*)::int as n from customers where org_id = $1`, [args.orgId]);
    return { customerIds: ids.map((r) => r.id).sort(), total: total!.n };
  },
  /** The contracts whose history shows it was changed before revintel recorded it (LOST_HISTORY_SQL). */
  'predictions.lost-history': async (db: Db, args: { orgId: string }): Promise<LostHistory> => {
    const [row] = await queryText<LostHistory>(db, LOST_HISTORY_SQL, [args.orgId]);
    return row ?? { contracts: 0, notice_day_unknown: 0, amount_not_invoiced: 0, with_lost_history: 0 };
  },
  /** The churn days of `customerIds` known by `today`. */
  'predictions.churn-days': async (db: Db, args: { orgId: string; today: string; graceDays: number; customerIds: string[] }) => [
    ...(await churnDays(db, args)).entries(),
  ],
  /** The features of those of `customerIds` active at `day`. */
  'predictions.snapshot-features': async (
    db: Db,
    args: { orgId: string; day: string; horizonDays: number; graceDays: number; customerIds: string[] },
  ) =>
    (await featuresAt(db, { ...args, population: 'active', labels: false })).map((row) => ({
      customerId: row.customerId,
      values: row.values,
      noticeKnown: row.noticeKnown,
    })),
};

export type HistoryUnits = typeof historyUnits;

/** Evidence that contracts were changed in place before their first recorded revision, whose past
 * states the backtest therefore reads as their present: a first revision already `cancelled` whose
 * notice day is unknown (none, or stamped on the day it was recorded, after the contract had been
 * running), or an amount that none of the invoices issued under it, before it was recorded,
 * charged. A contract never amended is not evidence: most contracts never are. */
export interface LostHistory {
  contracts: number;
  notice_day_unknown: number;
  amount_not_invoiced: number;
  with_lost_history: number;
}

/** `no_revision_history` is raised when at least this share of the contracts show lost history. */
export const LOST_HISTORY_SHARE = 0.05;

const LOST_HISTORY_SQL = `
  with first as (
    select r.contract_id, r.status, r.start_date, r.cancelled_at, r.amount, r.recorded_at, (r.recorded_at at time zone 'UTC')::date as recorded_day,
      (select min(x.valid_from) from contract_revisions x where x.contract_id = r.contract_id and x.revision > 1) as next_from
    from contract_revisions r where r.org_id = $1 and r.revision = 1
  ),
  billed as (
    select f.contract_id, bool_or(i.amount_due = f.amount) as charged
    from first f join invoices i on i.org_id = $1 and i.contract_id = f.contract_id
    where i.deleted_at is null and i.status not in ('void', 'draft') and i.issued_at < f.recorded_at
      and (f.next_from is null or (i.issued_at at time zone 'UTC')::date < f.next_from)
    group by f.contract_id
  ),
  evidence as (
    select f.contract_id,
      f.status = 'cancelled' and (f.cancelled_at is null or (f.cancelled_at >= f.recorded_day and f.start_date < f.recorded_day)) as notice_lost,
      coalesce(not b.charged, false) as amount_lost
    from first f left join billed b on b.contract_id = f.contract_id
  )
  select count(*)::int as contracts, count(*) filter (where notice_lost)::int as notice_day_unknown,
    count(*) filter (where amount_lost)::int as amount_not_invoiced, count(*) filter (where notice_lost or amount_lost)::int as with_lost_history
  from evidence`;

export interface HistoryQuery {
  orgId: string;
  today: string;
  horizonDays: number;
  graceDays: number;
  /** The snapshot days (labels.ts snapshotDays), or one day for a cross-validation. */
  days: string[];
  maxCustomers: number;
}

export interface History {
  rows: Snapshot[];
  /** Customers read, and of how many. */
  sampled: number;
  customers: number;
  /** The contracts with evidence of lost history (LostHistory). */
  lostHistory: LostHistory;
  /** At least LOST_HISTORY_SHARE of the contracts show lost history: the backtest reads their past
   * as their present. */
  noRevisionHistory: boolean;
}

/** Gathers the labelled snapshots unit by unit, `onProgress` told after each. */
export async function gatherHistory(
  units: UnitRunner<HistoryUnits>,
  query: HistoryQuery,
  onProgress?: (done: number, of: number) => Promise<void> | void,
): Promise<History> {
  const population = await units.run('predictions.population', { orgId: query.orgId, maxCustomers: query.maxCustomers });
  const lostHistory = await units.run('predictions.lost-history', { orgId: query.orgId });
  const ids = population.customerIds;
  const rows: Snapshot[] = [];
  const total = Math.ceil(ids.length / HISTORY_CHUNK_CUSTOMERS) * (query.days.length + 1);
  let done = 0;
  for (let from = 0; from < ids.length; from += HISTORY_CHUNK_CUSTOMERS) {
    const customerIds = ids.slice(from, from + HISTORY_CHUNK_CUSTOMERS);
    const churn = new Map(
      await units.run('predictions.churn-days', { orgId: query.orgId, today: query.today, graceDays: query.graceDays, customerIds }),
    );
    await onProgress?.(++done, total);
    for (const day of query.days) {
      const features = await units.run('predictions.snapshot-features', {
        orgId: query.orgId,
        day,
        horizonDays: query.horizonDays,
        graceDays: query.graceDays,
        customerIds,
      });
      for (const row of features) rows.push(labelled(row, day, churn.get(row.customerId), query.horizonDays));
      await onProgress?.(++done, total);
    }
  }
  // Rows in (day, customer) order whatever the chunking: the same rows give the same model.
  rows.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.customerId < b.customerId ? -1 : a.customerId > b.customerId ? 1 : 0));
  return {
    rows,
    sampled: ids.length,
    customers: population.total,
    lostHistory,
    noRevisionHistory: lostHistory.contracts > 0 && lostHistory.with_lost_history / lostHistory.contracts >= LOST_HISTORY_SHARE,
  };
}
