// The forecast from stored features (cfo-forecast/stored-features.ts) is the forecast from features
// computed per request, on a demo book: once built, after each kind of write to a customer's
// inputs before the job stores it (the marked customers computed by the read), after the job, and
// on a day other than the stored one (computed per request, and a rebuild asked for), and between
// every two parts of a rebuild run by the job. Both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/client.ts';
import { utcToday } from '../../src/lib/today.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import { storedBooks } from '../../src/modules/cfo-forecast/book-reader.ts';
import { bookAt, cfoForecast, forecastModel, keepForecasts, type BookReader } from '../../src/modules/cfo-forecast/forecast.ts';
import {
  type FeaturesPartArgs,
  featuresStanding,
  refreshStoredFeatures,
  storedBook,
} from '../../src/modules/cfo-forecast/stored-features.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { createKey } from '../../src/modules/keys/service.ts';
import { refreshStoredSums } from '../../src/modules/cfo-history/stored-sums.ts';
import { sweepCfoMarksJob } from '../../src/modules/cfo-forecast/jobs/sweep-marks.ts';
import { forecastFeaturesJob } from '../../src/modules/cfo-forecast/jobs/forecast-features.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { drainJobs } from '../helpers/jobs.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';

const today = utcToday();
const T = monthIndex(today.slice(0, 7));
const first = (j: number) => `${monthOf(T - j)}-01`;
const GRACE = 30;

/** The stored book, or a failure when it is not current: the stored path must not fall back. */
const storedOnly: BookReader = async (db, input) => {
  const standing = await featuresStanding(db, { orgId: input.orgId, today: input.day, graceDays: input.graceDays });
  if (!standing.current) throw new Error('the stored features are not current');
  return storedBook(db, { orgId: input.orgId, today: input.day, graceDays: input.graceDays, model: input.model });
};

