// Backtests and retraining on both backends, on the demo organisation's history: POST
// /api/cfo/backtests queues one (one open per organisation), the job reports every metric, `latest`
// follows it; bad requests are 400s naming the field; nothing crosses organisations. A retrain asked
// for with the recompute trains the tier the history allows, promotes it (or records it rejected
// with its reason, the active model staying) and rescores everyone with it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { queryText, type Db } from '../../src/db/client.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { backtestJob } from '../../src/modules/predictions/jobs/backtest.ts';
import { nightlyJob } from '../../src/modules/predictions/jobs/nightly.ts';
import { recomputePredictionsJob } from '../../src/modules/predictions/jobs/recompute.ts';
import { trainJob } from '../../src/modules/predictions/jobs/train.ts';
import { utcToday } from '../../src/lib/today.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { retrain, trainingDays } from '../../src/modules/predictions/fitting.ts';
import { gatherHistory, historyUnits } from '../../src/modules/predictions/history.ts';
import { Backtest } from '../../src/modules/predictions/model.ts';
import { saveRetrain } from '../../src/modules/predictions/save-retrain.ts';
import { DEFAULT_PREDICTION_SETTINGS } from '../../src/modules/predictions/settings.ts';
import { addDays } from '../../src/modules/predictions/training.ts';
import { drainJobs } from '../helpers/jobs.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';

const METRICS = [
  'auc',
  'auc_ci95',
  'prior_auc',
  'prior_auc_ci95',
  'lost_history',
  'auc_without_notice',
  'top_decile_lift',
  'brier',
  'ece',
  'base_rate',
  'rows',
  'events',
  'customers',
  'calibration_table',
  'decile_table',
];

