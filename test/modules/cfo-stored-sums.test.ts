// The stored month sums (cfo-history/stored-sums.ts) give the ARR history the live query gives, on
// a demo book: once built, after each kind of write before the job folds it in (the marked
// customers recomputed by the read), after the fold, and on a day other than the stored one (the
// live answer, and a rebuild asked for), and between every two parts of a rebuild run by the job.
// Both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/client.ts';
import { utcToday } from '../../src/lib/today.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { arrHistory, monthSums, type SumsReader } from '../../src/modules/cfo-history/history.ts';
import { monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import { refreshStoredSums, type SumsPartArgs } from '../../src/modules/cfo-history/stored-sums.ts';
import { storedSums } from '../../src/modules/cfo-history/sums-reader.ts';
import { monthSumsJob } from '../../src/modules/cfo-history/jobs/month-sums.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { drainJobs } from '../helpers/jobs.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { importBatch } from '../../src/modules/imports/service.ts';
import { createKey } from '../../src/modules/keys/service.ts';
import { BACKENDS, buildApp, call, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';

const today = utcToday();
const T = monthIndex(today.slice(0, 7));
const to = monthOf(T);
const from = monthOf(T - 119);
const first = (j: number) => `${monthOf(T - j)}-01`;

/** A reader that refuses to answer: the stored path must not need the live query. */
const noFallback: SumsReader = () => Promise.reject(new Error('the stored sums fell back to the live query'));

for (const backend of BACKENDS) {
  describe(`stored month sums (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    const send = async (method: string, path: string, body?: Record<string, unknown>) => {
      const res = await call(app, method, path, { key, body });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body.data as { id: string };
    };
    const history = (readSums: SumsReader, currency?: string, day = today) =>
      arrHistory(database.db, { orgId, from, to, today: day, currency, reportingCurrency: null }, readSums);
    const marks = async () =>
      (await queryRows<{ n: number }>(database.db, sql`select count(*)::int as n from cfo_sums_changes where org_id = ${orgId}`))[0]!.n;
    const storedDay = async () =>
      (await queryRows<{ as_of: string }>(database.db, sql`select as_of::text as as_of from cfo_sums_state where org_id = ${orgId}`))[0]!
        .as_of;
    const fold = () => database.db.transaction((tx) => refreshStoredSums(tx as never, { orgId, today }));

    /** The stored answer is the live one, for every currency at once and for one. */
    async function expectStoredIsLive() {
      const live = await history(monthSums);
      expect(await history(storedSums(noFallback))).toEqual(live);
      expect(await history(storedSums(noFallback), 'EUR')).toEqual(await history(monthSums, 'EUR'));
      return live;
    }

    /** A write: the read after it (before any fold) gives the new live answer, a different one;
     * the fold takes the marks off and the stored answer is still the live one. */
    async function expectWriteReflected(write: () => Promise<unknown>) {
      const before = await history(monthSums);
      await write();
      expect(await marks()).toBeGreaterThan(0);
      const after = await expectStoredIsLive();
      expect(after).not.toEqual(before);
      expect(await fold()).toBe('folded');
      expect(await marks()).toBe(0);
      await expectStoredIsLive();
    }

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await database.db.transaction(async (tx) => {
        const demo = await loadDemo(
          tx as never,
          { orgName: uniqueName('demo-sums'), customers: 300, seed: 7, today, actor: 'test' },
          DEFAULT_ACTION_SETTINGS,
        );
        const { plaintext } = await createKey(tx as never, { org: demo.org.id, name: 'test key', expiresAt: null, actor: 'test' });
        return { orgId: demo.org.id, key: plaintext };
      });
      orgId = made.orgId;
      key = made.key;
      expect(await marks()).toBeGreaterThan(0);
      expect(await database.db.transaction((tx) => refreshStoredSums(tx as never, { orgId, today }))).toBe('rebuilt');
    }, 120_000);
    afterAll(() => database.dispose());

    test('built, the stored sums answer as the live query does, and no customer is marked', async () => {
      expect(await marks()).toBe(0);
      const live = await expectStoredIsLive();
      expect(live.series.map((s) => s.currency)).toEqual(['EUR', 'GBP', 'USD']);
    });

    test('a new customer and contract written through the API', async () => {
      await expectWriteReflected(async () => {
        const customer = await send('POST', '/api/customers', { name: 'New one', currency: 'EUR' });
        await send('POST', '/api/contracts', {
          customer_id: customer.id,
          name: 'Plan',
          start_date: first(2),
          billing_interval: 'month',
          amount: 4_321,
        });
      });
    });

    test("a contract's amount changed and another contract deleted through the API", async () => {
      const [a, b] = await queryRows<{ id: string }>(
        database.db,
        sql`select id from contracts where org_id = ${orgId} and status = 'active' and currency = 'EUR' order by id limit 2`,
      );
      await expectWriteReflected(() => send('PATCH', `/api/contracts/${a!.id}`, { amount: 987_654 }));
      await expectWriteReflected(() => send('DELETE', `/api/contracts/${b!.id}`));
    });

    test('contracts imported in a batch', async () => {
      const customers = await queryRows<{ id: string }>(
        database.db,
        sql`select id from customers where org_id = ${orgId} and currency = 'USD' order by id limit 3`,
      );
      await expectWriteReflected(async () => {
        const result = await database.db.transaction((tx) =>
          importBatch(tx as never, {
            entity: 'contracts',
            orgId,
            rows: customers.map((c, i) => ({
              row: i + 1,
              input: {
                external_id: `imported-${i}`,
                customer_id: c.id,
                name: 'Add-on',
                start_date: first(5 + i),
                billing_interval: 'year',
                amount: 12_000,
              },
            })),
          }),
        );
        expect(result.rejected).toEqual([]);
      });
    });

    test('a revision recorded in the past by plain SQL (as billing sync and back-dated changes write them)', async () => {
      const [contract] = await queryRows<{ id: string }>(
        database.db,
        sql`select id from contracts where org_id = ${orgId} and status = 'active' and currency = 'GBP' order by id limit 1`,
      );
      await expectWriteReflected(() =>
        database.db.execute(sql`
          insert into contract_revisions (org_id, contract_id, revision, valid_from, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, deleted)
          select org_id, contract_id, revision + 1, ${first(3)}::date, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount * 2, currency, seats, cancelled_at, false
          from contract_revisions where contract_id = ${contract!.id} order by revision desc limit 1`),
      );
    });

    test('on a day other than the stored one the live query answers and a refresh is asked for; the refresh rebuilds', async () => {
      const yesterday = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
      // Stored as of a day before: a refresh never moves the stored day back, so built afresh.
      await database.db.execute(sql`delete from cfo_sums_state where org_id = ${orgId}`);
      await database.db.transaction((tx) => refreshStoredSums(tx as never, { orgId, today: yesterday }));
      await database.db.execute(sql`delete from jobs where org_id = ${orgId} and kind = 'cfo.month-sums'`);
      const live = await history(monthSums);
      let fellBack = 0;
      const counted: SumsReader = (db, input) => {
        fellBack++;
        return monthSums(db, input);
      };
      expect(await history(storedSums(counted))).toEqual(live);
      expect(fellBack).toBe(1);
      const [job] = await queryRows<{ n: number }>(
        database.db,
        sql`select count(*)::int as n from jobs where org_id = ${orgId} and kind = 'cfo.month-sums' and state = 'queued'`,
      );
      expect(job!.n).toBe(1);
      // The job the read asked for, run by the job loop: its parts rebuild the stored sums.
      await drainJobs(database.db, [monthSumsJob]);
      expect(await storedDay()).toBe(today);
      expect(await marks()).toBe(0);
      await expectStoredIsLive();
    });

    test('a rebuild run by the job in parts answers as the live query does between every two parts, each part within its bound', async () => {
      // Stored as of a day in another month: most customers' shares differ from today's.
      const earlier = new Date(Date.parse(today) - 400 * 86_400_000).toISOString().slice(0, 10);
      // Stored as of a day before: a refresh never moves the stored day back, so built afresh.
      await database.db.execute(sql`delete from cfo_sums_state where org_id = ${orgId}`);
      await database.db.transaction((tx) => refreshStoredSums(tx as never, { orgId, today: earlier }));
      expect(await history(storedSums(noFallback), undefined, earlier)).not.toEqual(await history(monthSums));
      const customers = (
        await queryRows<{ n: number }>(
          database.db,
          sql`select count(distinct customer_id)::int as n from contract_revisions where org_id = ${orgId}`,
        )
      )[0]!.n;
      const [contract] = await queryRows<{ id: string }>(
        database.db,
        sql`select id from contracts where org_id = ${orgId} and status = 'active' and currency = 'EUR' order by id desc limit 1`,
      );
      const units = localRunner(database.db, monthSumsJob.units!, DEFAULT_SETTINGS);
      const parts: { step: string; customers: number; marksBefore: number; marksAfter: number }[] = [];
      const result = await monthSumsJob.handle(
        { partSize: 40, markSize: 100 },
        {
          job: { id: 'job_test', kind: monthSumsJob.kind, orgId, attempts: 1 },
          settings: DEFAULT_SETTINGS,
          run: (async (name: 'sums-part', args: SumsPartArgs) => {
            const marksBefore = await marks();
            const part = await units.run(name, args);
            parts.push({ step: part.step, customers: part.customers, marksBefore, marksAfter: await marks() });
            // Until the last customers are marked the stored day stays, and the reads answer live.
            if (part.step === 'marking') expect(await storedDay()).toBe(earlier);
            else await expectStoredIsLive();
            // A write between two parts: its customer is marked (again) and recomputed by the reads.
            if (parts.length === 3) await send('PATCH', `/api/contracts/${contract!.id}`, { amount: 123_456 });
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
      // The totals are the sum of the stored shares (what the reads take marked shares off).
      const [apart] = await queryRows<{ n: number }>(
        database.db,
        sql`select count(*)::int as n from (
              (select kind, currency, k, new, churn, retained from cfo_month_sums where org_id = ${orgId}
               except select kind, currency, k, sum(new)::bigint, sum(churn)::bigint, sum(retained)::bigint
               from cfo_customer_month_sums where org_id = ${orgId} group by kind, currency, k)
              union all
              (select kind, currency, k, sum(new)::bigint, sum(churn)::bigint, sum(retained)::bigint
               from cfo_customer_month_sums where org_id = ${orgId} group by kind, currency, k
               having sum(new) <> 0 or sum(churn) <> 0 or sum(retained) <> 0
               except select kind, currency, k, new, churn, retained from cfo_month_sums where org_id = ${orgId})
            ) d`,
      );
      expect(apart!.n).toBe(0);
    });

    test('a run of the day before leaves the stored sums of today as they are (a run still going at midnight)', async () => {
      await fold();
      const yesterday = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
      await database.db.execute(sql`insert into cfo_sums_changes (org_id, customer_id)
        select org_id, id from customers where org_id = ${orgId} order by id limit 3 on conflict do nothing`);
      expect(await database.db.transaction((tx) => refreshStoredSums(tx as never, { orgId, today: yesterday }))).toBe('folded');
      expect(await storedDay()).toBe(today);
      expect(await marks()).toBe(3);
      await expectStoredIsLive();
    });
  });
}
