// What a hostile or careless client found (the hardening issue): none of it may freeze, stall or
// 500 the service, and each answer names what was wrong.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import {
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  tempDir,
  testConfig,
  type TestDatabase,
} from '../helpers/harness.ts';
import { drainQueue, makeConnector, TEST_SECRET_KEY } from '../helpers/tickets.ts';
import { connectPostgres, openEmbedded, rowsOf } from '../../src/db/client.ts';
import { EmbeddedDatabaseFailedError, TransactionIdleTimeoutError } from '../../src/db/embedded-guard.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { postgresRateLimiter } from '../../src/lib/rate-limiter.ts';
import { MAX_JSON_DEPTH } from '../../src/lib/json.ts';
import { sql } from 'drizzle-orm';
import { rmSync } from 'node:fs';

/** `{"a":{"a":…}}` nested `depth` levels under the top object. */
const nested = (depth: number) => {
  const top: Record<string, unknown> = {};
  let at = top;
  for (let i = 0; i < depth; i++) at = (at.a = {}) as Record<string, unknown>;
  return top;
};

const JSON_HEADERS = { 'content-type': 'application/json' };

for (const backend of BACKENDS) {
  describe(`hardening (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database, { config: testConfig({ databaseUrl: null, secretKey: TEST_SECRET_KEY, requestTimeoutMs: 2_000 }) }).app;
      const made = await createOrgWithKey(database);
      key = made.secret;
      orgId = made.org.id;
    });
    afterAll(() => database.dispose());

    test('NUL and deeply nested metadata, round after round: each refused, nothing stored, and the database still answers', async () => {
      for (let round = 0; round < 4; round++) {
        const nul = await call(app, 'POST', '/api/customers', {
          key,
          rawBody: '{"name":"a\\u0000b","currency":"EUR"}',
          headers: JSON_HEADERS,
        });
        expect(nul.status).toBe(400);
        expect(nul.body.error).toBe('Invalid field "name": must not contain the NUL character (\\u0000)');
        const deep = await call(app, 'POST', '/api/customers', {
          key,
          body: { name: `deep ${round}`, currency: 'EUR', metadata: nested(5_000) },
        });
        expect(deep.status).toBe(400);
        expect(deep.body.error).toBe(`Request body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`);
      }
      const [stored] = rowsOf<{ n: number }>(
        await database.db.execute(sql`select count(*)::int as n from customers where org_id = ${orgId}`),
      );
      expect(stored!.n).toBe(0);
      const fine = await call(app, 'POST', '/api/customers', {
        key,
        body: { name: 'After the storm', currency: 'EUR', metadata: nested(MAX_JSON_DEPTH - 2) },
      });
      expect(fine.status).toBe(201);
      expect((await call(app, 'GET', `/api/customers/${fine.body.data.id}`, { key })).body.data.name).toBe('After the storm');
    });

    test('a body nested 20,000 arrays deep is refused with a 400 by every write route, with or without a key', async () => {
      const body = '['.repeat(20_000) + ']'.repeat(20_000);
      for (const [method, path] of [
        ['POST', '/api/customers'],
        ['POST', '/api/contracts'],
        ['POST', '/api/invoices'],
        ['PATCH', '/api/customers/cus_x'],
        ['POST', '/api/ticket-intelligence/import'],
      ]) {
        const refused = await call(app, method!, path!, { key, rawBody: body, headers: JSON_HEADERS });
        expect(refused.status).toBe(400);
        expect(refused.body.error).toContain('nested deeper than 64 levels');
      }
      // Without a key nothing is read: the body waits behind authentication.
      expect((await call(app, 'POST', '/api/customers', { rawBody: body, headers: JSON_HEADERS })).status).toBe(401);
    });

    test('one level past the limit is refused, the limit itself is accepted', async () => {
      const at = await call(app, 'POST', '/api/customers', {
        key,
        body: { name: 'Deep enough', currency: 'EUR', metadata: nested(MAX_JSON_DEPTH - 2) },
      });
      expect(at.status).toBe(201);
      const past = await call(app, 'POST', '/api/customers', {
        key,
        body: { name: 'Too deep', currency: 'EUR', metadata: nested(MAX_JSON_DEPTH - 1) },
      });
      expect(past.status).toBe(400);
    });

    test('a Host of one to three characters: the gate and the router judge the same path', async () => {
      for (const host of ['x', 'ab', 'abc']) {
        const aside = await app.handle(new Request(`http://${host}/ab/api/me`));
        expect(aside.status).toBe(404);
        expect(((await aside.json()) as { error: string }).error).toBe('Route GET /ab/api/me not found');
        const unauthenticated = await app.handle(
          new Request(`http://${host}/ab/api/customers`, { method: 'POST', headers: JSON_HEADERS, body: '['.repeat(20_000) }),
        );
        expect(unauthenticated.status).toBe(404);
        const mine = await app.handle(new Request(`http://${host}/api/me`, { headers: { authorization: `Bearer ${key}` } }));
        expect(mine.status).toBe(200);
        expect(((await mine.json()) as { data: { org: { id: string } } }).data.org.id).toBe(orgId);
      }
    });

    test('forged cursors are a 400 naming the cursor, for every sort', async () => {
      for (const path of [
        '/api/customers?cursor=WyJjcmVhdGVkX2F0IiwieCIsInkiXQ',
        '/api/customers?sort=arr&cursor=WyJhcnIiLDEuNSwieCJd',
        '/api/contracts?cursor=WyJjcmVhdGVkX2F0IiwieCIsInkiXQ',
        '/api/invoices?cursor=WyJjcmVhdGVkX2F0IiwieCIsInkiXQ',
        '/api/tickets?cursor=WyJjcmVhdGVkX2F0IiwieCIsInkiXQ',
      ]) {
        const refused = await call(app, 'GET', path, { key });
        expect(refused.status).toBe(400);
        expect(refused.body.error).toBe('Invalid query parameter "cursor": not a cursor this API returned');
      }
    });

    test('%00 and broken percent-encoding in the path or a query parameter: 400 before any query', async () => {
      const connector = await makeConnector(database, orgId);
      const cases: [string, string, RegExp][] = [
        ['GET', '/api/contracts?customer_id=%00', /^Invalid query parameter "customer_id"/],
        ['GET', '/api/invoices?customer_id=%ED%B0%80', /^Invalid query parameter "customer_id"/],
        ['GET', '/api/customers/%00', /request path/],
        ['PATCH', '/api/customers/%00', /request path/],
        ['GET', '/api/tickets?connector_id=%FF', /^Invalid query parameter "connector_id"/],
        ['POST', `/api/webhooks/tickets?connectorId=${connector.id}%00`, /^Invalid query parameter "connectorId"/],
      ];
      for (const [method, path, message] of cases) {
        const refused = await call(app, method, path, { key, body: method === 'GET' ? undefined : {} });
        expect(refused.status).toBe(400);
        expect(refused.body.error).toMatch(message);
      }
    });

    test('NUL or a lone surrogate anywhere in a body: 400 naming the field, nothing written', async () => {
      const customer = (
        await call(app, 'POST', '/api/customers', { key, body: { name: 'Plain', currency: 'EUR', external_id: 'plain-1' } })
      ).body.data;
      const cases: [string, string, string, string][] = [
        [
          'POST',
          '/api/customers',
          '{"name":"Lone \\udfff","currency":"EUR"}',
          'Invalid field "name": must not contain an unpaired UTF-16 surrogate (\\ud800–\\udfff)',
        ],
        [
          'POST',
          '/api/customers',
          '{"name":"M","currency":"EUR","metadata":{"notes":["ok","x\\u0000"]}}',
          'Invalid field "metadata.notes.1": must not contain the NUL character (\\u0000)',
        ],
        [
          'POST',
          '/api/customers',
          '{"name":"M","currency":"EUR","metadata":{"a\\u0000":1}}',
          'Invalid field "metadata.a\u0000": has a name that must not contain the NUL character (\\u0000)',
        ],
        [
          'PATCH',
          `/api/customers/${customer.id}`,
          '{"segment":"\\ud800"}',
          'Invalid field "segment": must not contain an unpaired UTF-16 surrogate (\\ud800–\\udfff)',
        ],
        [
          'POST',
          '/api/ticket-intelligence/import',
          '{"connector_id":"con_\\u0000","tickets":[{"id":"T1"}]}',
          'Invalid field "connector_id": must be a connector id (con_…)',
        ],
      ];
      for (const [method, path, body, message] of cases) {
        const refused = await call(app, method, path, { key, rawBody: body, headers: JSON_HEADERS });
        expect(refused.status).toBe(400);
        expect(refused.body.error).toBe(message);
      }
      expect((await call(app, 'GET', `/api/customers/${customer.id}`, { key })).body.data.segment).toBeNull();
    });

    test("an imported ticket with NUL and a lone surrogate is accepted and stored cleaned, as a webhook's is", async () => {
      const imported = await call(app, 'POST', '/api/ticket-intelligence/import', {
        key,
        rawBody: '{"tickets":[{"id":"IMP-\\u00001","subject":"Broken \\ud800 export\\u0000"}]}',
        headers: JSON_HEADERS,
      });
      expect(imported.status).toBe(202);
      expect(imported.body.data).toMatchObject({ accepted: 1, rejected: [] });
      await drainQueue(database);
      const listed = await call(app, 'GET', '/api/tickets?limit=200', { key });
      expect(listed.body.data.find((t: { external_id: string }) => t.external_id === 'IMP-1')?.subject).toBe('Broken \ufffd export');
    });

    test('a time offset PostgreSQL cannot hold (+23:59) is a 400 naming the field', async () => {
      const customer = (await call(app, 'POST', '/api/customers', { key, body: { name: 'Offsets', currency: 'EUR' } })).body.data;
      const refused = await call(app, 'POST', '/api/invoices', {
        key,
        body: {
          customer_id: customer.id,
          number: 'INV-OFF',
          status: 'open',
          currency: 'EUR',
          amount_due: 100,
          issued_at: '2026-01-01T00:00:00+23:59',
        },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toStartWith('Invalid field "issued_at": must be an ISO 8601 time');
      const query = await call(app, 'GET', '/api/invoices?issued_after=2026-01-01T00:00:00%2B16:00', { key });
      expect(query.status).toBe(400);
      const fine = await call(app, 'POST', '/api/invoices', {
        key,
        body: {
          customer_id: customer.id,
          number: 'INV-OFF',
          status: 'open',
          currency: 'EUR',
          amount_due: 100,
          issued_at: '2026-01-01T00:00:00+14:00',
        },
      });
      expect(fine.status).toBe(201);
    });

    test('bad keys from an address never lock out a valid key from the same address', async () => {
      const { app: fresh } = buildApp(database, { config: testConfig({ anonLimitPerMinute: 120 }) });
      const statuses = new Map<number, number>();
      for (let i = 0; i < 125; i++) {
        const status = (await call(fresh, 'GET', '/api/me', { key: `rvk_${'Z'.repeat(30)}${String(i).padStart(10, '0')}` })).status;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      // Failures are counted and throttled on their own budget…
      expect(statuses.get(401)).toBe(120);
      expect(statuses.get(429)).toBe(5);
      // …which a valid key does not spend: it is judged by its organisation's.
      const valid = await call(fresh, 'GET', '/api/me', { key });
      expect(valid.status).toBe(200);
      expect(valid.headers.get('x-ratelimit-limit')).toBe('300');
      // And public requests from the address still have their own budget.
      expect((await call(fresh, 'GET', '/healthz')).status).toBe(200);
      expect((await call(fresh, 'GET', '/nothing-here')).status).toBe(404);
    });

    test('a key in the URL is refused however the parameter is spelt', async () => {
      for (const query of ['access_token=x', 'access%5Ftoken=x', 'ACCESS_TOKEN=x', 'Access%5FToken=x', 'access_token']) {
        const refused = await call(app, 'GET', `/api/me?${query}`, { key });
        expect(refused.status).toBe(401);
        expect(refused.body.error).toStartWith('API keys are not accepted in the URL');
      }
    });

    test('a URL over 8 KiB is a 414 and headers over 16 KiB a 431, in the envelope', async () => {
      const long = await call(app, 'GET', `/api/customers?q=${'a'.repeat(9_000)}`, { key });
      expect(long.status).toBe(414);
      expect(long.body).toMatchObject({ success: false, code: 'uri_too_long' });
      const heavy = await call(app, 'GET', '/api/me', { key, headers: { 'x-padding': 'p'.repeat(17_000) } });
      expect(heavy.status).toBe(431);
      expect(heavy.body).toMatchObject({ success: false, code: 'headers_too_large' });
    });

    test('a request still running at REQUEST_TIMEOUT_MS is answered 503 in the envelope', async () => {
      let release!: () => void;
      const stuck = new Promise<void>((resolve) => (release = resolve));
      const { Elysia } = await import('elysia');
      const slow = new Elysia().get('/api/test-fixtures/stuck', async () => {
        await stuck;
        return { success: true, data: null, error: null };
      });
      const { app: timed } = buildApp(database, { config: testConfig({ requestTimeoutMs: 300 }), modules: [slow] });
      const answered = await call(timed, 'GET', '/api/test-fixtures/stuck', { key });
      release();
      expect(answered.status).toBe(503);
      expect(answered.body).toMatchObject({ success: false, code: 'request_timeout' });
      expect(answered.headers.get('retry-after')).toBe('5');
      expect(answered.headers.get('x-request-id')).toBeTruthy();
    });

    test('work the database ends at the bound (a statement too long, a transaction left idle) is answered 503 request_timeout', async () => {
      const dir = tempDir();
      const bounds = { timeoutMs: 300 };
      const bounded =
        backend === 'postgres' ? connectPostgres(process.env.TEST_DATABASE_URL!, 2, bounds) : await openEmbedded(dir, 'test', bounds);
      try {
        const { Elysia } = await import('elysia');
        // PGlite runs a statement to its end (one thread): there the bound is on idle transactions.
        const slow = new Elysia().get('/api/test-fixtures/slow-sql', () =>
          backend === 'postgres'
            ? bounded.db.execute(sql`select pg_sleep(2)`)
            : bounded.db.transaction(async (tx) => {
                await tx.execute(sql`select 1`);
                await Bun.sleep(1_000);
              }),
        );
        const { app: timed } = buildApp(bounded, {
          config: testConfig({ requestTimeoutMs: 10_000 }),
          authenticator: buildApp(database).authenticator,
          modules: [slow],
        });
        const answered = await call(timed, 'GET', '/api/test-fixtures/slow-sql', { key });
        expect(answered.status).toBe(503);
        expect(answered.body).toMatchObject({ success: false, code: 'request_timeout' });
        expect(answered.headers.get('retry-after')).toBe('5');
      } finally {
        await bounded.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    test('a transaction left idle is ended after the bound, and the database serves the next one', async () => {
      const dir = tempDir();
      const bounds = { timeoutMs: 400 };
      const bounded =
        backend === 'postgres' ? connectPostgres(process.env.TEST_DATABASE_URL!, 2, bounds) : await openEmbedded(dir, 'test', bounds);
      const db = bounded.db;
      try {
        const idle = db.transaction(async (tx) => {
          await tx.execute(sql`select 1`);
          await Bun.sleep(1_500);
          await tx.execute(sql`select 1`);
        });
        const error = await idle.then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).not.toBeNull();
        if (backend === 'embedded') expect(error).toBeInstanceOf(TransactionIdleTimeoutError);
        expect(rowsOf<{ ok: number }>(await db.execute(sql`select 1 as ok`))[0]!.ok).toBe(1);
      } finally {
        await bounded.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

describe('embedded engine failure', () => {
  test('the engine failing under PostgreSQL stops the instance: the query fails, every later one at once, and the owner is told', async () => {
    const dir = tempDir();
    const failures: Error[] = [];
    const database = await openEmbedded(dir, 'test', { timeoutMs: 30_000 }, (error) => failures.push(error));
    try {
      await runMigrations(database, null);
      // Deeper than the engine's stack: what an unbounded input did before bodies were bounded.
      const literal = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
      const first = await database.pglite!.query(`select $1::jsonb as v`, [literal]).then(
        () => null,
        (e: unknown) => e,
      );
      expect(first).toBeInstanceOf(EmbeddedDatabaseFailedError);
      expect(failures).toHaveLength(1);
      const next = await database.db.execute(sql`select 1`).then(
        () => null,
        (e: unknown) => e,
      );
      expect(next).toBeInstanceOf(Error);
      expect(database.failure()).toBe(failures[0]!);
      // The HTTP answer to such a failure is a 503, not a 500.
      const { app } = buildApp(database, { config: testConfig() });
      const answer = await call(app, 'GET', '/api/me', { key: `rvk_${'Q'.repeat(40)}` });
      expect(answer.status).toBe(503);
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('probes during a database outage', () => {
  test('/healthz answers 200 and /readyz names the failed check when the shared rate-limit store is down', async () => {
    const unreachable = connectPostgres('postgres://postgres@127.0.0.1:1/nothing', 1);
    try {
      const { app } = buildApp(unreachable, {
        limiter: postgresRateLimiter(unreachable.sql!),
        readiness: async () => [{ name: 'database', ok: false, detail: 'unreachable' }],
      });
      const live = await call(app, 'GET', '/healthz');
      expect(live.status).toBe(200);
      expect(live.body.data.status).toBe('alive');
      expect(live.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
      const ready = await call(app, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ success: false, code: 'not_ready' });
      expect(ready.body.error).toBe('Not ready: database (unreachable)');
    } finally {
      await unreachable.close();
    }
  });
});
