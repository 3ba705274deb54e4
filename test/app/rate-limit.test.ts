// docs/api.md "Rate limits": both windows, per organisation, the headers on every response, 429
// with Retry-After, exact under concurrency — in memory, in PostgreSQL and in Redis.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import Redis from 'ioredis';
import {
  BACKENDS,
  TEST_DATABASE_URL,
  awayFromMinuteBoundary,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  type TestDatabase,
} from '../helpers/harness.ts';
import { connectPostgres } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { memoryRateLimiter, postgresRateLimiter, redisRateLimiter, type RateLimiter } from '../../src/lib/rate-limiter.ts';

const TEST_REDIS_URL = process.env.TEST_REDIS_URL || null;

interface StoreCase {
  name: string;
  make: () => Promise<{ limiter: RateLimiter; close: () => Promise<void> }>;
}

const STORES: StoreCase[] = [{ name: 'memory', make: async () => ({ limiter: memoryRateLimiter(), close: async () => {} }) }];
if (TEST_DATABASE_URL) {
  STORES.push({
    name: 'postgres',
    make: async () => {
      const pg = connectPostgres(TEST_DATABASE_URL!, 10);
      // The counters' table comes with the migrations: this file may be the first on a new database.
      await runMigrations(pg, TEST_DATABASE_URL);
      return { limiter: postgresRateLimiter(pg.sql!), close: () => pg.close() };
    },
  });
}
if (TEST_REDIS_URL) {
  STORES.push({
    name: 'redis',
    make: async () => {
      const client = new Redis(TEST_REDIS_URL);
      return { limiter: redisRateLimiter(client), close: async () => void (await client.quit()) };
    },
  });
}

for (const store of STORES) {
  describe(`rate-limit windows (${store.name} store)`, () => {
    let limiter: RateLimiter;
    let closeStore: () => Promise<void>;
    // Counters in PostgreSQL and Redis outlive a run: every run counts under subjects of its own.
    const run = Math.random().toString(36).slice(2);
    beforeAll(async () => {
      ({ limiter, close: closeStore } = await store.make());
    });
    afterAll(() => closeStore());

    test('fixed windows aligned to the UTC minute and day; the window in force is the one with fewest left', async () => {
      // Times in the future, not the past (Redis expires a counter whose window has ended), and well
      // inside one day: ten minutes into tomorrow (UTC).
      const tomorrow = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000;
      const minuteStart = tomorrow + 10 * 60_000;
      const now = minuteStart + 42_500;
      const nextMidnight = tomorrow + 86_400_000;
      const first = await limiter.consume(`subject-a-${run}`, { perMinute: 3, perDay: 5 }, now);
      expect(first.allowed).toBe(true);
      expect(first.minute).toEqual({ limit: 3, remaining: 2, reset: minuteStart / 1000 + 60 });
      expect(first.day).toEqual({ limit: 5, remaining: 4, reset: nextMidnight / 1000 });
      expect(first.inForce).toBe(first.minute);
      await limiter.consume(`subject-a-${run}`, { perMinute: 3, perDay: 5 }, now);
      await limiter.consume(`subject-a-${run}`, { perMinute: 3, perDay: 5 }, now);
      const refused = await limiter.consume(`subject-a-${run}`, { perMinute: 3, perDay: 5 }, now);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfter).toBe(18); // hh:mm:42.5 -> the next minute
      // the next minute is a new window; the day remembers
      const nextMinute = await limiter.consume(`subject-a-${run}`, { perMinute: 3, perDay: 5 }, now + 18_000);
      expect(nextMinute.allowed).toBe(true);
      expect(nextMinute.minute.remaining).toBe(2);
      expect(nextMinute.day.remaining).toBe(1);
      expect(nextMinute.inForce).toBe(nextMinute.day);
    });

    test('a request refused by the day counts in neither window', async () => {
      const now = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000 - 60_000; // a minute before midnight UTC
      const limits = { perMinute: 10, perDay: 2 };
      await limiter.consume(`subject-b-${run}`, limits, now);
      await limiter.consume(`subject-b-${run}`, limits, now);
      const refused = await limiter.consume(`subject-b-${run}`, limits, now);
      expect(refused.allowed).toBe(false);
      expect(refused.minute.remaining).toBe(8);
      expect(refused.inForce).toBe(refused.day);
      expect(refused.retryAfter).toBe(60); // the day ends at midnight UTC
      const state = await limiter.peek(`subject-b-${run}`, limits, now);
      expect(state.minute.remaining).toBe(8);
      expect(state.day.remaining).toBe(0);
      // the refusals left no trace: a day limit raised mid-window admits exactly the difference
      for (let i = 0; i < 20; i++) await limiter.consume(`subject-b-${run}`, limits, now);
      const raised = { perMinute: 10, perDay: 4 };
      expect((await limiter.consume(`subject-b-${run}`, raised, now)).allowed).toBe(true);
      expect((await limiter.consume(`subject-b-${run}`, raised, now)).allowed).toBe(true);
      expect((await limiter.consume(`subject-b-${run}`, raised, now)).allowed).toBe(false);
      // midnight: both windows start over
      expect((await limiter.consume(`subject-b-${run}`, limits, now + 60_000)).allowed).toBe(true);
    });

    test('a request refused by the minute counts in neither window either', async () => {
      const now = (Math.floor(Date.now() / 60_000) + 1) * 60_000;
      for (let i = 0; i < 30; i++) await limiter.consume(`subject-c-${run}`, { perMinute: 5, perDay: 100 }, now);
      const state = await limiter.peek(`subject-c-${run}`, { perMinute: 5, perDay: 100 }, now);
      expect(state.day.remaining).toBe(95);
      // raising the minute limit mid-minute admits at once
      expect((await limiter.consume(`subject-c-${run}`, { perMinute: 6, perDay: 100 }, now)).allowed).toBe(true);
      expect((await limiter.consume(`subject-c-${run}`, { perMinute: 6, perDay: 100 }, now)).allowed).toBe(false);
    });
  });
}

