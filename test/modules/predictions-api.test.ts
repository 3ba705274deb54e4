// GET /api/cfo/predictions and GET /api/cfo/predictions/:customer_id on both backends: items with
// their drivers adding up, the default sort by ARR at risk, filters, a cursor walk equal to the
// whole list, `meta.summary` equal to the sums of the filtered items, 400s naming the parameter,
// 404 `not_found` and `not_scored`, nothing of another organisation; and customers' `churn_risk`
// following the prediction's band, kept list pages included.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { queryText } from '../../src/db/client.ts';
import { sigmoid } from '../../src/modules/predictions/logistic.ts';
import { Prediction } from '../../src/modules/predictions/model.ts';
import { recomputePredictions } from '../../src/modules/predictions/service.ts';
import { FEATURE_KEYS } from '../../src/modules/predictions/features.ts';
import { DRIVER_GROUPS } from '../../src/modules/predictions/model.ts';
import { addDays } from '../../src/modules/predictions/training.ts';
import { utcToday } from '../../src/lib/today.ts';
import { insertRow, BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { makeConnector } from '../helpers/tickets.ts';
import { drainJobs } from '../helpers/jobs.ts';
import { recomputePredictionsJob } from '../../src/modules/predictions/jobs/recompute.ts';

for (const backend of BACKENDS) {
  describe(`GET /api/cfo/predictions (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let otherKey: string;
    let orgId: string;
    const id = (name: string) => `${name}_${orgId.slice(4, 14)}`;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database);
      orgId = made.org.id;
      key = made.secret;
      otherKey = (await createOrgWithKey(database)).secret;
      const today = utcToday();
      const db = database.db;
      // Twelve customers in two currencies: some renewing soon without auto-renew, some not.
      for (let i = 0; i < 12; i++) {
        const name = `c${i}`;
        const currency = i % 3 === 0 ? 'EUR' : 'USD';
        await insertRow(db, 'customers', {
          id: id(name),
          org_id: orgId,
          name: `Customer ${i}`,
          currency,
          csm: JSON.stringify({ name: 'Ana', email: i % 2 ? 'ana@vendor.example' : 'bo@vendor.example', phone: null, slack_user_id: null }),
        });
        await insertRow(db, 'contracts', {
          id: id(`${name}k`),
          org_id: orgId,
          customer_id: id(name),
          name: 'Plan',
          currency,
          status: 'active',
          billing_interval: i % 4 === 0 ? 'month' : 'year',
          start_date: addDays(today, -200 - 40 * i),
          end_date: i % 4 === 0 ? null : addDays(today, 10 + 25 * i),
          auto_renew: i % 2 === 0,
          amount: 100_000 * (i + 1),
        });
      }
      await insertRow(db, 'customers', { id: id('unscored'), org_id: orgId, name: 'No contract', currency: 'USD' });
      await database.db.transaction((tx) => recomputePredictions(tx as never, { orgId, today }));
    });
    afterAll(() => database?.dispose());

    const get = (path: string, k = key) => call(app, 'GET', path, { key: k });

    test('every scored customer, by ARR at risk, each explained, with the summary of the set', async () => {
      const res = await get('/api/cfo/predictions?limit=200');
      expect(res.status).toBe(200);
      const items = res.body.data as any[];
      expect(items).toHaveLength(12);
      for (const item of items) {
        expect(Value.Check(Prediction, item)).toBe(true);
        // The five strongest groups, then the sum of the rest.
        expect(item.drivers.map((d: any) => d.group).slice(5)).toEqual(['other']);
        expect(item.drivers.length).toBe(6);
        expect(item.arr_at_risk).toBe(Math.round(item.arr * item.probability));
      }
      const full = await get(`/api/cfo/predictions/${items[0].customer_id}`);
      expect(full.body.data.drivers).toHaveLength(DRIVER_GROUPS.length);
      expect(Value.Check(Prediction, full.body.data)).toBe(true);
      expect(
        Math.abs(
          sigmoid(full.body.data.base_logit + full.body.data.drivers.reduce((s: number, d: any) => s + d.impact, 0)) -
            full.body.data.probability,
        ),
      ).toBeLessThan(1e-9);
      const atRisk = items.map((i) => i.arr_at_risk);
      expect(atRisk).toEqual([...atRisk].sort((a, b) => b - a));
      const meta = res.body.meta;
      expect(meta.model).toMatchObject({ kind: 'prior', backtest_auc: null });
      expect(meta.stale_customers).toBe(0);
      for (const row of meta.summary) {
        const mine = items.filter((i) => i.currency === row.currency);
        expect(row.customers).toBe(mine.length);
        expect(row.total_arr).toBe(mine.reduce((s, i) => s + i.arr, 0));
        expect(row.arr_at_risk).toBe(mine.reduce((s, i) => s + i.arr_at_risk, 0));
        expect(row.expected_churned_customers).toBeCloseTo(
          mine.reduce((s, i) => s + i.probability, 0),
          9,
        );
        expect(row.expected_grr).toBeCloseTo(1 - row.arr_at_risk / row.total_arr, 12);
        for (const band of ['low', 'medium', 'high', 'critical'])
          expect(row.by_risk[band].customers).toBe(mine.filter((i) => i.risk === band).length);
      }
      expect(meta.summary.map((r: any) => r.currency)).toEqual(['EUR', 'USD']);
    });

    test('a cursor walk, on every sort, gives the whole list once, in order', async () => {
      for (const sort of ['-arr_at_risk', '-probability', 'renewal_date']) {
        const whole = (await get(`/api/cfo/predictions?sort=${sort}&limit=200`)).body.data.map((i: any) => i.customer_id);
        const walked: string[] = [];
        let cursor: string | null = null;
        do {
          const res: any = await get(`/api/cfo/predictions?sort=${sort}&limit=5${cursor ? `&cursor=${cursor}` : ''}`);
          walked.push(...res.body.data.map((i: any) => i.customer_id));
          cursor = res.body.meta.next_cursor;
        } while (cursor);
        expect([sort, walked]).toEqual([sort, whole]);
      }
      const byRenewal = (await get('/api/cfo/predictions?sort=renewal_date&limit=200')).body.data.map((i: any) => i.renewal_date ?? '9999');
      expect(byRenewal).toEqual([...byRenewal].sort());
    });

    test('filters narrow the list and its summary alike', async () => {
      const usd = await get('/api/cfo/predictions?currency=USD&csm_email=ANA@vendor.example&limit=200');
      expect(usd.body.data.every((i: any) => i.currency === 'USD')).toBe(true);
      expect(usd.body.meta.summary).toHaveLength(1);
      expect(usd.body.meta.summary[0].customers).toBe(usd.body.data.length);
      const all = (await get('/api/cfo/predictions?limit=200')).body.data;
      const bands = [...new Set(all.map((i: any) => i.risk))].slice(0, 2) as string[];
      const banded = await get(`/api/cfo/predictions?risk=${bands.join(',')}&limit=200`);
      expect(banded.body.data.length).toBe(all.filter((i: any) => bands.includes(i.risk)).length);
      const floor = all[5].probability;
      const above = await get(`/api/cfo/predictions?min_probability=${floor}&limit=200`);
      expect(above.body.data.every((i: any) => i.probability >= floor)).toBe(true);
      expect((await get(`/api/cfo/predictions?customer_id=${id('c3')}`)).body.data.map((i: any) => i.customer_id)).toEqual([id('c3')]);
      // q: the name contains it, case aside, its % and _ taken literally.
      const named = await get('/api/cfo/predictions?q=customer%201&limit=200');
      const expected = all
        .filter((i: any) => /^Customer 1/.test(i.customer_name))
        .map((i: any) => i.customer_id)
        .sort();
      expect(expected.length).toBeGreaterThan(1);
      expect(named.body.data.map((i: any) => i.customer_id).sort()).toEqual(expected);
      expect(named.body.meta.summary.reduce((n: number, r: any) => n + r.customers, 0)).toBe(expected.length);
      expect((await get('/api/cfo/predictions?q=%25&limit=200')).body.data).toEqual([]);
    });

    test('bad values are 400s naming the parameter', async () => {
      for (const [query, name] of [
        ['risk=severe', 'risk'],
        ['risk=low,,high', 'risk'],
        ['min_probability=1.5', 'min_probability'],
        ['min_probability=abc', 'min_probability'],
        ['sort=probability', 'sort'],
        ['limit=0', 'limit'],
        ['horizon=30', 'horizon'],
        ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
      ] as const) {
        const res = await get(`/api/cfo/predictions?${query}`);
        expect([query, res.status]).toEqual([query, 400]);
        expect(res.body.error).toContain(name);
      }
      const cursor = (await get('/api/cfo/predictions?limit=2')).body.meta.next_cursor;
      const foreign = await get(`/api/cfo/predictions?sort=renewal_date&cursor=${cursor}`);
      expect(foreign.status).toBe(400);
    });

    test("customers show their prediction's band as churn_risk, kept list pages included; a rescore that changes no band keeps them", async () => {
      const risks = async () => new Map(((await get('/api/customers?limit=200')).body.data as any[]).map((c) => [c.id, c.churn_risk]));
      const predicted = new Map(((await get('/api/cfo/predictions?limit=200')).body.data as any[]).map((p) => [p.customer_id, p.risk]));
      const shown = await risks();
      for (const [customer, risk] of predicted) expect(shown.get(customer)).toBe(risk);
      expect(shown.get(id('unscored'))).toBeNull();
      const version = async () =>
        (await queryText<{ version: string }>(database.db, `select version::text from org_data_versions where org_id = $1`, [orgId]))[0]!
          .version;
      const before = await version();
      await database.db.transaction((tx) => recomputePredictions(tx as never, { orgId, today: utcToday() }));
      expect(await version()).toBe(before);
      // The calmest customer writes that it is leaving: its band moves, and the kept page with it.
      const calmest = ((await get('/api/cfo/predictions?sort=-probability&limit=200')).body.data as any[]).at(-1);
      const connectorId = (await makeConnector(database, orgId)).id;
      for (let n = 0; n < 3; n++) {
        await insertRow(database.db, 'tickets', {
          id: `tkt_${calmest.customer_id.slice(4)}${n}`,
          org_id: orgId,
          connector_id: connectorId,
          external_id: `LEAVE-${n}`,
          customer_id: calmest.customer_id,
          source_created_at: new Date(Date.now() - 86_400_000).toISOString(),
          first_urgency: 'critical',
          first_sentiment: -0.9,
          first_churn_signals: JSON.stringify(['cancellation', 'competitor']),
        });
      }
      await database.db.transaction((tx) =>
        recomputePredictions(tx as never, { orgId, today: utcToday(), customerIds: [calmest.customer_id] }),
      );
      const now = (await get(`/api/cfo/predictions/${calmest.customer_id}`)).body.data;
      expect(now.risk).not.toBe(calmest.risk);
      expect(now.previous_risk).toBe(calmest.risk);
      expect(await version()).not.toBe(before);
      expect((await risks()).get(calmest.customer_id)).toBe(now.risk);
    });

    test('a kept page follows a rescore that moves no band, a stale mark, a model and a rename at once', async () => {
      const page = async () => (await get('/api/cfo/predictions?limit=3')).body;
      const first = await page();
      expect(await page()).toEqual(first);
      const top = first.data[0];
      await queryText(database.db, `update predictions set probability = probability * 0.999 where org_id = $1 and customer_id = $2`, [
        orgId,
        top.customer_id,
      ]);
      const rescored = await page();
      expect(rescored.data[0].probability).toBeCloseTo(top.probability * 0.999, 12);
      await insertRow(database.db, 'risk_input_changes', {
        org_id: orgId,
        customer_id: top.customer_id,
        changed_at: new Date().toISOString(),
      });
      const marked = await page();
      expect([marked.data[0].stale, marked.meta.stale_customers]).toEqual([true, rescored.meta.stale_customers + 1]);
      await queryText(
        database.db,
        `update prediction_models set metrics = metrics || '{"backtest": {"auc": 0.71}}'::jsonb where org_id = $1 and status = 'active'`,
        [orgId],
      );
      expect((await page()).meta.model.backtest_auc).toBe(0.71);
      await queryText(database.db, `update customers set name = 'Renamed' where id = $1`, [top.customer_id]);
      expect((await page()).data[0].customer_name).toBe('Renamed');
      await database.db.transaction((tx) => recomputePredictions(tx as never, { orgId, today: utcToday() }));
    });

    test('POST …/recompute answers 202 with a job, one queued whole recompute at a time (a list asked for meanwhile joins it), which the worker runs', async () => {
      const first = await call(app, 'POST', '/api/cfo/predictions/recompute', { key });
      expect(first.status).toBe(202);
      expect(first.body.data.job_id).toMatch(/^job_/);
      const again = await call(app, 'POST', '/api/cfo/predictions/recompute', { key, body: {} });
      expect(again.body.data.job_id).toBe(first.body.data.job_id);
      const some = await call(app, 'POST', '/api/cfo/predictions/recompute', { key, body: { customer_ids: [id('c1')] } });
      expect(some.status).toBe(202);
      expect(some.body.data.job_id).toBe(first.body.data.job_id);
      for (const [body, name] of [
        [{ customer_ids: 'c1' }, 'customer_ids'],
        [{ customer_ids: [] }, 'customer_ids'],
        [{ retrain: 'yes' }, 'retrain'],
        [{ retrain: true, customer_ids: ['x'] }, 'customer_ids'],
      ] as const) {
        const bad = await call(app, 'POST', '/api/cfo/predictions/recompute', { key, body });
        expect([name, bad.status]).toEqual([name, 400]);
        expect(bad.body.error).toContain(name);
      }
      const before = (await get(`/api/cfo/predictions/${id('c1')}`)).body.data.predicted_at;
      await Bun.sleep(5);
      await drainJobs(database.db, [recomputePredictionsJob]);
      const jobs = await queryText<{ id: string; state: string }>(
        database.db,
        `select id, state from jobs where org_id = $1 and kind = 'predictions.recompute' order by id`,
        [orgId],
      );
      expect(jobs.map((j) => j.state)).toEqual(['done']);
      expect((await get(`/api/cfo/predictions/${id('c1')}`)).body.data.predicted_at).not.toBe(before);
    });

    test('GET /api/cfo/models: the scorecard in force, with its parameters; 404 for another organisation', async () => {
      const list = await get('/api/cfo/models');
      expect(list.status).toBe(200);
      expect(list.body.data).toHaveLength(1);
      const [model] = list.body.data;
      expect(model).toMatchObject({ kind: 'prior', status: 'active', horizon_days: 90, reject_reason: null });
      expect(model.parameters.features.map((f: any) => f.key)).toHaveLength(FEATURE_KEYS.length);
      expect((await get(`/api/cfo/models/${model.id}`)).body.data).toEqual(model);
      expect((await get(`/api/cfo/models/${model.id}`, otherKey)).status).toBe(404);
      expect((await get('/api/cfo/models/mdl_nope')).status).toBe(404);
      expect((await get('/api/cfo/models?limit=0')).status).toBe(400);
    });

    test('404 for an unknown customer, not_scored for one without a prediction, nothing of another organisation', async () => {
      const unknown = await get('/api/cfo/predictions/cus_nope');
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('not_found');
      const unscored = await get(`/api/cfo/predictions/${id('unscored')}`);
      expect(unscored.status).toBe(404);
      expect(unscored.body.code).toBe('not_scored');
      const foreign = await get(`/api/cfo/predictions/${id('c1')}`, otherKey);
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe('not_found');
      const theirs = await get('/api/cfo/predictions', otherKey);
      expect(theirs.body.data).toEqual([]);
      expect(theirs.body.meta.summary).toEqual([]);
    });
  });
}