for (const backend of BACKENDS) {
  describe(`backtests and retraining (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let orgId: string;
    let key: string;
    let otherKey: string;
    const today = utcToday();

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const demo = await database.db.transaction((tx) =>
        loadDemo(
          tx as unknown as Db,
          { orgName: uniqueName('backtests'), customers: 400, seed: 42, today, actor: 'test' },
          DEFAULT_ACTION_SETTINGS,
        ),
      );
      orgId = demo.org.id;
      key = demo.secret;
      otherKey = (await createOrgWithKey(database)).secret;
      await drainJobs(database.db, [recomputePredictionsJob]);
    });
    afterAll(() => database?.dispose());

    const post = (path: string, body: unknown, k = key) => call(app, 'POST', path, { key: k, body });
    const get = (path: string, k = key) => call(app, 'GET', path, { key: k });

    test('POST /api/cfo/backtests queues one (202); another while it is open is 409; the job reports every metric and `latest` follows', async () => {
      const asked = await post('/api/cfo/backtests', {});
      expect(asked.status).toBe(202);
      expect(asked.body.data).toMatchObject({
        status: 'queued',
        method: 'out_of_time',
        horizon_days: 90,
        cutoff: addDays(today, -270),
        as_of: null,
        requested_by: 'api',
      });
      const again = await post('/api/cfo/backtests', { method: 'cross_validation' });
      expect(again.status).toBe(409);
      expect(again.body.error).toContain(asked.body.data.id);

      await drainJobs(database.db, [backtestJob]);
      const done = await get(`/api/cfo/backtests/${asked.body.data.id}`);
      expect(done.status).toBe(200);
      expect(Value.Check(Backtest, done.body.data)).toBe(true);
      expect(done.body.data.status).toBe('succeeded');
      expect(Object.keys(done.body.data.metrics)).toEqual(expect.arrayContaining(METRICS));
      expect(done.body.data.metrics.rows).toBeGreaterThan(0);
      // The demo's contracts are recorded with their notice days and invoiced at their amounts: no
      // evidence of lost history, though most were never amended.
      expect(done.body.data.metrics.lost_history.with_lost_history).toBe(0);
      expect(done.body.data.warnings).not.toContain('no_revision_history');
      expect(done.body.data.model.parameters.features.length).toBeGreaterThan(0);
      expect((await get('/api/cfo/backtests/latest')).body.data.id).toBe(asked.body.data.id);
    });

    test('cross_validation scores one snapshot per customer at as_of', async () => {
      const asOf = addDays(today, -120);
      const asked = await post('/api/cfo/backtests', { method: 'cross_validation', as_of: asOf, horizon_days: 60 });
      expect(asked.status).toBe(202);
      await drainJobs(database.db, [backtestJob]);
      const done = (await get(`/api/cfo/backtests/${asked.body.data.id}`)).body.data;
      expect(done).toMatchObject({ status: 'succeeded', method: 'cross_validation', as_of: asOf, horizon_days: 60, cutoff: null });
      expect(done.metrics.rows).toBe(done.metrics.customers);
      expect((await get('/api/cfo/backtests/latest')).body.data.id).toBe(asked.body.data.id);
    });

    test.each([
      [{ method: 'magic' }, 'method'],
      [{ horizon_days: 5 }, 'horizon_days'],
      [{ horizon_days: 400 }, 'horizon_days'],
      [{ method: 'cross_validation', as_of: addDays(utcToday(), 3) }, 'as_of'],
      [{ method: 'cross_validation', as_of: addDays(utcToday(), -10) }, 'as_of'],
      [{ as_of: 'yesterday' }, 'as_of'],
      [{ cutoff: addDays(utcToday(), -100) }, 'cutoff'],
      [{ method: 'cross_validation', cutoff: addDays(utcToday(), -300) }, 'cutoff'],
      [{ as_of: addDays(utcToday(), -300) }, 'as_of'],
      [{ folds: 3 }, 'folds'],
    ])('a bad request %j is a 400 naming %s, and queues nothing', async (body, field) => {
      const before = await queryText(database.db, `select id from prediction_backtests where org_id = $1`, [orgId]);
      const res = await post('/api/cfo/backtests', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toContain(field);
      expect(await queryText(database.db, `select id from prediction_backtests where org_id = $1`, [orgId])).toHaveLength(before.length);
    });

    test('a backtest whose job ended without finishing it (its worker died on the last attempt) is failed, and the next one is accepted', async () => {
      const asked = await post('/api/cfo/backtests', {});
      expect(asked.status).toBe(202);
      // What the queue does to a job whose worker is gone and whose attempts are used up.
      await queryText(
        database.db,
        `update jobs set state = 'dead', last_error = 'its worker stopped before finishing it (lease taken back)' where kind = 'predictions.backtest' and payload->>'backtestId' = $1`,
        [asked.body.data.id],
      );
      const shown = (await get(`/api/cfo/backtests/${asked.body.data.id}`)).body.data;
      expect(shown).toMatchObject({ status: 'failed' });
      expect(shown.error).toContain('its worker stopped before finishing it');
      const next = await post('/api/cfo/backtests', {});
      expect(next.status).toBe(202);
      await drainJobs(database.db, [backtestJob]);
      expect((await get(`/api/cfo/backtests/${next.body.data.id}`)).body.data.status).toBe('succeeded');
    });

    test('another organisation sees none of them: 404 by id, and no latest', async () => {
      const [own] = await queryText<{ id: string }>(database.db, `select id from prediction_backtests where org_id = $1 limit 1`, [orgId]);
      expect((await get(`/api/cfo/backtests/${own!.id}`, otherKey)).status).toBe(404);
      const latest = await get('/api/cfo/backtests/latest', otherKey);
      expect(latest.status).toBe(404);
      expect(latest.body.error).toContain('POST /api/cfo/backtests');
    });

    test('a recompute with retrain trains the tier the history allows, promotes it over the scorecard, and rescores everyone with it', async () => {
      const [scorecard] = await queryText<{ id: string }>(
        database.db,
        `select id from prediction_models where org_id = $1 and status = 'active'`,
        [orgId],
      );
      expect((await post('/api/cfo/predictions/recompute', { retrain: true, customer_ids: ['x'] })).status).toBe(400);
      const asked = await post('/api/cfo/predictions/recompute', { retrain: true });
      expect(asked.status).toBe(202);
      await drainJobs(database.db, [trainJob, recomputePredictionsJob]);
      const models = await queryText<{ id: string; kind: string; status: string; metrics: any }>(
        database.db,
        `select id, kind, status, metrics from prediction_models where org_id = $1 order by trained_at`,
        [orgId],
      );
      const trained = models.find((m) => m.metrics.job_id === asked.body.data.job_id)!;
      expect(trained.kind).not.toBe('prior');
      expect(trained.status).toBe('active');
      expect(models.find((m) => m.id === scorecard!.id)!.status).toBe('retired');
      expect(trained.metrics.backtest.auc).toBeGreaterThan(0.5);
      expect(trained.metrics.trained_on.events).toBeGreaterThanOrEqual(10);
      const list = (await get('/api/cfo/predictions?limit=10')).body;
      expect(list.meta.model).toMatchObject({ id: trained.id, kind: trained.kind, backtest_auc: trained.metrics.backtest.auc });
      const scoredBy = await queryText<{ model_id: string }>(database.db, `select distinct model_id from predictions where org_id = $1`, [
        orgId,
      ]);
      expect(scoredBy).toEqual([{ model_id: trained.id }]);
      expect((await get('/api/cfo/backtests/latest')).body.data).toMatchObject({
        requested_by: 'nightly',
        method: 'out_of_time',
        model_kind: trained.kind,
      });
    });

    test('a candidate judged worse is kept as rejected with its reason; the model in force stays', async () => {
      const settings = DEFAULT_PREDICTION_SETTINGS;
      const history = await gatherHistory(localRunner(database.db, historyUnits, DEFAULT_SETTINGS), {
        orgId,
        today,
        horizonDays: settings.horizonDays,
        graceDays: settings.graceDays,
        days: trainingDays(today, settings),
        maxCustomers: settings.trainMaxCustomers,
      });
      const result = retrain(history, 'logistic', today, settings);
      const worse = {
        ...result,
        promotion: {
          status: 'rejected' as const,
          reason: "AUC 0.610 is worse than the active model's 0.700 (refitted on the same rows) by more than 0.01",
        },
      };
      const [active] = await queryText<{ id: string }>(
        database.db,
        `select id from prediction_models where org_id = $1 and status = 'active'`,
        [orgId],
      );
      const saved = await database.db.transaction((tx) =>
        saveRetrain(tx as unknown as Db, recomputePredictionsJob, {
          orgId,
          jobId: 'job_worse',
          horizonDays: 90,
          judgedAgainst: active!.id,
          result: worse,
        }),
      );
      expect(saved).toMatchObject({ status: 'rejected', reason: worse.promotion.reason });
      const res = await get(`/api/cfo/models/${saved.modelId}`);
      expect(res.body.data).toMatchObject({ status: 'rejected', reject_reason: worse.promotion.reason });
      expect(
        (
          await queryText<{ id: string }>(database.db, `select id from prediction_models where org_id = $1 and status = 'active'`, [orgId])
        )[0]!.id,
      ).toBe(active!.id);
      // The same job's retry finds its decision instead of making another model.
      const repeated = await database.db.transaction((tx) =>
        saveRetrain(tx as unknown as Db, recomputePredictionsJob, {
          orgId,
          jobId: 'job_worse',
          horizonDays: 90,
          judgedAgainst: active!.id,
          result: worse,
        }),
      );
      expect(repeated.modelId).toBe(saved.modelId);
      // Judged against a model another retrain has since replaced: kept as rejected, whatever it scored.
      const better = { ...result, promotion: { status: 'active' as const, reason: null } };
      const late = await database.db.transaction((tx) =>
        saveRetrain(tx as unknown as Db, recomputePredictionsJob, {
          orgId,
          jobId: 'job_late',
          horizonDays: 90,
          judgedAgainst: 'mdl_replaced',
          result: better,
        }),
      );
      expect(late).toMatchObject({ status: 'rejected', reason: 'the model in force changed while this one was trained' });
      expect(
        (
          await queryText<{ id: string }>(database.db, `select id from prediction_models where org_id = $1 and status = 'active'`, [orgId])
        )[0]!.id,
      ).toBe(active!.id);
      const backtests = await queryText(
        database.db,
        `select id from prediction_backtests where org_id = $1 and metrics->>'job_id' = any($2::text[])`,
        [orgId, ['job_worse', 'job_late']],
      );
      expect(backtests).toHaveLength(2);
    });

    test('the nightly run asks for one retrain of every organisation with customers, once while one is queued', async () => {
      const info = { id: 'job_nightly', kind: nightlyJob.kind, orgId: null, attempts: 1 };
      await database.db.transaction((tx) => nightlyJob.perform(tx as never, {}, info, DEFAULT_SETTINGS));
      await database.db.transaction((tx) => nightlyJob.perform(tx as never, {}, info, DEFAULT_SETTINGS));
      const queued = await queryText<{ dedupe_key: string }>(
        database.db,
        `select dedupe_key from jobs where org_id = $1 and kind = 'predictions.train' and state = 'queued'`,
        [orgId],
      );
      expect(queued).toEqual([{ dedupe_key: 'train' }]);
      await queryText(database.db, `delete from jobs where kind = 'predictions.train' and state = 'queued'`, []);
    });
  });
}