if (TEST_DATABASE_URL) {
  describe('PostgreSQL store: batches decided by the database', () => {
    const pools = [connectPostgres(TEST_DATABASE_URL!, 5), connectPostgres(TEST_DATABASE_URL!, 5)];
    const [one, two] = pools.map((pool) => postgresRateLimiter(pool.sql!));
    beforeAll(() => runMigrations(pools[0]!, TEST_DATABASE_URL));
    afterAll(async () => {
      for (const pool of pools) await pool.close();
    });

    test('two limiters (two processes) on one database: 300 concurrent requests, exactly 60 pass, each with its own count', async () => {
      await awayFromMinuteBoundary();
      const subject = `batch-${Math.random()}`;
      const decisions = await Promise.all(
        Array.from({ length: 300 }, (_, i) => (i % 2 ? one! : two!).consume(subject, { perMinute: 60, perDay: 1_000 })),
      );
      const admitted = decisions.filter((d) => d.allowed);
      expect(admitted).toHaveLength(60);
      expect(new Set(admitted.map((d) => d.minute.remaining)).size).toBe(60);
      const state = await one!.peek(subject, { perMinute: 60, perDay: 1_000 });
      expect(state.minute.remaining).toBe(0);
      expect(state.day.remaining).toBe(940); // the 240 refused counted nowhere
    });

    test('counters cleared behind its back are recreated, not silently skipped', async () => {
      await awayFromMinuteBoundary();
      const subject = `cleared-${Math.random()}`;
      await one!.consume(subject, { perMinute: 5, perDay: 100 });
      await pools[0]!.sql!`delete from rate_limit_counters where key like ${`${subject}%`}`;
      await one!.consume(subject, { perMinute: 5, perDay: 100 });
      expect((await one!.peek(subject, { perMinute: 5, perDay: 100 })).minute.remaining).toBe(4);
    });
  });
}

