// The demo's churn is learnable and honest: a model trained on the demo's history through the
// features beats the untrained scorecard, is calibrated, ranks its riskiest tenth well — and does not
// beat the demo's hidden truth on the same rows (that would mean a feature reads the future).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText, type Db } from '../../src/db/client.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { FEATURE_KEYS, PRIOR_SCORECARD } from '../../src/modules/predictions/features.ts';
import { labelledSnapshots } from '../../src/modules/predictions/labels.ts';
import { auc } from '../../src/modules/predictions/metrics.ts';
import { addDays, backtestCrossValidation, backtestOutOfTime, countEvents, type BacktestMetrics, type Snapshot } from '../../src/modules/predictions/training.ts';
import { BACKENDS, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';

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

/** A backtest of the demo organisation, as the backtest service would run it, with the truth's AUC
 * on the rows it tested. */
async function backtestDemo(db: Db, orgId: string, method: Method): Promise<DemoBacktest> {
  const truth = new Map(
    (await queryText<{ customer_id: string; as_of: string; p_true: number }>(db, `select customer_id, as_of::text as as_of, p_true from demo_truth where org_id = $1`, [orgId])).map((r) => [
      `${r.customer_id} ${r.as_of}`,
      Number(r.p_true),
    ]),
  );
  let result;
  let test: Snapshot[];
  if (method === 'out_of_time') {
    const rows = await labelledSnapshots(db, { orgId, today: TODAY, ...SETTINGS, lookbackDays: 730 });
    const cutoff = addDays(TODAY, -(90 + 180));
    result = backtestOutOfTime(FEATURE_KEYS, PRIOR_SCORECARD, rows, cutoff, SETTINGS);
    test = rows.filter((r) => r.t > cutoff);
  } else {
    const asOf = addDays(TODAY, -90);
    test = await labelledSnapshots(db, { orgId, today: TODAY, ...SETTINGS, until: asOf, lookbackDays: 90 });
    result = backtestCrossValidation(FEATURE_KEYS, PRIOR_SCORECARD, test, SETTINGS);
  }
  const scored = test.map((r) => {
    const p = truth.get(`${r.customerId} ${r.t}`);
    if (p === undefined) throw new Error(`no truth for ${r.customerId} on ${r.t}`);
    return { probability: p, outcome: r.outcome };
  });
  return { metrics: result.metrics, truthAuc: auc(scored), testEvents: countEvents(test) };
}

for (const backend of BACKENDS) {
  describe(`a backtest of the demo (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database.dispose());

    for (const seed of [42, 7]) {
      describe(`seed ${seed}`, () => {
        let orgId: string;
        beforeAll(async () => {
          const demo = await database.db.transaction((tx) => loadDemo(tx as never, { orgName: uniqueName('demo-backtest'), customers: CUSTOMERS, seed, today: TODAY, actor: 'test' }));
          orgId = demo.org.id;
        });

        for (const method of ['out_of_time', 'cross_validation'] as const) {
          test(`${method}: learned, better than the scorecard, calibrated, and not better than the truth`, async () => {
            const { metrics: m, truthAuc, testEvents } = await backtestDemo(database.db, orgId, method);
            console.log(JSON.stringify({ backend, seed, method, auc: m.auc, prior_auc: m.prior_auc, truth_auc: truthAuc, lift: m.top_decile_lift, ece: m.ece, events: m.events, rows: m.rows, base_rate: m.base_rate, auc_without_notice: m.auc_without_notice }));
            expect(testEvents).toBeGreaterThanOrEqual(50);
            expect(m.events).toBe(testEvents);
            expect(m.auc!).toBeGreaterThanOrEqual(0.8);
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
