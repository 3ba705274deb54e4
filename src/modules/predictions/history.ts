// An organisation's labelled history, gathered for fitting in units short enough that, on the
// embedded database (whose statements run on the server's own thread), a webhook or a chat click
// never waits long behind them: the customers first, then their churn days and each snapshot day's
// features a chunk of customers at a time. The fitting thread asks; the database's owner answers.
import { queryText, type Db } from '../../db/client.ts';
import type { UnitRunner } from '../../db/units.ts';
import { featuresAt } from './features.ts';
import { churnDays, labelled } from './labels.ts';
import type { Snapshot } from './training.ts';

/** Customers per unit: measured on PGlite at 4,000 demo customers, one day's features of 1,000
 * customers took 130–370 ms, of 300 30–80 ms, of 100 15–20 ms. */
export const HISTORY_CHUNK_CUSTOMERS = 250;

export const historyUnits = {
  /** The customers whose history is read: all of them, or a sample the same every time (by the
   * hash of the id) when there are more than `maxCustomers`; and how many contracts were never
   * changed after their first revision (imported history cannot be rebuilt in time). */
  'predictions.population': async (db: Db, args: { orgId: string; maxCustomers: number }) => {
    const ids = await queryText<{ id: string }>(db, `select id from customers where org_id = $1 order by md5(id) limit $2`, [args.orgId, args.maxCustomers]);
    const [revisions] = await queryText<{ contracts: number; single: number }>(
      db,
      `select count(*)::int as contracts, count(*) filter (where n = 1)::int as single
       from (select count(*) as n from contract_revisions where org_id = $1 group by contract_id) r`,
      [args.orgId],
    );
    const [total] = await queryText<{ n: number }>(db, `select count(*)::int as n from customers where org_id = $1`, [args.orgId]);
    return { customerIds: ids.map((r) => r.id).sort(), total: total!.n, contracts: revisions?.contracts ?? 0, singleRevision: revisions?.single ?? 0 };
  },
  /** The churn days of `customerIds` known by `today`. */
  'predictions.churn-days': async (db: Db, args: { orgId: string; today: string; graceDays: number; customerIds: string[] }) => [
    ...(await churnDays(db, args)).entries(),
  ],
  /** The features of those of `customerIds` active at `day`. */
  'predictions.snapshot-features': async (db: Db, args: { orgId: string; day: string; horizonDays: number; graceDays: number; customerIds: string[] }) =>
    (await featuresAt(db, { ...args, population: 'active', labels: false })).map((row) => ({ customerId: row.customerId, values: row.values, noticeKnown: row.noticeKnown })),
};

export type HistoryUnits = typeof historyUnits;

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
  /** Most contracts have no revision after their first: their past states are their present. */
  noRevisionHistory: boolean;
}

/** Gathers the labelled snapshots unit by unit, `onProgress` told after each. */
export async function gatherHistory(units: UnitRunner<HistoryUnits>, query: HistoryQuery, onProgress?: (done: number, of: number) => Promise<void> | void): Promise<History> {
  const population = await units.run('predictions.population', { orgId: query.orgId, maxCustomers: query.maxCustomers });
  const ids = population.customerIds;
  const rows: Snapshot[] = [];
  const total = Math.ceil(ids.length / HISTORY_CHUNK_CUSTOMERS) * (query.days.length + 1);
  let done = 0;
  for (let from = 0; from < ids.length; from += HISTORY_CHUNK_CUSTOMERS) {
    const customerIds = ids.slice(from, from + HISTORY_CHUNK_CUSTOMERS);
    const churn = new Map(await units.run('predictions.churn-days', { orgId: query.orgId, today: query.today, graceDays: query.graceDays, customerIds }));
    await onProgress?.(++done, total);
    for (const day of query.days) {
      const features = await units.run('predictions.snapshot-features', { orgId: query.orgId, day, horizonDays: query.horizonDays, graceDays: query.graceDays, customerIds });
      for (const row of features) rows.push(labelled(row, day, churn.get(row.customerId), query.horizonDays));
      await onProgress?.(++done, total);
    }
  }
  // Rows in (day, customer) order whatever the chunking: the same rows give the same model.
  rows.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.customerId < b.customerId ? -1 : a.customerId > b.customerId ? 1 : 0));
  return { rows, sampled: ids.length, customers: population.total, noRevisionHistory: population.contracts > 0 && population.singleRevision / population.contracts > 0.5 };
}
