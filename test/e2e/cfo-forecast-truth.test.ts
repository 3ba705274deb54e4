// The forecast's bands on the demo, whose ground truth (`revintel demo --truth`) is each active
// customer's true chance to churn within 90 days, every 30 days back through its history:
//   - with those true chances, the bands of the ARR each day's book still holds 90 days later cover
//     what it held as often as they say (the bands' arithmetic and the independence they assume);
//   - the forecast backtest (a model trained point in time at each origin, 12 origins × 12 months)
//     holds the ARR kept in its 80 % band 70–90 % of the time, and its WAPE at 6 months is stated.
// One seed, 400 customers (about 130 a currency today, fewer early on: the bands are wide enough to
// be wrong); about a hundred books are checked at 90 days, and 198 origin-months in the backtest.
// Under e2e: a demo load and a backtest per backend.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/client.ts';
import { utcToday } from '../../src/lib/today.ts';
import { arrAt, forecastBacktest, type ForecastBacktest } from '../../src/modules/cfo-forecast/backtest.ts';
import { retainedDistribution } from '../../src/modules/cfo-forecast/distribution.ts';
import { addDays } from '../../src/modules/predictions/training.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { TRUTH_HORIZON_DAYS } from '../../src/modules/demo/truth.ts';
import { BACKENDS, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';

const today = utcToday();
const SETTINGS = { graceDays: 30, priorAnnualChurn: 0.12, lookbackDays: 730 };

/** Held / checked, pooled. */
const rate = (held: number, checked: number) => Math.round((held / checked) * 1000) / 1000;

for (const backend of BACKENDS) {
  describe(`the forecast's bands on the demo against its truth (${backend})`, () => {
    let database: TestDatabase;
    let orgId: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      const demo = await database.db.transaction((tx) =>
        loadDemo(
          tx as never,
          { orgName: uniqueName('demo-truth'), customers: 400, seed: 23, today, actor: 'test' },
          DEFAULT_ACTION_SETTINGS,
        ),
      );
      orgId = demo.org.id;
    }, 300_000);
    afterAll(() => database.dispose());

    test('with the true chances, the 80 % and 90 % bands at 90 days hold as often as they say', async () => {
      const truth = await queryRows<{ customer_id: string; as_of: string; p_true: number }>(
        database.db,
        sql`select customer_id, as_of::text as as_of, p_true from demo_truth
            where org_id = ${orgId} and horizon_days = ${TRUTH_HORIZON_DAYS} and as_of <= ${addDays(today, -TRUTH_HORIZON_DAYS)}::date`,
      );
      const currencyOf = new Map(
        (
          await queryRows<{ id: string; currency: string }>(database.db, sql`select id, currency from customers where org_id = ${orgId}`)
        ).map((c) => [c.id, c.currency]),
      );
      const chances = new Map<string, Map<string, number>>();
      for (const t of truth) chances.set(t.as_of, (chances.get(t.as_of) ?? new Map<string, number>()).set(t.customer_id, Number(t.p_true)));
      let [checked, held80, held90, customers, untold] = [0, 0, 0, 0, 0];
      for (const [day, chance] of chances) {
        const book = (await arrAt(database.db, orgId, day)).filter(([, arr]) => arr > 0);
        const later = new Map(await arrAt(database.db, orgId, addDays(day, TRUTH_HORIZON_DAYS)));
        for (const currency of new Set(book.map(([id]) => currencyOf.get(id)!))) {
          const told = book.filter(([id]) => currencyOf.get(id) === currency && chance.has(id));
          untold += book.filter(([id]) => currencyOf.get(id) === currency && !chance.has(id)).length;
          if (told.length === 0) continue;
          const { quantiles: q } = retainedDistribution(
            told.map(([, arr]) => arr),
            told.map(([id]) => 1 - chance.get(id)!),
          );
          const kept = told.reduce((s, [id, arr]) => s + ((later.get(id) ?? 0) > 0 ? arr : 0), 0);
          checked++;
          customers += told.length;
          if (q.p10 <= kept && kept <= q.p90) held80++;
          if (q.p05 <= kept && kept <= q.p95) held90++;
        }
      }
      console.log(
        `${backend}: true chances, 90 days: 80 % band held ${held80}/${checked} = ${rate(held80, checked)}, 90 % band ${held90}/${checked} = ${rate(held90, checked)} (${customers} customer-days, ${untold} without a truth)`,
      );
      expect(checked).toBeGreaterThan(60);
      // Every customer of a book has its truth (the demo's trials never count as ARR).
      expect(untold).toBe(0);
      expect(rate(held80, checked)).toBeGreaterThanOrEqual(0.7);
      expect(rate(held80, checked)).toBeLessThanOrEqual(0.9);
      expect(rate(held90, checked)).toBeGreaterThanOrEqual(0.8);
      expect(rate(held90, checked)).toBeLessThanOrEqual(0.97);
    }, 300_000);

    test('the forecast backtest: its 80 % band holds 70–90 % of the time; WAPE at 6 months stated', async () => {
      const report: ForecastBacktest = await forecastBacktest(database.db, { orgId, today, origins: 12, horizon: 12, settings: SETTINGS });
      let [checked, held80, held90] = [0, 0, 0];
      for (const s of report.series)
        for (const o of s.origins)
          for (const x of o.months) {
            checked++;
            if (x.p10 <= x.actual_arr && x.actual_arr <= x.p90) held80++;
            if (x.p05 <= x.actual_arr && x.actual_arr <= x.p95) held90++;
          }
      const at6 = report.series.map((s) => {
        const h = s.horizons.find((x) => x.m === 6)!;
        return `${s.currency} WAPE ${h.wape} bias ${h.bias} (${h.origins} origins)`;
      });
      console.log(
        `${backend}: backtest 12 × 12: 80 % band held ${held80}/${checked} = ${rate(held80, checked)}, 90 % band ${held90}/${checked} = ${rate(held90, checked)}; at 6 months: ${at6.join('; ')}`,
      );
      expect(report.series.map((s) => s.currency)).toEqual(['EUR', 'GBP', 'USD']);
      expect(checked).toBeGreaterThan(150);
      expect(rate(held80, checked)).toBeGreaterThanOrEqual(0.7);
      expect(rate(held80, checked)).toBeLessThanOrEqual(0.9);
      for (const s of report.series) expect(s.horizons.find((x) => x.m === 6)!.wape!).toBeLessThan(0.1);
    }, 300_000);
  });
}
