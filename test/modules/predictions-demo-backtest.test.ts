// The demo's churn is learnable and honest: a model trained on the demo's history through the
// features beats the untrained scorecard, is calibrated, ranks its riskiest tenth well — and does not
// beat the demo's hidden truth on the same rows (that would mean a feature reads the future).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText, type Db } from '../../src/db/client.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { backtestDays, planBacktest, runBacktest } from '../../src/modules/predictions/fitting.ts';
import { gatherHistory, historyUnits } from '../../src/modules/predictions/history.ts';
import { auc } from '../../src/modules/predictions/metrics.ts';
import { DEFAULT_PREDICTION_SETTINGS } from '../../src/modules/predictions/settings.ts';
import { countEvents, splitOutOfTime, type BacktestMetrics } from '../../src/modules/predictions/training.ts';
import { BACKENDS, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';

const TODAY = '2026-11-25';
const CUSTOMERS = 3_000;
const SETTINGS = { horizonDays: 90, priorAnnualChurn: 0.12, graceDays: 30 };
type Method = 'out_of_time' | 'cross_validation';

interface DemoBacktest {
  metrics: BacktestMetrics;
  /** The AUC of the demo's truth (p_true) on the same test rows. */
  truthAuc: number;
  testEvents: number;
}

/** A backtest of the demo organisation as the backtest job runs it (its history gathered unit by
 * unit, then fitted and judged), with the truth's AUC on the rows it tested. */
async function backtestDemo(db: Db, orgId: string, method: Method): Promise<DemoBacktest> {
  const truth = new Map(
    (
      await queryText<{ customer_id: string; as_of: string; p_true: number }>(
        db,
        `select customer_id, as_of::text as as_of, p_true from demo_truth where org_id = $1`,
        [orgId],
      )
    ).map((r) => [`${r.customer_id} ${r.as_of}`, Number(r.p_true)]),
  );
  const settings = { ...DEFAULT_PREDICTION_SETTINGS, ...SETTINGS, lookbackDays: 730 };
  const plan = planBacktest({ method }, TODAY, 90, 30);
  const history = await gatherHistory(localRunner(db, historyUnits, DEFAULT_SETTINGS), {
    orgId,
    today: TODAY,
    horizonDays: 90,
    graceDays: 30,
    days: backtestDays(plan, TODAY, settings),
    maxCustomers: 25_000,
  });
  const report = runBacktest(history, plan, settings);
  const test = method === 'out_of_time' ? splitOutOfTime(history.rows, plan.cutoff!, SETTINGS).test : history.rows;
  const scored = test.map((r) => {
    const p = truth.get(`${r.customerId} ${r.t}`);
    if (p === undefined) throw new Error(`no truth for ${r.customerId} on ${r.t}`);
    return { probability: p, outcome: r.outcome };
  });
  return { metrics: report.metrics, truthAuc: auc(scored), testEvents: countEvents(test) };
}

for (const backend of BACKENDS) {
  describe(`a backtest of the demo (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database.dispose());

    // One seed per backend: 42 on the embedded database (the quick pass), 7 on PostgreSQL (the
    // features are the same SQL on both, and the figures came out identical when both ran both).
    for (const seed of backend === 'embedded' ? [42] : [7]) {
      describe(`seed ${seed}`, () => {
        let orgId: string;
        beforeAll(async () => {
          const demo = await database.db.transaction((tx) =>
            loadDemo(
              tx as never,
              { orgName: uniqueName('demo-backtest'), customers: CUSTOMERS, seed, today: TODAY, actor: 'test' },
              DEFAULT_ACTION_SETTINGS,
            ),
          );
          orgId = demo.org.id;
        });

        for (const method of ['out_of_time', 'cross_validation'] as const) {
          test(`${method}: learned, better than the scorecard, calibrated, and not better than the truth`, async () => {
            const { metrics: m, truthAuc, testEvents } = await backtestDemo(database.db, orgId, method);
            console.log(
              JSON.stringify({
                backend,
                seed,
                method,
                auc: m.auc,
                prior_auc: m.prior_auc,
                truth_auc: truthAuc,
                lift: m.top_decile_lift,
                ece: m.ece,
                events: m.events,
                rows: m.rows,
                base_rate: m.base_rate,
                auc_without_notice: m.auc_without_notice,
              }),
            );
            expect(testEvents).toBeGreaterThanOrEqual(50);
            expect(m.events).toBe(testEvents);
            expect(m.auc!).toBeGreaterThanOrEqual(0.8);
            // Measured margins over the scorecard, seeds 42, 7, 1 and 3: out of time 0.057–0.080;
            // cross-validation (one snapshot per customer, 67–89 events at 3,000 customers)
            // 0.051–0.058.
            expect(m.auc!).toBeGreaterThanOrEqual(m.prior_auc! + 0.05);
            // A learned model above the truth on the same rows would be reading the future.
            expect(m.auc!).toBeLessThanOrEqual(truthAuc + 0.02);
            expect(m.top_decile_lift!).toBeGreaterThanOrEqual(3);
            expect(m.ece!).toBeLessThanOrEqual(0.03);
          });
        }
      });
    }
  });
}
