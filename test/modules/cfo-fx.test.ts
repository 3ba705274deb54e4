// The reporting currency and monthly rates (PUT /api/cfo/reporting-currency, /api/cfo/fx-rates):
// `currency=reporting` converts each month at its own rate when every currency of the book has one
// (EUR, USD and JPY, whose minor units differ), and otherwise answers per currency naming the
// missing rates; and the history routes' bad input, each a 400 naming the parameter. Both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { utcToday } from '../../src/lib/today.ts';
import { monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

const today = utcToday();
const T = monthIndex(today.slice(0, 7));
const m = (j: number) => monthOf(T - j);

type Month = Record<string, number>;

for (const backend of BACKENDS) {
  describe(`reporting currency and FX rates (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    const send = (method: string, path: string, body?: unknown) => call(app, method, path, { key, body });
    const post = async (path: string, body: Record<string, unknown>) => {
      const res = await send('POST', path, body);
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body.data as { id: string };
    };
    const book = async (currency: string, amount: number, start: string, end?: string) => {
      const customer = await post('/api/customers', { name: `${currency} customer`, currency });
      await post('/api/contracts', {
        customer_id: customer.id,
        name: 'Plan',
        start_date: start,
        end_date: end,
        billing_interval: 'year',
        amount,
        status: end ? 'ended' : 'active',
      });
    };
    const setRates = (rates: Record<string, string>[]) => send('PUT', '/api/cfo/fx-rates', { rates });
    const reporting = async () => {
      const res = await send('GET', `/api/cfo/arr?from=${m(2)}&to=${m(0)}&currency=reporting`);
      expect(res.status).toBe(200);
      return res.body.data as {
        converted: boolean;
        missing_rates: { currency: string; month: string }[];
        series: { currency: string; months: Month[] }[];
      };
    };

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      key = (await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 })).secret;
      await book('EUR', 120_000, `${m(2)}-01`);
      await book('USD', 60_000, `${m(2)}-01`);
      await book('USD', 33_333, `${m(3)}-01`, `${m(1)}-10`);
      await book('JPY', 100_000, `${m(1)}-01`);
    });
    afterAll(() => database.dispose());

    test('without a reporting currency, currency=reporting is a 422 that says how to set one', async () => {
      const res = await send('GET', '/api/cfo/arr?currency=reporting');
      expect(res.status).toBe(422);
      expect(res.body.error).toContain('PUT /api/cfo/reporting-currency');
    });

    test('a missing rate: the series stay per currency and the answer names each missing rate', async () => {
      expect((await send('PUT', '/api/cfo/reporting-currency', { reporting_currency: 'EUR' })).body.data).toEqual({
        reporting_currency: 'EUR',
      });
      expect((await setRates([{ month: m(2), currency: 'USD', rate: '0.9' }])).status).toBe(200);
      const answer = await reporting();
      expect(answer.converted).toBe(false);
      expect(answer.series.map((s) => s.currency)).toEqual(['EUR', 'JPY', 'USD']);
      expect(answer.missing_rates).toEqual([
        { currency: 'JPY', month: m(1) },
        { currency: 'JPY', month: m(0) },
        { currency: 'USD', month: m(1) },
        { currency: 'USD', month: m(0) },
      ]);
    });

    test('every rate present: one series in EUR, each month at its rate, the identity exact', async () => {
      const written = await setRates([
        { month: m(1), currency: 'USD', rate: '0.923456789' },
        { month: m(0), currency: 'USD', rate: '0.95' },
        { month: m(1), currency: 'JPY', rate: '0.0062' },
        { month: m(0), currency: 'JPY', rate: '0.00615' },
      ]);
      expect(written.status).toBe(200);
      expect(written.body.data).toContainEqual({ month: m(1), currency: 'USD', quote_currency: 'EUR', rate: '0.923456789' });
      const answer = await reporting();
      expect(answer.converted).toBe(true);
      expect(answer.missing_rates).toEqual([]);
      expect(answer.series.map((s) => s.currency)).toEqual(['EUR']);
      const [m2, m1, m0] = answer.series[0]!.months as [Month, Month, Month];
      for (const x of [m2, m1, m0])
        expect(x.start_arr! + x.new! + x.reactivation! + x.expansion! - x.contraction! - x.churn!).toBe(x.end_arr!);
      // m(2) at 0.9: USD 33,333 held (29,999.7 EUR), 120,000 EUR and 60,000 USD new.
      expect(m2).toMatchObject({ start_arr: 30_000, new: 174_000, end_arr: 204_000 });
      // m(1): at 0.923456789 (USD) and 0.0062 (JPY, no minor unit: 100,000 yen = 620.00 EUR).
      const usd1 = 0.923456789;
      expect(m1.start_arr).toBe(Math.round(120_000 + 93_333 * usd1));
      expect(m1.new).toBe(62_000);
      expect(m1.churn).toBe(Math.round(120_000 + 93_333 * usd1) + 62_000 - Math.round(120_000 + 60_000 * usd1 + 62_000));
      expect(m1.end_arr).toBe(Math.round(120_000 + 60_000 * usd1 + 62_000));
      // m(0): its own rates; the opening is last month's close at this month's rates (constant currency).
      expect(m0).toMatchObject({ start_arr: 120_000 + 57_000 + 61_500, end_arr: 238_500, churn: 0 });
    });

    test('another reporting currency: the rates to EUR stay, and those to USD are missing', async () => {
      await send('PUT', '/api/cfo/reporting-currency', { reporting_currency: 'USD' });
      const answer = await reporting();
      expect(answer.converted).toBe(false);
      expect(answer.missing_rates.map((r) => r.currency)).toEqual(['EUR', 'EUR', 'EUR', 'JPY', 'JPY']);
      const listed = await send('GET', '/api/cfo/fx-rates?currency=USD');
      expect(listed.body.data.reporting_currency).toBe('USD');
      expect(listed.body.data.rates.map((r: { month: string; rate: string }) => [r.month, r.rate])).toEqual([
        [m(2), '0.9'],
        [m(1), '0.923456789'],
        [m(0), '0.95'],
      ]);
      await send('PUT', '/api/cfo/reporting-currency', { reporting_currency: 'EUR' });
    });

    test('a rate that is not a positive decimal, or of a currency to itself: 400 naming the field', async () => {
      for (const [rate, field] of [
        [{ month: m(0), currency: 'USD', rate: '-1' }, 'rates.0.rate": must be a positive decimal'],
        [{ month: m(0), currency: 'USD', rate: '0' }, 'rate'],
        [{ month: '2026-13', currency: 'USD', rate: '1' }, 'month'],
        [{ month: m(0), currency: 'EUR', rate: '1' }, 'currency'],
        [{ month: m(0), currency: 'XYZ', rate: '1' }, 'currency'],
        [{ month: '0000-01', currency: 'USD', rate: '1' }, 'month'],
      ] as const) {
        const res = await setRates([rate]);
        expect([res.status, res.body.error]).toEqual([400, expect.stringContaining(field)]);
      }
    });

    test('no body, or a body of another shape: 400', async () => {
      for (const path of ['/api/cfo/fx-rates', '/api/cfo/reporting-currency']) {
        expect((await send('PUT', path)).status).toBe(400);
        expect((await send('PUT', path, { rates: 'EUR', reporting_currency: 7 })).status).toBe(400);
      }
      expect((await send('PUT', '/api/cfo/reporting-currency', { reporting_currency: 'XYZ' })).body.error).toContain('reporting_currency');
    });

    test('the same month and currencies twice in one request: 400 naming the repeat', async () => {
      const twice = { month: m(0), currency: 'USD', rate: '1' };
      const res = await setRates([twice, { ...twice, rate: '2' }]);
      expect([res.status, res.body.error]).toEqual([400, expect.stringContaining('rates[1]')]);
    });

    test('bad history queries: 400 naming the parameter', async () => {
      const cases: [string, string][] = [
        [`from=${m(0)}&to=${m(1)}`, '"from"'],
        [`from=${monthOf(T - 120)}&to=${m(0)}`, 'at most 120'],
        [`to=${monthOf(T + 1)}`, '"to"'],
        ['from=2026-1', '"from"'],
        ['currency=XYZ', '"currency"'],
        ['currency=usd', '"currency"'],
        ['months=3', '"months"'],
      ];
      for (const path of ['/api/cfo/arr', '/api/cfo/cohorts'])
        for (const [query, named] of cases) {
          const res = await send('GET', `${path}?${query}`);
          expect([path, query, res.status, res.body.error]).toEqual([path, query, 400, expect.stringContaining(named)]);
        }
      expect((await send('GET', `/api/cfo/arr?from=${monthOf(T - 119)}&to=${m(0)}`)).status).toBe(200);
    });
  });
}