for (const backend of BACKENDS) {
  describe(`stored forecast features (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    const send = async (method: string, path: string, body?: Record<string, unknown>) => {
      const res = await call(app, method, path, { key, body });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body.data as { id: string };
    };
    const forecast = (readBook: BookReader) =>
      cfoForecast(
        database.db,
        { orgId, today, months: 12, reportingCurrency: null, graceDays: GRACE, priorAnnualChurn: 0.12 },
        undefined,
        readBook,
      );
    const marks = async () =>
      (await queryRows<{ n: number }>(database.db, sql`select count(*)::int as n from cfo_feature_changes where org_id = ${orgId}`))[0]!.n;
    const refresh = (day = today) =>
      database.db.transaction((tx) => refreshStoredFeatures(tx as never, { orgId, today: day, graceDays: GRACE }));

    /** The stored book is the one computed per request, customer by customer and in its order, and
     * gives the same forecast, to the unit. */
    async function expectStoredIsLive() {
      const bookInput = { orgId, day: today, graceDays: GRACE, model: (await forecastModel(database.db, orgId, 0.12)).parameters };
      expect(await storedOnly(database.db, bookInput)).toEqual(await bookAt(database.db, bookInput));
      const live = await forecast(bookAt);
      expect(await forecast(storedOnly)).toEqual(live);
      return live;
    }

    /** A write: the read after it (before the job) gives the new forecast, a different one; the job
     * takes the marks off and the stored book still gives the forecast computed per request. */
    async function expectWriteReflected(write: () => Promise<unknown>) {
      const before = await forecast(bookAt);
      await write();
      expect(await marks()).toBeGreaterThan(0);
      const after = await expectStoredIsLive();
      expect(after).not.toEqual(before);
      expect(await refresh()).toBe('folded');
      expect(await marks()).toBe(0);
      await expectStoredIsLive();
    }

    const someCustomer = async (currency: string, offset = 0) => {
      const [row] = await queryRows<{ id: string }>(
        database.db,
        sql`select c.id from customers c join cfo_stored_features f on f.org_id = c.org_id and f.customer_id = c.id
            where c.org_id = ${orgId} and c.currency = ${currency} order by c.id limit 1 offset ${offset}`,
      );
      return row!.id;
    };

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await database.db.transaction(async (tx) => {
        const demo = await loadDemo(
          tx as never,
          { orgName: uniqueName('demo-features'), customers: 300, seed: 5, today, actor: 'test' },
          DEFAULT_ACTION_SETTINGS,
        );
        const { plaintext } = await createKey(tx as never, { org: demo.org.id, name: 'test key', expiresAt: null, actor: 'test' });
        return { orgId: demo.org.id, key: plaintext };
      });
      orgId = made.orgId;
      key = made.key;
      expect(await marks()).toBeGreaterThan(0);
      expect(await refresh()).toBe('rebuilt');
    }, 120_000);
    afterAll(() => database.dispose());

    test('built, the stored features give the forecast computed per request, and no customer is marked', async () => {
      expect(await marks()).toBe(0);
      const live = await expectStoredIsLive();
      expect(live.series.map((s) => s.currency)).toEqual(['EUR', 'GBP', 'USD']);
    });

    test("a contract's amount changed through the API", async () => {
      const customerId = await someCustomer('EUR');
      const [contract] = await queryRows<{ id: string }>(
        database.db,
        sql`select id from contracts where org_id = ${orgId} and customer_id = ${customerId} and status = 'active' order by id limit 1`,
      );
      await expectWriteReflected(() => send('PATCH', `/api/contracts/${contract!.id}`, { amount: 876_543 }));
    });

    test('an invoice long past due written through the API', async () => {
      const customerId = await someCustomer('USD');
      await expectWriteReflected(() =>
        send('POST', '/api/invoices', {
          customer_id: customerId,
          number: 'INV-STORED-1',
          status: 'open',
          amount_due: 9_000_000,
          amount_paid: 0,
          issued_at: `${first(4)}T00:00:00Z`,
          due_date: first(3),
        }),
      );
    });

    test('tickets moved to another customer by plain SQL (as the ticket pipeline writes them)', async () => {
      const from = await queryRows<{ customer_id: string }>(
        database.db,
        sql`select customer_id from tickets where org_id = ${orgId} and customer_id is not null
            group by customer_id order by count(*) desc, customer_id limit 1`,
      );
      const to = await someCustomer('GBP', 1);
      await expectWriteReflected(() =>
        database.db.execute(sql`update tickets set customer_id = ${to} where org_id = ${orgId} and customer_id = ${from[0]!.customer_id}`),
      );
    });

    test('a new customer with a contract through the API', async () => {
      await expectWriteReflected(async () => {
        const customer = await send('POST', '/api/customers', { name: 'New one', currency: 'EUR' });
        await send('POST', '/api/contracts', {
          customer_id: customer.id,
          name: 'Plan',
          start_date: first(2),
          billing_interval: 'year',
          amount: 480_000,
        });
      });
    });

    test("kept forecasts: an unchanged currency's months are the kept ones, a changed one's are made again", async () => {
      const forecastOf = keepForecasts();
      const kept = () =>
        cfoForecast(
          database.db,
          { orgId, today, months: 12, reportingCurrency: null, graceDays: GRACE, priorAnnualChurn: 0.12 },
          undefined,
          storedOnly,
          forecastOf,
        );
      const before = await kept();
      expect(before).toEqual(await forecast(bookAt));
      const customerId = await someCustomer('EUR', 2);
      const [contract] = await queryRows<{ id: string }>(
        database.db,
        sql`select id from contracts where org_id = ${orgId} and customer_id = ${customerId} and status = 'active' order by id limit 1`,
      );
      await send('PATCH', `/api/contracts/${contract!.id}`, { amount: 765_432 });
      const after = await kept();
      expect(after).toEqual(await forecast(bookAt));
      expect(after.series.map((s) => s.currency)).toEqual(['EUR', 'GBP', 'USD']);
      expect(after.series[0]!.months).not.toEqual(before.series[0]!.months);
      expect(after.series[1]!.months).toBe(before.series[1]!.months);
      expect(after.series[2]!.months).toBe(before.series[2]!.months);
    });

    test('the sweep asks for the jobs of an organisation with stored rows and marks, and not of one without stored rows', async () => {
      await database.db.transaction((tx) => refreshStoredSums(tx as never, { orgId, today }));
      const other = await send('POST', '/api/customers', { name: 'Marked', currency: 'GBP' });
      await send('POST', '/api/contracts', {
        customer_id: other.id,
        name: 'Plan',
        start_date: first(1),
        billing_interval: 'month',
        amount: 1_000,
      });
      const bare = await createOrgWithKey(database, {});
      await database.db.execute(sql`insert into cfo_feature_changes (org_id, customer_id) values (${bare.org.id}, 'cus_none')`);
      await database.db.execute(sql`delete from jobs where kind in ('cfo.month-sums', 'cfo.forecast-features')`);
      await database.db.transaction((tx) =>
        sweepCfoMarksJob.perform(tx as never, {}, { id: 'job_test', kind: 'cfo.sweep-marks', orgId: null, attempts: 1 }, DEFAULT_SETTINGS),
      );
      const queued = await queryRows<{ org_id: string; kind: string }>(
        database.db,
        sql`select org_id, kind from jobs where kind in ('cfo.month-sums', 'cfo.forecast-features') and state = 'queued'
            and org_id in (${orgId}, ${bare.org.id}) order by kind`,
      );
      expect(queued).toEqual([
        { org_id: orgId, kind: 'cfo.forecast-features' },
        { org_id: orgId, kind: 'cfo.month-sums' },
      ]);
    });

    test('on a day other than the stored one the features are computed per request and a rebuild is asked for', async () => {
      const yesterday = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
      // Stored as of a day before: a refresh never moves the stored day back, so built afresh.
      await database.db.execute(sql`delete from cfo_features_state where org_id = ${orgId}`);
      expect(await refresh(yesterday)).toBe('rebuilt');
      await database.db.execute(sql`delete from jobs where org_id = ${orgId} and kind = 'cfo.forecast-features'`);
      expect(await forecast(storedBooks())).toEqual(await forecast(bookAt));
      const [job] = await queryRows<{ n: number }>(
        database.db,
        sql`select count(*)::int as n from jobs where org_id = ${orgId} and kind = 'cfo.forecast-features' and state = 'queued'`,
      );
      expect(job!.n).toBe(1);
      // The job the read asked for, run by the job loop: its parts rebuild the stored features.
      await drainJobs(database.db, [forecastFeaturesJob]);
      expect((await featuresStanding(database.db, { orgId, today, graceDays: GRACE })).current).toBe(true);
      expect(await marks()).toBe(0);
      await expectStoredIsLive();
    });

    test('a rebuild run by the job in parts gives the book computed per request between every two parts, each part within its bound', async () => {
      // Stored as of a day in another month: most customers' shares differ from today's.
      const earlier = new Date(Date.parse(today) - 45 * 86_400_000).toISOString().slice(0, 10);
      // Stored as of a day before: a refresh never moves the stored day back, so built afresh.
      await database.db.execute(sql`delete from cfo_features_state where org_id = ${orgId}`);
      expect(await refresh(earlier)).toBe('rebuilt');
      const customers = (
        await queryRows<{ n: number }>(database.db, sql`select count(*)::int as n from customers where org_id = ${orgId}`)
      )[0]!.n;
      const bookInput = { orgId, day: today, graceDays: GRACE, model: (await forecastModel(database.db, orgId, 0.12)).parameters };
      const [contract] = await queryRows<{ id: string }>(
        database.db,
        sql`select id from contracts where org_id = ${orgId} and status = 'active' order by id desc limit 1`,
      );
      const units = localRunner(database.db, forecastFeaturesJob.units!, DEFAULT_SETTINGS);
      const parts: { step: string; customers: number; marksBefore: number; marksAfter: number }[] = [];
      const result = await forecastFeaturesJob.handle(
        { graceDays: GRACE, partSize: 40, markSize: 100 },
        {
          job: { id: 'job_test', kind: forecastFeaturesJob.kind, orgId, attempts: 1 },
          settings: DEFAULT_SETTINGS,
          run: (async (name: 'features-part', args: FeaturesPartArgs) => {
            const marksBefore = await marks();
            const part = await units.run(name, args);
            parts.push({ step: part.step, customers: part.customers, marksBefore, marksAfter: await marks() });
            // Until the last customers are marked the stored day stays, and the reads compute every customer.
            if (part.step === 'marking')
              expect((await featuresStanding(database.db, { orgId, today, graceDays: GRACE })).current).toBe(false);
            else expect(await storedOnly(database.db, bookInput)).toEqual(await bookAt(database.db, bookInput));
            // A write between two parts: its customer is marked (again) and computed by the reads.
            if (parts.length === 3) await send('PATCH', `/api/contracts/${contract!.id}`, { amount: 654_321 });
            return part;
          }) as never,
        },
      );
      expect(result).toEqual({ done: 'rebuilt', parts: parts.length });
      const marking = parts.findIndex((p) => p.step === 'marked');
      expect(marking).toBeGreaterThanOrEqual(2);
      for (const part of parts.slice(0, marking)) {
        expect(part.step).toBe('marking');
        expect(part.customers).toBeLessThanOrEqual(100);
      }
      expect(parts[marking]!.marksAfter).toBe(customers);
      const folds = parts.slice(marking + 1);
      expect(folds.length).toBeGreaterThanOrEqual(Math.ceil(customers / 40));
      for (const fold of folds) {
        expect(fold.step).toBe('folded');
        expect(fold.customers).toBeLessThanOrEqual(40);
        expect(fold.marksAfter).toBe(fold.marksBefore - fold.customers);
      }
      expect(await marks()).toBe(0);
      await expectStoredIsLive();
    });
  });
}
