// The ARR history of the demo (seven years of customers in three currencies): on every month with
// ARR, the identity holds, each close is the point-in-time rebuild's (revintel_contracts_at), and
// the cohorts of every first month add up to the closes. Both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/db/client.ts';
import { utcToday } from '../../src/lib/today.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { arrHistory } from '../../src/modules/cfo-history/history.ts';
import { cohorts } from '../../src/modules/cfo-history/cohorts.ts';
import { closingDay, monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import { BACKENDS, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';

const today = utcToday();
const to = today.slice(0, 7);

for (const backend of BACKENDS) {
  describe(`ARR history of the demo (${backend})`, () => {
    let database: TestDatabase;
    let orgId: string;
    let from: string;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
      const demo = await database.db.transaction((tx) =>
        loadDemo(tx as never, { orgName: uniqueName('demo-arr'), customers: 400, seed: 11, today, actor: 'test' }, DEFAULT_ACTION_SETTINGS),
      );
      orgId = demo.org.id;
      const [first] = rowsOf<{ start: string }>(
        await database.db.execute(sql`select min(start_date)::text as start from contracts where org_id = ${orgId} and status <> 'draft'`),
      );
      from = monthOf(Math.max(monthIndex(first!.start.slice(0, 7)) - 1, monthIndex(to) - 119));
    }, 120_000);
    afterAll(() => database.dispose());

    test('every month: the identity, and each close and customer count as the rebuild has them', async () => {
      const history = await arrHistory(database.db, { orgId, from, to, today, reportingCurrency: null });
      expect(history.series.map((s) => s.currency)).toEqual(['EUR', 'GBP', 'USD']);
      const rebuilt = rowsOf<{ month: string; currency: string; arr: string; customers: number }>(
        await database.db.execute(sql`
          select to_char(d.close, 'YYYY-MM') as month, k.currency, sum(k.arr)::text as arr, count(distinct k.customer_id)::int as customers
          from unnest(${`{${monthsOf(from, to)
            .map((x) => closingDay(x, today))
            .join(',')}}`}::date[]) as d(close)
          cross join lateral revintel_contracts_at(${orgId}, d.close) k
          where k.counted group by 1, 2`),
      );
      const expected = new Map(rebuilt.map((r) => [`${r.currency} ${r.month}`, [Number(r.arr), r.customers]]));
      let movements = 0;
      for (const s of history.series)
        for (const x of s.months) {
          expect(x.start_arr + x.new + x.reactivation + x.expansion - x.contraction - x.churn).toBe(x.end_arr);
          expect([s.currency, x.month, x.end_arr, x.customers_end]).toEqual([
            s.currency,
            x.month,
            ...(expected.get(`${s.currency} ${x.month}`) ?? [0, 0]),
          ]);
          movements += x.new + x.reactivation + x.expansion + x.contraction + x.churn;
        }
      expect(movements).toBeGreaterThan(0);
      expect(history.series.every((s) => s.months.at(-1)!.nrr_12m !== null)).toBe(true);
    });

    test('the cohorts of every first month add up to each close', async () => {
      const history = await arrHistory(database.db, { orgId, from, to, today, reportingCurrency: null });
      const all = await cohorts(database.db, { orgId, from, to, today });
      const summed = new Map<string, number>();
      for (const c of all.cohorts)
        for (const age of c.ages) summed.set(`${c.currency} ${age.month}`, (summed.get(`${c.currency} ${age.month}`) ?? 0) + age.arr);
      for (const s of history.series)
        for (const x of s.months)
          expect([s.currency, x.month, summed.get(`${s.currency} ${x.month}`) ?? 0]).toEqual([s.currency, x.month, x.end_arr]);
    });
  });
}

function monthsOf(from: string, to: string): string[] {
  const out: string[] = [];
  for (let k = monthIndex(from); k <= monthIndex(to); k++) out.push(monthOf(k));
  return out;
}
