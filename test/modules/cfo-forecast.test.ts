// GET /api/cfo/forecast on a hand-built book whose distribution is known exactly: a stored 365-day
// model gives every customer the same chance to churn within a year (30 %), so each month's bands
// are quantiles of at most 2³ outcomes. A yearly customer whose term ends next month, one whose term
// ends the month after, a monthly customer who expanded three months ago, a USD customer, and a
// customer who left last year. Both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { newId } from '../../src/lib/ids.ts';
import { utcToday } from '../../src/lib/today.ts';
import { lastDayOf, monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import { LEVELS, quantileOf, type Quantiles } from '../../src/modules/cfo-forecast/distribution.ts';
import { logit } from '../../src/modules/predictions/logistic.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

const quantilesOf = (outcomes: { value: number; probability: number }[]): Quantiles => ({
  p05: quantileOf(outcomes, LEVELS.p05),
  p10: quantileOf(outcomes, LEVELS.p10),
  p50: quantileOf(outcomes, LEVELS.p50),
  p90: quantileOf(outcomes, LEVELS.p90),
  p95: quantileOf(outcomes, LEVELS.p95),
});

const today = utcToday();
const T = monthIndex(today.slice(0, 7));
const first = (j: number) => `${monthOf(T - j)}-01`;
const P = 0.3;

type ForecastMonth = Record<string, number | string | null>;
interface Answer {
  series: { currency: string; customers: number; book_arr: number; net_expansion_rate_12m: number | null; months: ForecastMonth[] }[];
  converted: boolean;
  missing_rates: { currency: string; month: string }[];
  model: { id: string | null; kind: string; horizon_days: number };
}

/** The quantiles of Σ a·kept over every outcome of customers kept with the chances given. */
function enumerated(book: { arr: number; keep: number }[]) {
  const outcomes: { value: number; probability: number }[] = [];
  for (let mask = 0; mask < 1 << book.length; mask++) {
    let value = 0;
    let probability = 1;
    book.forEach((c, i) => {
      const kept = (mask >> i) & 1;
      value += kept ? c.arr : 0;
      probability *= kept ? c.keep : 1 - c.keep;
    });
    outcomes.push({ value, probability });
  }
  return quantilesOf(outcomes);
}

for (const backend of BACKENDS) {
  describe(`the forecast of a hand-built book (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let otherKey: string;
    const modelId = newId('mdl');
    const get = (path: string, as = key) => call(app, 'GET', path, { key: as });
    const send = async (method: string, path: string, body: Record<string, unknown>) => {
      const res = await call(app, method, path, { key, body });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body.data as { id: string };
    };
    const customer = (name: string, currency = 'EUR') => send('POST', '/api/customers', { name, currency });
    const contract = (customerId: string, fields: Record<string, unknown>) =>
      send('POST', '/api/contracts', { customer_id: customerId, name: 'Plan', ...fields });

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      key = made.secret;
      otherKey = (await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 })).secret;
      // Every customer: a 30 % chance to churn within a year.
      await queryText(
        database.db,
        `insert into prediction_models (id, org_id, kind, status, horizon_days, parameters, metrics)
         values ($1, $2, 'logistic', 'active', 365, $3::jsonb, '{}'::jsonb)`,
        [modelId, made.org.id, JSON.stringify({ base: logit(P), features: [] })],
      );
      const a = await customer('A');
      await contract(a.id, { start_date: first(14), end_date: `${monthOf(T + 1)}-15`, billing_interval: 'year', amount: 120_000 });
      const b = await customer('B');
      await contract(b.id, { start_date: first(6), billing_interval: 'month', amount: 2_000 });
      await contract(b.id, { start_date: first(3), billing_interval: 'month', amount: 500 });
      const c = await customer('C');
      await contract(c.id, { start_date: first(10), end_date: `${monthOf(T + 2)}-10`, billing_interval: 'year', amount: 60_000 });
      const d = await customer('D', 'USD');
      await contract(d.id, { start_date: first(5), billing_interval: 'month', amount: 1_000 });
      const gone = await customer('Gone');
      await contract(gone.id, {
        start_date: first(20),
        end_date: lastDayOf(monthOf(T - 9)),
        billing_interval: 'year',
        amount: 99_000,
        status: 'ended',
      });
    }, 300_000);
    afterAll(() => database.dispose());

    const forecast = async (query: string) => {
      const res = await get(`/api/cfo/forecast?${query}`);
      expect(res.status).toBe(200);
      return res.body.data as Answer;
    };

    test("each month's bands are the quantiles of the book's outcomes, exactly", async () => {
      const answer = await forecast('months=3&currency=EUR');
      expect(answer.model).toEqual({ id: modelId, kind: 'logistic', horizon_days: 365 });
      const [eur] = answer.series;
      expect(eur!.customers).toBe(3);
      expect(eur!.book_arr).toBe(120_000 + 30_000 + 60_000);
      const monthly = (m: number) => (1 - P) ** (m / 12);
      const books = [
        // Month 1: A's term ends mid-month; C's not yet.
        [
          { arr: 120_000, keep: 1 - P },
          { arr: 30_000, keep: monthly(1) },
          { arr: 60_000, keep: 1 },
        ],
        // Month 2: C's term has ended too.
        [
          { arr: 120_000, keep: 1 - P },
          { arr: 30_000, keep: monthly(2) },
          { arr: 60_000, keep: 1 - P },
        ],
        [
          { arr: 120_000, keep: 1 - P },
          { arr: 30_000, keep: monthly(3) },
          { arr: 60_000, keep: 1 - P },
        ],
      ];
      books.forEach((book, i) => {
        const month = eur!.months[i]!;
        expect(month.month).toBe(monthOf(T + i + 1));
        const expected = book.reduce((s, c) => s + c.arr * c.keep, 0);
        expect(month.expected_arr).toBe(Math.round(expected));
        expect(month.expected_churned_customers).toBeCloseTo(
          book.reduce((s, c) => s + 1 - c.keep, 0),
          3,
        );
        expect(month.grr_forecast).toBeCloseTo(expected / 210_000, 6);
        expect(month.error_bound).toBe(0);
        expect({ p05: month.p05, p10: month.p10, p50: month.p50, p90: month.p90, p95: month.p95 }).toEqual(enumerated(book));
      });
    });

    test('the expansion-adjusted figure grows at the trailing twelve months’ net expansion, apart', async () => {
      const [eur] = (await forecast('months=12&currency=EUR')).series;
      // Twelve months ago the book was A and the customer gone since (219,000); B's second contract added 6,000.
      const rate = 6_000 / 219_000;
      expect(eur!.net_expansion_rate_12m).toBeCloseTo(rate, 6);
      for (const month of eur!.months)
        expect(
          Math.abs(Number(month.expected_arr_with_expansion) - Number(month.expected_arr) * (1 + rate) ** (Number(month.m) / 12)),
        ).toBeLessThanOrEqual(1);
    });

    test('every currency apart; with a rate for this month, one series in the reporting currency', async () => {
      const apart = await forecast('months=1');
      expect(apart.series.map((s) => [s.currency, s.book_arr])).toEqual([
        ['EUR', 210_000],
        ['USD', 12_000],
      ]);
      await send('PUT', '/api/cfo/reporting-currency', { reporting_currency: 'EUR' });
      const lacking = await forecast('months=1&currency=reporting');
      expect(lacking.converted).toBe(false);
      expect(lacking.missing_rates).toEqual([{ currency: 'USD', month: today.slice(0, 7) }]);
      await send('PUT', '/api/cfo/fx-rates', { rates: [{ month: today.slice(0, 7), currency: 'USD', rate: '0.5' }] });
      const converted = await forecast('months=1&currency=reporting');
      expect(converted.converted).toBe(true);
      expect(converted.series.map((s) => [s.currency, s.customers, s.book_arr])).toEqual([['EUR', 4, 216_000]]);
    });

    test('another organisation sees none of this book', async () => {
      const res = await get('/api/cfo/forecast', otherKey);
      expect(res.status).toBe(200);
      expect(res.body.data.series).toEqual([]);
      expect(res.body.data.model.kind).toBe('prior');
    });

    test('bad parameters are a 400 naming them', async () => {
      for (const [query, name] of [
        ['months=25', 'months'],
        ['months=0', 'months'],
        ['months=x', 'months'],
        ['currency=XYZ', 'currency'],
        ['horizon=3', 'horizon'],
      ] as const) {
        const res = await get(`/api/cfo/forecast?${query}`);
        expect([query, res.status, res.body.error]).toEqual([query, 400, expect.stringContaining(`"${name}"`)]);
      }
    });
  });
}
