// The forecast's backtest is point in time: facts dated after an origin — a price cut recorded
// later, a notice given later, an invoice issued later and left unpaid, a contract signed later —
// change nothing of what that origin forecast, only what its book is seen to keep. And the scores
// are what the origins' forecasts and outcomes say. Asked for through the API it is a job, whose
// report is that backtest's. Both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { utcToday } from '../../src/lib/today.ts';
import { newId } from '../../src/lib/ids.ts';
import { lastDayOf, monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import { forecastBacktest, scoreHorizons, type OriginResult } from '../../src/modules/cfo-forecast/backtest.ts';
import { forecastBacktestJob } from '../../src/modules/cfo-forecast/jobs/backtest.ts';
import { drainJobs } from '../helpers/jobs.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, insertRow, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

const today = utcToday();
const T = monthIndex(today.slice(0, 7));
const first = (j: number) => `${monthOf(T - j)}-01`;
const day = (j: number, d: number) => `${monthOf(T - j)}-${String(d).padStart(2, '0')}`;
const SETTINGS = { graceDays: 30, priorAnnualChurn: 0.12, lookbackDays: 730 };

/** What an origin forecast, without what its book turned out to keep. */
const forecastsOf = (origins: OriginResult[]) =>
  origins.map((o) => ({ ...o, months: o.months.map(({ actual_arr: _, ...forecast }) => forecast) }));

for (const backend of BACKENDS) {
  describe(`the forecast backtest (${backend})`, () => {
    let database: TestDatabase;
    let orgId: string;
    let key: string;
    let otherKey: string;
    let app: ReturnType<typeof buildApp>['app'];
    const send = async (method: string, path: string, body: Record<string, unknown>) => {
      const res = await call(app, method, path, { key, body });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body.data as { id: string };
    };
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      key = made.secret;
      orgId = made.org.id;
      otherKey = (await createOrgWithKey(database)).secret;
      for (const [name, fields] of [
        ['yearly', { start_date: first(20), end_date: lastDayOf(monthOf(T + 4)), billing_interval: 'year', amount: 120_000 }],
        ['monthly', { start_date: first(15), billing_interval: 'month', amount: 3_000 }],
        ['renews', { start_date: first(18), end_date: day(2, 20), billing_interval: 'year', amount: 60_000 }],
        ['left', { start_date: first(26), end_date: day(14, 10), billing_interval: 'year', amount: 40_000, status: 'ended' }],
      ] as const) {
        const customer = await send('POST', '/api/customers', { name: name, currency: 'EUR' });
        ids[name] = customer.id;
        ids[`${name}-contract`] = (await send('POST', '/api/contracts', { customer_id: customer.id, name: 'Plan', ...fields })).id;
      }
    }, 300_000);
    afterAll(() => database.dispose());

    const run = async () => (await forecastBacktest(database.db, { orgId, today, origins: 3, horizon: 2, settings: SETTINGS })).series[0]!;

    test('facts dated after an origin change nothing it forecast', async () => {
      const before = await run();
      expect(before.origins.map((o) => o.origin)).toEqual([first(3), first(2)]);
      expect(before.origins[0]!.customers).toBe(3);
      // After the last origin (first(2)): the monthly customer's price cut recorded on the 5th, the
      // yearly one's notice given on the 6th, an unpaid invoice issued on the 7th, a new contract.
      await database.db.execute(sql`
        insert into contract_revisions (org_id, contract_id, revision, valid_from, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, deleted)
        select org_id, contract_id, 2, ${day(2, 5)}::date, customer_id, status, start_date, end_date, auto_renew, billing_interval, 1000, currency, seats, cancelled_at, false
        from contract_revisions where contract_id = ${ids['monthly-contract']!} and revision = 1`);
      await database.db.execute(sql`
        insert into contract_revisions (org_id, contract_id, revision, valid_from, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, deleted)
        select org_id, contract_id, 2, ${day(2, 6)}::date, customer_id, 'cancelled', start_date, end_date, auto_renew, billing_interval, amount, currency, seats, ${day(2, 6)}::date, false
        from contract_revisions where contract_id = ${ids['yearly-contract']!} and revision = 1`);
      await insertRow(database.db, 'invoices', {
        id: newId('inv'),
        org_id: orgId,
        customer_id: ids.renews,
        currency: 'EUR',
        amount_due: 60_000,
        status: 'open',
        issued_at: `${day(2, 7)}T09:00:00Z`,
        due_date: day(2, 8),
      });
      await send('POST', '/api/contracts', {
        customer_id: ids.renews,
        name: 'Add-on',
        start_date: day(2, 9),
        billing_interval: 'month',
        amount: 900,
      });
      const after = await run();
      expect(forecastsOf(after.origins)).toEqual(forecastsOf(before.origins));
    });

    test('POST /api/cfo/forecast-backtests queues a run (202); the same question pending answers that run', async () => {
      const asked = await call(app, 'POST', '/api/cfo/forecast-backtests', { key, body: { origins: 3, horizon: 2 } });
      const again = await call(app, 'POST', '/api/cfo/forecast-backtests', { key, body: { origins: 3, horizon: 2 } });
      const other = await call(app, 'POST', '/api/cfo/forecast-backtests', { key, body: { origins: 3, horizon: 2, currency: 'EUR' } });
      expect([asked.status, again.status, other.status]).toEqual([202, 202, 202]);
      expect(asked.body.data).toMatchObject({
        status: 'queued',
        origins: 3,
        horizon: 2,
        currency: null,
        report: null,
        requested_by: 'api',
      });
      expect(again.body.data.id).toBe(asked.body.data.id);
      expect(other.body.data.id).not.toBe(asked.body.data.id);
      await drainJobs(database.db, [forecastBacktestJob]);
    });

    test('the job records the report the backtest gives; GET …/:id and …/latest answer it', async () => {
      const none = await call(app, 'GET', '/api/cfo/forecast-backtests/latest', { key: otherKey });
      expect([none.status, none.body.error]).toEqual([404, expect.stringContaining('POST /api/cfo/forecast-backtests')]);
      const asked = await call(app, 'POST', '/api/cfo/forecast-backtests', { key, body: { origins: 3, horizon: 2 } });
      await drainJobs(database.db, [forecastBacktestJob]);
      const shown = await call(app, 'GET', `/api/cfo/forecast-backtests/${asked.body.data.id}`, { key });
      expect(shown.status).toBe(200);
      expect(shown.body.data).toMatchObject({ status: 'succeeded', error: null });
      expect(shown.body.data.report.series).toEqual([await run()]);
      const latest = await call(app, 'GET', '/api/cfo/forecast-backtests/latest', { key });
      expect(latest.body.data.id).toBe(asked.body.data.id);
      const theirs = await call(app, 'GET', `/api/cfo/forecast-backtests/${asked.body.data.id}`, { key: otherKey });
      expect(theirs.status).toBe(404);
    });

    test('a bad question is a 400 naming the field, and nothing is queued', async () => {
      const runsBefore = await database.db.execute(sql`select count(*)::int as n from forecast_backtests where org_id = ${orgId}`);
      for (const [body, name] of [
        [{ origins: 37 }, 'origins'],
        [{ horizon: 0 }, 'horizon'],
        [{ currency: 'eur' }, 'currency'],
        [{ months: 3 }, 'months'],
      ] as const) {
        const bad = await call(app, 'POST', '/api/cfo/forecast-backtests', { key, body });
        expect([name, bad.status, bad.body.error]).toEqual([name, 400, expect.stringContaining(name)]);
      }
      const runsAfter = await database.db.execute(sql`select count(*)::int as n from forecast_backtests where org_id = ${orgId}`);
      expect(runsAfter).toEqual(runsBefore);
    });

    test('WAPE, bias and coverage per horizon are those of the origins', () => {
      const month = (m: number, expected: number, actual: number, band: [number, number, number, number]) => ({
        m,
        month: '2026-01',
        expected_arr: expected,
        p05: band[0],
        p10: band[1],
        p90: band[2],
        p95: band[3],
        actual_arr: actual,
      });
      const origins: OriginResult[] = [
        { origin: '2026-01-01', model_kind: 'prior', customers: 2, book_arr: 100, months: [month(1, 90, 100, [60, 70, 95, 100])] },
        { origin: '2026-02-01', model_kind: 'prior', customers: 2, book_arr: 100, months: [month(1, 80, 60, [60, 70, 95, 100])] },
      ];
      expect(scoreHorizons(origins, 1)).toEqual([
        // |90 − 100| + |80 − 60| = 30 of 160; (−10 + 20) of 160; 100 is outside p10–p90 but in p05–p95; 60 outside the 80 % band, in the 90 %.
        { m: 1, origins: 2, wape: 0.1875, bias: 0.0625, coverage_80: 0, coverage_90: 1 },
      ]);
    });
  });
}
