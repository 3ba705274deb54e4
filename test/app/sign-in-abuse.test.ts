// Sign-in against a stranger's abuse: a made-up link token costs no password hashing, hashing is
// capped (a flood is answered 503 at once, not queued behind), wrong passwords slow the guesser's
// address without locking the owner out and never for longer than a quarter of an hour, and a
// sign-in checks one password however many organisations share the e-mail. Hashing cost is counted
// (calls of Bun.password's hash and verify: every argon2 run, whoever makes it), never timed.
import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import {
  awayFromMinuteBoundary,
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  testConfig,
  TEST_DATABASE_URL,
  uniqueName,
  type TestDatabase,
} from '../helpers/harness.ts';
import { signInLinks } from '../../src/db/schema/index.ts';
import { createUser } from '../../src/modules/users/service.ts';
import Redis from 'ioredis';
import { memoryRateLimiter, postgresRateLimiter, redisRateLimiter, type RateLimiter } from '../../src/lib/rate-limiter.ts';
import type { Config } from '../../src/config.ts';

const PASSWORD = 'correct horse battery';
const TEST_REDIS_URL = process.env.TEST_REDIS_URL || null;
const ORIGIN = 'http://localhost';

for (const backend of BACKENDS) {
  describe(`sign-in abuse (${backend})`, () => {
    let database: TestDatabase;
    // Addresses from X-Forwarded-For, so one test can be several clients.
    const configFor = (overrides: Partial<Config> = {}) =>
      testConfig({ databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null, trustProxy: { mode: 'all' }, ...overrides });
    const appWith = (overrides: Partial<Config> = {}, limiter?: RateLimiter) =>
      buildApp(database, { config: configFor(overrides), ...(limiter ? { limiter } : {}) }).app;
    type App = ReturnType<typeof appWith>;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database.dispose());

    const invite = (orgId: string, email = `${uniqueName('person')}@example.com`) =>
      database.db.transaction((tx) => createUser(tx as never, { org: orgId, email, role: 'admin', actor: 'test' }));

    /** A user of a new organisation whose link was accepted with `password`. */
    async function person(app: App, email?: string, password = PASSWORD) {
      const { org } = await createOrgWithKey(database);
      const { user, link } = await invite(org.id, email);
      const accepted = await call(app, 'POST', '/api/auth/accept', {
        body: { token: link.token, password },
        headers: { origin: ORIGIN, 'x-forwarded-for': '192.0.2.1' },
      });
      expect(accepted.status).toBe(200);
      return { org, user };
    }

    const signIn = (app: App, email: string, password: string, from: string, extra: Record<string, string> = {}) =>
      call(app, 'POST', '/api/auth/sign-in', { body: { email, password, ...extra }, headers: { origin: ORIGIN, 'x-forwarded-for': from } });

    /** How many argon2 runs (hashings and verifications) `work` started. */
    async function hashingsDuring(work: () => Promise<unknown>): Promise<number> {
      const hash = spyOn(Bun.password, 'hash');
      const verify = spyOn(Bun.password, 'verify');
      try {
        await work();
        return hash.mock.calls.length + verify.mock.calls.length;
      } finally {
        hash.mockRestore();
        verify.mockRestore();
      }
    }

    /** A test that counts up to a quarter hour's limit must not straddle its end. */
    async function awayFromQuarterHourBoundary(marginMs = 8_000) {
      const left = 15 * 60_000 - (Date.now() % (15 * 60_000));
      if (left < marginMs) await Bun.sleep(left + 50);
    }

    test('accepting an unknown link token hashes no password', async () => {
      const app = appWith();
      let answer: Awaited<ReturnType<typeof call>> | undefined;
      const hashings = await hashingsDuring(async () => {
        answer = await call(app, 'POST', '/api/auth/accept', { body: { token: 'x'.repeat(43), password: PASSWORD } });
      });
      expect(answer!.status).toBe(401);
      expect(answer!.body.error).toContain('not valid');
      expect(hashings).toBe(0);
    });

    test('accepting a used link hashes no password', async () => {
      const app = appWith();
      const { org } = await createOrgWithKey(database);
      const { link } = await invite(org.id);
      expect((await call(app, 'POST', '/api/auth/accept', { body: { token: link.token, password: PASSWORD } })).status).toBe(200);
      let answer: Awaited<ReturnType<typeof call>> | undefined;
      const hashings = await hashingsDuring(async () => {
        answer = await call(app, 'POST', '/api/auth/accept', { body: { token: link.token, password: 'another password 123' } });
      });
      expect(answer!.status).toBe(401);
      expect(answer!.body.error).toContain('already been used');
      expect(hashings).toBe(0);
    });

    test('accepting an expired link hashes no password', async () => {
      const app = appWith();
      const { org } = await createOrgWithKey(database);
      const { user, link } = await invite(org.id);
      await database.db
        .update(signInLinks)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(signInLinks.userId, user.id));
      let answer: Awaited<ReturnType<typeof call>> | undefined;
      const hashings = await hashingsDuring(async () => {
        answer = await call(app, 'POST', '/api/auth/accept', { body: { token: link.token, password: PASSWORD } });
      });
      expect(answer!.status).toBe(401);
      expect(answer!.body.error).toContain('expired');
      expect(hashings).toBe(0);
    });

    test('past the hashing gate a sign-in is answered 503 busy with Retry-After, not queued', async () => {
      const app = appWith({ passwordHashingConcurrency: 1, passwordHashingQueue: 0 });
      const { user } = await person(app);
      // From six addresses, so that no throttle but the gate stands in the way.
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => signIn(app, user.email, `wrong password ${i}`, `198.51.100.${i + 1}`)),
      );
      const busy = answers.filter((a) => a.status === 503);
      expect(busy.length).toBeGreaterThan(0);
      expect(busy[0]!.body.code).toBe('busy');
      expect(busy[0]!.headers.get('retry-after')).toBe('1');
      expect(answers.every((a) => a.status === 503 || a.status === 401)).toBe(true);
    });

    test('the hashing gate lets a turn go to the next waiter: within its queue every sign-in is answered', async () => {
      const app = appWith({ passwordHashingConcurrency: 1, passwordHashingQueue: 8 });
      const { user } = await person(app);
      const answers = await Promise.all(
        Array.from({ length: 5 }, (_, i) => signIn(app, user.email, i === 4 ? PASSWORD : `wrong password ${i}`, `198.51.100.${i + 10}`)),
      );
      expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 200]);
    });

    test('wrong passwords from one address leave the owner free to sign in from another', async () => {
      const app = appWith({ signInLimitPerMinute: 3 });
      const { user } = await person(app);
      await awayFromMinuteBoundary();
      for (let i = 0; i < 5; i++) await signIn(app, user.email, `wrong password ${i}`, '203.0.113.66');
      const owner = await signIn(app, user.email, PASSWORD, '203.0.113.7');
      expect(owner.status).toBe(200);
      expect(owner.body.data.user.id).toBe(user.id);
    });

    test('an address past its wrong passwords on an account is refused 429 on it, the right password too', async () => {
      const app = appWith({ signInLimitPerMinute: 3 });
      const { user } = await person(app);
      await awayFromMinuteBoundary();
      for (let i = 0; i < 3; i++) expect((await signIn(app, user.email, `wrong password ${i}`, '203.0.113.66')).status).toBe(401);
      const refused = await signIn(app, user.email, PASSWORD, '203.0.113.66');
      expect(refused.status).toBe(429);
      expect(refused.body.error).toContain('for this account from this address');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(refused.headers.get('x-ratelimit-limit')).toBe('3');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    });

    test('a right password does not count against the address and account', async () => {
      const app = appWith({ signInLimitPerMinute: 2 });
      const { user } = await person(app);
      await awayFromMinuteBoundary();
      for (let i = 0; i < 4; i++) expect((await signIn(app, user.email, PASSWORD, '203.0.113.8')).status).toBe(200);
    });

    test("an account's Retry-After ends with the quarter hour, never at midnight", async () => {
      const app = appWith({ signInLimitPerMinute: 100, signInLimitPer15Minutes: 3 });
      const { user } = await person(app);
      await awayFromQuarterHourBoundary();
      for (let i = 0; i < 3; i++) await signIn(app, user.email, `wrong password ${i}`, '203.0.113.9');
      const refused = await signIn(app, user.email, `wrong password 3`, '203.0.113.9');
      expect(refused.status).toBe(429);
      expect(refused.body.error).toContain('per 15 minutes');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    });

    test("an address's attempts across accounts are limited too, and its Retry-After ends with the quarter hour", async () => {
      const app = appWith({ signInAddressLimitPerMinute: 100, signInAddressLimitPer15Minutes: 2 });
      await awayFromQuarterHourBoundary();
      for (let i = 0; i < 2; i++) expect((await signIn(app, `${uniqueName('x')}@example.com`, PASSWORD, '203.0.113.10')).status).toBe(401);
      const refused = await signIn(app, `${uniqueName('x')}@example.com`, PASSWORD, '203.0.113.10');
      expect(refused.status).toBe(429);
      expect(refused.body.error).toContain('from this address');
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
    });

    test('the wrong passwords are counted in the shared store: another instance refuses the same address', async () => {
      const shared = backend === 'postgres' ? postgresRateLimiter(database.sql!) : memoryRateLimiter();
      const one = appWith({ signInLimitPerMinute: 2 }, shared);
      const two = appWith({ signInLimitPerMinute: 2 }, shared);
      const { user } = await person(one);
      await awayFromMinuteBoundary();
      const address = `203.0.113.${100 + Math.floor(Math.random() * 100)}`;
      for (let i = 0; i < 2; i++) expect((await signIn(one, user.email, `wrong password ${i}`, address)).status).toBe(401);
      expect((await signIn(two, user.email, PASSWORD, address)).status).toBe(429);
      await shared.close();
    });

    if (TEST_REDIS_URL) {
      test('the wrong passwords are counted in Redis too: another instance refuses the same address', async () => {
        const client = new Redis(TEST_REDIS_URL);
        const shared = redisRateLimiter(client);
        try {
          const one = appWith({ signInLimitPerMinute: 2 }, shared);
          const two = appWith({ signInLimitPerMinute: 2 }, shared);
          const { user } = await person(one);
          await awayFromMinuteBoundary();
          for (let i = 0; i < 2; i++) expect((await signIn(one, user.email, `wrong password ${i}`, '203.0.113.20')).status).toBe(401);
          expect((await signIn(two, user.email, PASSWORD, '203.0.113.20')).status).toBe(429);
          expect((await signIn(two, user.email, PASSWORD, '203.0.113.21')).status).toBe(200);
        } finally {
          await client.quit();
        }
      });
    }

    test('an unknown e-mail costs one password verification', async () => {
      const app = appWith();
      await signIn(app, `${uniqueName('nobody')}@example.com`, PASSWORD, '203.0.113.11'); // makes the dummy hash, once per process
      let answer: Awaited<ReturnType<typeof call>> | undefined;
      const hashings = await hashingsDuring(async () => {
        answer = await signIn(app, `${uniqueName('nobody')}@example.com`, PASSWORD, '203.0.113.11');
      });
      expect(answer!.status).toBe(401);
      expect(hashings).toBe(1);
    });

    test('a wrong password for an e-mail of two organisations costs one verification, like any other', async () => {
      const app = appWith();
      const email = `${uniqueName('two')}@example.com`;
      await person(app, email);
      await person(app, email, 'another password 456');
      let answer: Awaited<ReturnType<typeof call>> | undefined;
      const hashings = await hashingsDuring(async () => {
        answer = await signIn(app, email, 'not the password', '203.0.113.12');
      });
      expect(answer!.status).toBe(401);
      expect(hashings).toBe(1);
    });

    test('an e-mail of two organisations signs in to the oldest', async () => {
      const app = appWith();
      const email = `${uniqueName('two')}@example.com`;
      const first = await person(app, email);
      await person(app, email);
      const answer = await signIn(app, email, PASSWORD, '203.0.113.13');
      expect(answer.status).toBe(200);
      expect(answer.body.data.organisation.id).toBe(first.org.id);
    });

    test('an e-mail of two organisations signs in to the one it names, by id or by name', async () => {
      const app = appWith();
      const email = `${uniqueName('two')}@example.com`;
      await person(app, email);
      const second = await person(app, email, 'another password 456');
      const byId = await signIn(app, email, 'another password 456', '203.0.113.14', { organisation: second.org.id });
      expect(byId.status).toBe(200);
      expect(byId.body.data.organisation.id).toBe(second.org.id);
      const byName = await signIn(app, email, 'another password 456', '203.0.113.14', { organisation: second.org.name });
      expect(byName.body.data.organisation.id).toBe(second.org.id);
    });

    test('naming an organisation the e-mail has no account in is the same 401', async () => {
      const app = appWith();
      const { user } = await person(app);
      const { org: other } = await createOrgWithKey(database);
      const answer = await signIn(app, user.email, PASSWORD, '203.0.113.15', { organisation: other.id });
      expect(answer.status).toBe(401);
      expect(answer.body.error).toBe('Wrong e-mail or password');
    });
  });
}
