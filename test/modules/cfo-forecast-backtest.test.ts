// The forecast's backtest is point in time: facts dated after an origin — a price cut recorded
// later, a notice given later, an invoice issued later and left unpaid, a contract signed later —
// change nothing of what that origin forecast, only what its book is seen to keep. And the scores
// are what the origins' forecasts and outcomes say. Both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { utcToday } from '../../src/lib/today.ts';
import { newId } from '../../src/lib/ids.ts';
import { lastDayOf, monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import { forecastBacktest, scoreHorizons, type OriginResult } from '../../src/modules/cfo-forecast/backtest.ts';
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

    test('GET /api/cfo/forecast-backtest answers the same, and names a bad parameter', async () => {
      const res = await call(app, 'GET', '/api/cfo/forecast-backtest?origins=3&horizon=2', { key });
      expect(res.status).toBe(200);
      expect(res.body.data.series).toEqual([await run()]);
      for (const [query, name] of [
        ['origins=37', 'origins'],
        ['horizon=0', 'horizon'],
        ['currency=reporting', 'currency'],
        ['months=3', 'months'],
      ] as const) {
        const bad = await call(app, 'GET', `/api/cfo/forecast-backtest?${query}`, { key });
        expect([query, bad.status, bad.body.error]).toEqual([query, 400, expect.stringContaining(`"${name}"`)]);
      }
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
