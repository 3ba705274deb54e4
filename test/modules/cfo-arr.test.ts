// The ARR history, retention and cohorts (GET /api/cfo/arr, /api/cfo/cohorts) on a hand-built book
// whose every figure is known: a new customer whose notice runs out, an expansion by a second
// contract, a churn and a reactivation, a contraction recorded as a past revision (point in time),
// a cancellation with immediate effect, a draft, a contract that never reaches a month's close,
// and a second and third currency. Each month's close is also checked against the point-in-time
// rebuild (revintel_contracts_at), and the identity on every month. Both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/db/client.ts';
import { utcToday } from '../../src/lib/today.ts';
import { closingDay, lastDayOf, monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

const today = utcToday();
const T = monthIndex(today.slice(0, 7));
/** The month `j` months before this one, its first day, a day in it, its last day. */
const m = (j: number) => monthOf(T - j);
const first = (j: number) => `${m(j)}-01`;
const dayOf = (j: number, d: number) => `${m(j)}-${String(d).padStart(2, '0')}`;
const last = (j: number) => lastDayOf(m(j));

type Month = Record<string, number | string | boolean | null>;

for (const backend of BACKENDS) {
  describe(`ARR history of a hand-built book (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    const get = (path: string) => call(app, 'GET', path, { key });
    const post = async (path: string, body: Record<string, unknown>) => {
      const res = await call(app, 'POST', path, { key, body });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body.data as { id: string };
    };
    const customer = (name: string, currency = 'EUR') => post('/api/customers', { name, currency });
    const contract = (customerId: string, fields: Record<string, unknown>) =>
      post('/api/contracts', { customer_id: customerId, name: 'Plan', ...fields });

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      key = made.secret;
      orgId = made.org.id;
      // A: a year from 14 months ago, notice given 5 months ago: counts through the end of its term.
      const a = await customer('A');
      await contract(a.id, {
        start_date: first(14),
        end_date: last(3),
        billing_interval: 'year',
        amount: 120_000,
        status: 'cancelled',
        cancelled_at: dayOf(5, 10),
      });
      // B: monthly from 13 months ago, a second contract mid-month 10 months ago (expansion).
      const b = await customer('B');
      await contract(b.id, { start_date: first(13), billing_interval: 'month', amount: 1_000 });
      await contract(b.id, { start_date: dayOf(10, 15), billing_interval: 'month', amount: 500 });
      // C: a year that ended 8 months ago (churn the month after), back 5 months ago (reactivation).
      const c = await customer('C');
      await contract(c.id, { start_date: first(13), end_date: last(8), billing_interval: 'year', amount: 24_000, status: 'ended' });
      await contract(c.id, { start_date: first(5), billing_interval: 'quarter', amount: 7_500 });
      // D (USD): monthly from 12 months ago, cut to 1,500 a month 6 months ago, as recorded then.
      const d = await customer('D', 'USD');
      const dContract = await contract(d.id, { start_date: first(12), billing_interval: 'month', amount: 2_000 });
      await database.db.execute(sql`
        insert into contract_revisions (org_id, contract_id, revision, valid_from, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, deleted)
        select org_id, contract_id, 2, ${dayOf(6, 10)}::date, customer_id, status, start_date, end_date, auto_renew, billing_interval, 1500, currency, seats, cancelled_at, false
        from contract_revisions where contract_id = ${dContract.id} and revision = 1`);
      // E: a draft only. F: a contract that starts and ends between two closes.
      const e = await customer('E');
      await contract(e.id, { start_date: first(12), billing_interval: 'year', amount: 99_000, status: 'draft' });
      const f = await customer('F');
      await contract(f.id, { start_date: dayOf(9, 3), end_date: dayOf(9, 20), billing_interval: 'year', amount: 50_000, status: 'ended' });
      // G: cancelled with immediate effect on the 20th, 4 months ago.
      const g = await customer('G');
      await contract(g.id, {
        start_date: first(11),
        end_date: dayOf(4, 20),
        billing_interval: 'year',
        amount: 10_000,
        status: 'cancelled',
        cancelled_at: dayOf(4, 20),
      });
      // H (GBP): from the first of this month.
      const h = await customer('H', 'GBP');
      await contract(h.id, { start_date: first(0), billing_interval: 'year', amount: 5_000 });
    });
    afterAll(() => database.dispose());

    const history = async (query: string) => {
      const res = await get(`/api/cfo/arr?${query}`);
      expect(res.status).toBe(200);
      return res.body.data as { series: { currency: string; months: Month[] }[]; converted: boolean; missing_rates: unknown[] };
    };
    const series = async (currency: string) =>
      (await history(`from=${m(14)}&to=${m(0)}&currency=${currency}`)).series[0]!.months.map((x) => ({ ...x }));

    test('each month of EUR: movements, closes and customers as the book says', async () => {
      const months = await series('EUR');
      const brief = months.map((x) => [
        x.month,
        x.start_arr,
        x.new,
        x.reactivation,
        x.expansion,
        x.contraction,
        x.churn,
        x.end_arr,
        x.customers_end,
      ]);
      expect(brief).toEqual([
        [m(14), 0, 120_000, 0, 0, 0, 0, 120_000, 1],
        [m(13), 120_000, 36_000, 0, 0, 0, 0, 156_000, 3],
        [m(12), 156_000, 0, 0, 0, 0, 0, 156_000, 3],
        [m(11), 156_000, 10_000, 0, 0, 0, 0, 166_000, 4],
        [m(10), 166_000, 0, 0, 6_000, 0, 0, 172_000, 4],
        [m(9), 172_000, 0, 0, 0, 0, 0, 172_000, 4],
        [m(8), 172_000, 0, 0, 0, 0, 0, 172_000, 4],
        [m(7), 172_000, 0, 0, 0, 0, 24_000, 148_000, 3],
        [m(6), 148_000, 0, 0, 0, 0, 0, 148_000, 3],
        [m(5), 148_000, 0, 30_000, 0, 0, 0, 178_000, 4],
        [m(4), 178_000, 0, 0, 0, 0, 10_000, 168_000, 3],
        [m(3), 168_000, 0, 0, 0, 0, 0, 168_000, 3],
        [m(2), 168_000, 0, 0, 0, 0, 120_000, 48_000, 2],
        [m(1), 48_000, 0, 0, 0, 0, 0, 48_000, 2],
        [m(0), 48_000, 0, 0, 0, 0, 0, 48_000, 2],
      ]);
      expect(months.map((x) => x.partial)).toEqual(months.map((_, i) => i === months.length - 1));
      expect(months[5]).toMatchObject({ new_customers: 0, reactivated_customers: 0, churned_customers: 0 });
      expect(months[9]).toMatchObject({ reactivated_customers: 1, customers_start: 3, customers_end: 4 });
    });

    test('GRR and NRR over twelve months: null without ARR a year before', async () => {
      const months = await series('EUR');
      const at = (j: number) => months[14 - j]!;
      expect(at(3)).toMatchObject({ arr_12m_ago: 0, grr_12m: null, nrr_12m: null });
      // Twelve months before m(2) only A had ARR, and it has churned.
      expect(at(2)).toMatchObject({ arr_12m_ago: 120_000, retained_arr: 0, grr_12m: 0, nrr_12m: 0 });
      // A, B and C a year ago (156,000); now A 0, B 18,000 (capped at 12,000), C 30,000 (capped at 24,000).
      for (const j of [1, 0])
        expect(at(j)).toMatchObject({
          arr_12m_ago: 156_000,
          retained_arr: 48_000,
          retained_arr_capped: 36_000,
          grr_12m: Math.round((36 / 156) * 1e6) / 1e6,
          nrr_12m: Math.round((48 / 156) * 1e6) / 1e6,
        });
    });

    test('a contraction recorded as a past revision (USD), and a month under way (GBP)', async () => {
      const usd = await series('USD');
      expect(usd.find((x) => x.month === m(12))).toMatchObject({ new: 24_000, end_arr: 24_000 });
      expect(usd.find((x) => x.month === m(6))).toMatchObject({ start_arr: 24_000, contraction: 6_000, end_arr: 18_000 });
      expect(usd.at(-1)).toMatchObject({ end_arr: 18_000, grr_12m: 0.75, nrr_12m: 0.75 });
      const gbp = await series('GBP');
      expect(gbp.at(-1)).toMatchObject({ start_arr: 0, new: 5_000, end_arr: 5_000, partial: true });
    });

    test('every currency: the identity on every month, and each close as the point-in-time rebuild has it', async () => {
      const all = await history(`from=${m(16)}&to=${m(0)}`);
      expect(all.series.map((s) => s.currency)).toEqual(['EUR', 'GBP', 'USD']);
      for (const s of all.series)
        for (const x of s.months) {
          const n = x as Record<string, number>;
          expect(n.start_arr! + n.new! + n.reactivation! + n.expansion! - n.contraction! - n.churn!).toBe(n.end_arr!);
          const rebuilt = rowsOf<{ arr: string | null; customers: number }>(
            await database.db.execute(sql`
              select sum(k.arr)::text as arr, count(distinct k.customer_id)::int as customers
              from revintel_contracts_at(${orgId}, ${closingDay(String(x.month), today)}::date) k where k.counted and k.currency = ${s.currency}`),
          )[0]!;
          expect([x.month, n.end_arr, n.customers_end]).toEqual([x.month, Number(rebuilt.arr ?? 0), rebuilt.customers]);
        }
    });

    test('cohorts: net ARR and logo retention by first month with ARR', async () => {
      const res = await get(`/api/cfo/cohorts?from=${m(14)}&to=${m(0)}&currency=EUR`);
      expect(res.status).toBe(200);
      const cohorts = res.body.data.cohorts as { month: string; customers: number; start_arr: number; ages: Month[] }[];
      expect(cohorts.map((c) => [c.month, c.customers, c.start_arr])).toEqual([
        [m(14), 1, 120_000],
        [m(13), 2, 36_000],
        [m(11), 1, 10_000],
      ]);
      const b = cohorts[1]!.ages;
      expect(b.length).toBe(14);
      expect(b.map((x) => [x.k, x.arr, x.customers])).toEqual([
        [0, 36_000, 2],
        [1, 36_000, 2],
        [2, 36_000, 2],
        [3, 42_000, 2],
        [4, 42_000, 2],
        [5, 42_000, 2],
        [6, 18_000, 1],
        [7, 18_000, 1],
        [8, 48_000, 2],
        [9, 48_000, 2],
        [10, 48_000, 2],
        [11, 48_000, 2],
        [12, 48_000, 2],
        [13, 48_000, 2],
      ]);
      expect(b[6]).toMatchObject({ month: m(7), net_arr_retention: 0.5, logo_retention: 0.5 });
      expect(b[13]).toMatchObject({ net_arr_retention: Math.round((48 / 36) * 1e6) / 1e6, logo_retention: 1 });
      expect(cohorts[0]!.ages[12]).toMatchObject({ month: m(2), arr: 0, customers: 0, net_arr_retention: 0 });
      expect(cohorts[2]!.ages.map((x) => x.customers)).toEqual([1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]);
    });

    test('a history read again is kept until the next write, which the read after sees', async () => {
      const before = await history(`from=${m(1)}&to=${m(0)}`);
      expect((await history(`from=${m(1)}&to=${m(0)}`)).series).toEqual(before.series);
      const i = await customer('I', 'CHF');
      await contract(i.id, { start_date: first(1), billing_interval: 'month', amount: 700 });
      const after = await history(`from=${m(1)}&to=${m(0)}`);
      expect(after.series.map((s) => s.currency)).toEqual(['CHF', 'EUR', 'GBP', 'USD']);
      expect(after.series[0]!.months.map((x) => [x.new, x.end_arr])).toEqual([
        [8_400, 8_400],
        [0, 8_400],
      ]);
    });
  });
}