for (const backend of BACKENDS) {
  for (const store of STORES) {
    if (store.name === 'postgres' && backend === 'embedded') continue; // the shared stores serve PostgreSQL deployments
    describe(`rate limits through the API (${backend} database, ${store.name} store)`, () => {
      let database: TestDatabase;
      let limiter: RateLimiter;
      let closeStore: () => Promise<void>;
      let app: ReturnType<typeof buildApp>['app'];

      beforeAll(async () => {
        database = await openTestDatabase(backend);
        ({ limiter, close: closeStore } = await store.make());
        app = buildApp(database, { limiter }).app;
      });
      afterAll(async () => {
        await closeStore();
        await database.dispose();
      });

      test('growth_agents: 60 a minute, then 429 with Retry-After; headers count down on every answer', async () => {
        await awayFromMinuteBoundary();
        const { secret } = await createOrgWithKey(database, { plan: 'growth_agents' });
        for (let i = 1; i <= 60; i++) {
          // a mix of found and not-found routes: every authenticated request counts
          const result = await call(app, 'GET', i % 2 ? '/api/me' : '/api/no-such-thing', { key: secret });
          expect(result.status).toBe(i % 2 ? 200 : 404);
          expect(result.headers.get('x-ratelimit-limit')).toBe('60');
          expect(result.headers.get('x-ratelimit-remaining')).toBe(String(60 - i));
        }
        const refused = await call(app, 'GET', '/api/me', { key: secret });
        expect(refused.status).toBe(429);
        expect(refused.body).toMatchObject({ success: false, data: null });
        expect(refused.body.error).toContain('60 requests per minute');
        const retryAfter = Number(refused.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
        expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
        expect(Number(refused.headers.get('x-ratelimit-reset'))).toBe(Math.ceil(Date.now() / 60_000) * 60);
        expect(refused.headers.get('x-ratelimit-remaining-day')).toBe(String(10_000 - 60));
      });

      test('200 concurrent requests against a 60/min organisation: exactly 60 pass', async () => {
        await awayFromMinuteBoundary();
        const { secret } = await createOrgWithKey(database, { plan: 'growth_agents' });
        const results = await Promise.all(Array.from({ length: 200 }, () => call(app, 'GET', '/api/me', { key: secret })));
        const statuses = results.map((r) => r.status);
        expect(statuses.filter((s) => s === 200).length).toBe(60);
        expect(statuses.filter((s) => s === 429).length).toBe(140);
        const remaining = results.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-ratelimit-remaining')));
        expect(new Set(remaining).size).toBe(60); // each admitted request got its own count
      });

      test('operator overrides replace the plan; the day window is enforced too', async () => {
        await awayFromMinuteBoundary();
        const { secret } = await createOrgWithKey(database, { plan: 'enterprise', perDay: 3 });
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++) statuses.push((await call(app, 'GET', '/api/me', { key: secret })).status);
        expect(statuses).toEqual([200, 200, 200, 429, 429]);
        const refused = await call(app, 'GET', '/api/me', { key: secret });
        expect(refused.headers.get('x-ratelimit-limit')).toBe('3'); // the day is in force
        expect(refused.headers.get('x-ratelimit-limit-minute')).toBe('300');
        expect(refused.headers.get('x-ratelimit-remaining-minute')).toBe('297'); // refusals count nowhere
        expect(refused.body.error).toContain('3 requests per day');
      });

      test('organisations do not share a budget', async () => {
        await awayFromMinuteBoundary();
        const a = await createOrgWithKey(database, { perMinute: 2 });
        const b = await createOrgWithKey(database, { perMinute: 2 });
        for (let i = 0; i < 2; i++) expect((await call(app, 'GET', '/api/me', { key: a.secret })).status).toBe(200);
        expect((await call(app, 'GET', '/api/me', { key: a.secret })).status).toBe(429);
        expect((await call(app, 'GET', '/api/me', { key: b.secret })).status).toBe(200);
      });

      test('unauthenticated requests are limited per client address and carry the headers', async () => {
        await awayFromMinuteBoundary();
        const { app: strict } = buildApp(database, {
          limiter,
          config: { ...buildApp(database).config, anonLimitPerMinute: 3, trustProxy: { mode: 'all' } },
        });
        // Redis keeps counters between runs: every run uses addresses of its own.
        const randomAddress = () =>
          `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
        const address = randomAddress();
        const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
        const firstProbe = await call(strict, 'GET', '/readyz', from(address));
        expect(firstProbe.status).toBe(200);
        expect(firstProbe.headers.get('x-ratelimit-remaining')).toBe('3');
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) statuses.push((await call(strict, 'GET', '/nothing-here', from(address))).status);
        expect(statuses).toEqual([404, 404, 404, 429]);
        // Failed authentications have a budget of their own (the same limits), apart from this one.
        const failures: number[] = [];
        for (let i = 0; i < 4; i++) failures.push((await call(strict, 'GET', '/api/me', from(address))).status);
        expect(failures).toEqual([401, 401, 401, 429]);
        const probe = await call(strict, 'GET', '/healthz', from(address));
        expect(probe.status).toBe(200); // probes are never refused...
        expect(probe.headers.get('x-ratelimit-remaining')).toBe('0'); // ...but say where the address stands
        expect((await call(strict, 'GET', '/api/me', from(randomAddress()))).status).toBe(401);
      });
    });
  }
}
