// The forecast's own model: the retrain (nightly, or asked for) also keeps a 365-day-horizon model,
// and the forecast then names it instead of the scorecard; the predictions' model, their rescore and
// their latest backtest stay the 90-day ones. And the forecast backtest's job, reading the demo in
// chunks of customers, reports what the backtest reads in one go. Both backends, on the demo's history.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText, type Db } from '../../src/db/client.ts';
import { utcToday } from '../../src/lib/today.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { recomputePredictionsJob } from '../../src/modules/predictions/jobs/recompute.ts';
import { trainJob } from '../../src/modules/predictions/jobs/train.ts';
import { forecastBacktest } from '../../src/modules/cfo-forecast/backtest.ts';
import { forecastBacktestJob } from '../../src/modules/cfo-forecast/jobs/backtest.ts';
import { DEFAULT_PREDICTION_SETTINGS } from '../../src/modules/predictions/settings.ts';
import { enqueueJob } from '../../src/queue/job-queue.ts';
import { drainJobs } from '../helpers/jobs.ts';
import { BACKENDS, buildApp, call, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';

for (const backend of BACKENDS) {
  describe(`the forecast's 365-day model (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let orgId: string;
    let key: string;
    const today = utcToday();

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const demo = await database.db.transaction((tx) =>
        loadDemo(
          tx as unknown as Db,
          { orgName: uniqueName('forecast-model'), customers: 300, seed: 7, today, actor: 'test' },
          DEFAULT_ACTION_SETTINGS,
        ),
      );
      orgId = demo.org.id;
      key = demo.secret;
      await drainJobs(database.db, [recomputePredictionsJob]);
    }, 300_000);
    afterAll(() => database?.dispose());

    const activeModels = () =>
      queryText<{ id: string; kind: string; horizon_days: number }>(
        database.db,
        `select id, kind, horizon_days from prediction_models where org_id = $1 and status = 'active' order by horizon_days`,
        [orgId],
      );

    test('before any training the forecast says it used the scorecard; after a retrain it names the active 365-day model', async () => {
      const before = await call(app, 'GET', '/api/cfo/forecast?months=3', { key });
      expect(before.body.data.model).toMatchObject({ id: null, kind: 'prior', horizon_days: 365 });
      await enqueueJob(database.db, trainJob, {}, { orgId, dedupeKey: 'train' });
      await drainJobs(database.db, [trainJob, recomputePredictionsJob]);
      const year = (await activeModels()).find((m) => m.horizon_days === 365);
      expect(year?.kind).toBe('logistic');
      const after = await call(app, 'GET', '/api/cfo/forecast?months=3', { key });
      expect(after.body.data.model).toEqual({ id: year!.id, kind: 'logistic', horizon_days: 365 });
    }, 300_000);

    test("the year's model leaves the predictions' model and their latest backtest at 90 days", async () => {
      expect((await activeModels()).map((m) => m.horizon_days)).toEqual([90, 365]);
      const latest = await call(app, 'GET', '/api/cfo/backtests/latest', { key });
      expect(latest.body.data.horizon_days).toBe(90);
      const predictions = await call(app, 'GET', '/api/cfo/predictions?limit=1', { key });
      expect(predictions.body.data[0].model_id).toBe((await activeModels())[0]!.id);
    });

    test("on the demo (300 customers: read in chunks of 250) the job's report is the backtest's read in one go", async () => {
      const asked = await call(app, 'POST', '/api/cfo/forecast-backtests', { key, body: { origins: 4, horizon: 2 } });
      await drainJobs(database.db, [forecastBacktestJob]);
      const shown = await call(app, 'GET', `/api/cfo/forecast-backtests/${asked.body.data.id}`, { key });
      const direct = await forecastBacktest(database.db, { orgId, today, origins: 4, horizon: 2, settings: DEFAULT_PREDICTION_SETTINGS });
      expect(shown.body.data.report.series.length).toBeGreaterThan(0);
      expect(shown.body.data.report).toEqual(direct);
    }, 300_000);
  });
}
