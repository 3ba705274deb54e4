// Routes carry their rules (lib/routes.ts): every registered route is declared and every declaration
// registered, the rules are looked up as Elysia routes, no path string is left in the shared code,
// a platform route never takes an API key, and real answers match the declared response schemas.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Elysia, t } from 'elysia';
import { Value } from '@sinclair/typebox/value';
import {
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  testConfig,
  TEST_DATABASE_URL,
  type CallResult,
  type TestDatabase,
} from '../helpers/harness.ts';
import { drainQueue, hubSignature, makeConnector, TEST_SECRET_KEY } from '../helpers/tickets.ts';
import { routeTable, type RouteDeclaration } from '../../src/lib/routes.ts';

const keyOf = (route: { method: string; path: string }) => `${route.method} ${route.path}`;

describe('the route table', () => {
  const response = t.Null();
  const keyed = { auth: 'key', counted: 'organisation', body: 'none', response } as const;
  const list: RouteDeclaration = { ...keyed, method: 'GET', path: '/api/things' };
  const create: RouteDeclaration = { ...keyed, method: 'POST', path: '/api/things', body: 'import' };
  const one: RouteDeclaration = { ...keyed, method: 'GET', path: '/api/things/:id' };
  const hook: RouteDeclaration = {
    method: 'POST',
    path: '/api/hooks/in',
    auth: 'platform-signature',
    verifiedBy: 'connector',
    counted: 'connector',
    body: 'webhook',
    response,
  };
  const table = routeTable(
    [list, create, one, hook],
    [
      { prefix: '/api/', auth: 'key', counted: 'organisation', body: 'api' },
      { prefix: '/api/hooks/', auth: 'none', counted: 'address', body: 'webhook' },
    ],
  );

  test('a request gets its own route’s rules, with or without one trailing slash, HEAD as GET', () => {
    expect(table.rulesFor('GET', '/api/things')).toBe(list);
    expect(table.rulesFor('POST', '/api/things/')).toBe(create);
    expect(table.rulesFor('HEAD', '/api/things')).toBe(list);
    expect(table.rulesFor('GET', '/api/things/thg_1')).toBe(one);
    expect(table.rulesFor('GET', '/api/things/thg_1/')).toBe(one);
    expect(table.rulesFor('POST', '/api/hooks/in')).toBe(hook);
  });

  test('a method the path lacks takes the path’s rules; an unknown path its longest scope’s, else public', () => {
    expect(table.rulesFor('PUT', '/api/things')).toBe(list);
    expect(table.rulesFor('GET', '/api/hooks/in')).toBe(hook);
    expect(table.rulesFor('GET', '/api/things/thg_1/more')).toMatchObject({ auth: 'key', counted: 'organisation', body: 'api' });
    expect(table.rulesFor('POST', '/api/hooks/other')).toMatchObject({ auth: 'none', counted: 'address', body: 'webhook' });
    expect(table.rulesFor('GET', '/API/things')).toMatchObject({ auth: 'none', counted: 'address' });
    expect(table.rulesFor('GET', '/%61pi/things')).toMatchObject({ auth: 'none', counted: 'address' });
  });

  test('a route declared twice is refused', () => {
    expect(() => routeTable([list, { ...list }], [])).toThrow(/declared twice/);
  });
});

describe('declarations and registered routes', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase('embedded');
  });
  afterAll(() => database.dispose());

  test('every route the app registered is declared, and every declaration is registered', () => {
    const { app } = buildApp(database);
    const registered = app.routes.routes.map(keyOf).sort();
    expect(app.declarations.map(keyOf).sort()).toEqual(registered);
    // Each module's routes, records' writes included.
    for (const route of [
      'GET /healthz',
      'GET /api/me',
      'POST /api/customers',
      'PATCH /api/contracts/:id',
      'DELETE /api/invoices/:id',
      'POST /api/webhooks/tickets',
      'POST /api/webhooks/workspace-chat',
      'GET /api/ticket-intelligence/import/:batch_id',
    ]) {
      expect(registered).toContain(route);
    }
  });

  test('createApp refuses a mounted route without a declaration, and a declaration without a route', () => {
    const declared: RouteDeclaration = {
      method: 'GET',
      path: '/api/test-fixtures/declared',
      auth: 'key',
      counted: 'organisation',
      body: 'none',
      response: t.Null(),
    };
    const extra = new Elysia().get(declared.path, () => 'ok').get('/api/test-fixtures/undeclared', () => 'ok');
    expect(() => buildApp(database, { modules: [{ app: extra, declarations: [declared] }] })).toThrow(
      'GET /api/test-fixtures/undeclared is registered but not declared',
    );
    const stale: RouteDeclaration = { ...declared, method: 'DELETE' };
    const lone = new Elysia().get(declared.path, () => 'ok');
    expect(() => buildApp(database, { modules: [{ app: lone, declarations: [declared, stale] }] })).toThrow(
      'DELETE /api/test-fixtures/declared is declared but not registered',
    );
  });

  test('no path string of a route in the shared code: plugins, lib and app.ts', () => {
    const root = join(import.meta.dir, '../../src');
    const files = [
      join(root, 'app.ts'),
      ...['plugins', 'lib'].flatMap((dir) => readdirSync(join(root, dir)).map((name) => join(root, dir, name))),
    ];
    const offending: string[] = [];
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (/^\s*(\/\/|\/?\*)/.test(line)) return; // a comment may name a path as an example
          if (/['"`](\/api\b|\/healthz|\/readyz)/.test(line)) offending.push(`${file.slice(root.length + 1)}:${index + 1}: ${line.trim()}`);
        });
    }
    expect(files.length).toBeGreaterThan(10);
    expect(offending).toEqual([]);
  });
});

for (const backend of BACKENDS) {
  describe(`route rules on the real app (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database, {
        config: testConfig({ databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null, secretKey: TEST_SECRET_KEY }),
      }).app;
    });
    afterAll(() => database.dispose());

    /** The answer's data is what its route declares (checked, not assumed: the schemas document
     * the API, and a field added or changed in a service must show up here). */
    function expectDeclared(method: string, path: string, result: CallResult) {
      const route = app.declarations.find((r) => r.method === method && r.path === path);
      expect(route).toBeDefined();
      expect(result.status).toBeLessThan(300);
      const data = route!.envelope === false ? result.body : result.body.data;
      const errors = [...Value.Errors(route!.response, data)]
        .slice(0, 3)
        .map((e) => `${e.path}: ${e.message} (got ${JSON.stringify(e.value)})`);
      expect({ route: `${method} ${path}`, errors }).toEqual({ route: `${method} ${path}`, errors: [] });
    }

    test('real answers match the response schemas their routes declare', async () => {
      const { secret: key } = await createOrgWithKey(database);
      const customer = await call(app, 'POST', '/api/customers', {
        key,
        body: {
          external_id: 'c-1',
          name: 'Acme',
          currency: 'EUR',
          domain: 'acme.example',
          csm: { name: 'Ann', email: 'ann@example.com' },
          metadata: { tier: 'gold' },
        },
      });
      expectDeclared('POST', '/api/customers', customer);
      const id = customer.body.data.id;
      const contract = await call(app, 'POST', '/api/contracts', {
        key,
        body: {
          customer_id: id,
          name: 'Annual',
          start_date: '2026-01-01',
          end_date: '2027-01-01',
          billing_interval: 'year',
          amount: 1_200_000,
          seats: 10,
        },
      });
      expectDeclared('POST', '/api/contracts', contract);
      const invoice = await call(app, 'POST', '/api/invoices', {
        key,
        body: {
          customer_id: id,
          contract_id: contract.body.data.id,
          number: 'INV-1',
          amount_due: 1_200_000,
          issued_at: '2026-01-01T00:00:00Z',
          due_date: '2026-01-31',
        },
      });
      expectDeclared('POST', '/api/invoices', invoice);

      expectDeclared('GET', '/api/customers', await call(app, 'GET', '/api/customers?sort=arr', { key }));
      expectDeclared('GET', '/api/customers/:id', await call(app, 'GET', `/api/customers/${id}`, { key }));
      expectDeclared('GET', '/api/contracts', await call(app, 'GET', '/api/contracts', { key }));
      expectDeclared('GET', '/api/contracts/:id', await call(app, 'GET', `/api/contracts/${contract.body.data.id}`, { key }));
      expectDeclared('GET', '/api/invoices', await call(app, 'GET', '/api/invoices', { key }));
      expectDeclared('GET', '/api/invoices/:id', await call(app, 'GET', `/api/invoices/${invoice.body.data.id}`, { key }));
      expectDeclared(
        'PATCH',
        '/api/customers/:id',
        await call(app, 'PATCH', `/api/customers/${id}`, { key, body: { segment: 'enterprise', csm: null } }),
      );
      expectDeclared('DELETE', '/api/invoices/:id', await call(app, 'DELETE', `/api/invoices/${invoice.body.data.id}`, { key }));
      expectDeclared('GET', '/api/me', await call(app, 'GET', '/api/me', { key }));
      expectDeclared('GET', '/api/keys', await call(app, 'GET', '/api/keys', { key }));
      expectDeclared('GET', '/healthz', await call(app, 'GET', '/healthz'));
      expectDeclared('GET', '/readyz', await call(app, 'GET', '/readyz'));

      const imported = await call(app, 'POST', '/api/ticket-intelligence/import', {
        key,
        body: { tickets: [{ id: 't-1', subject: 'Invoice wrong', status: 'open' }] },
      });
      expectDeclared('POST', '/api/ticket-intelligence/import', imported);
      expectDeclared(
        'GET',
        '/api/ticket-intelligence/import/:batch_id',
        await call(app, 'GET', `/api/ticket-intelligence/import/${imported.body.data.batch_id}`, { key }),
      );
      expectDeclared('GET', '/api/connectors', await call(app, 'GET', '/api/connectors', { key }));
      await drainQueue(database);
      const tickets = await call(app, 'GET', '/api/tickets', { key });
      expect(tickets.body.data).toHaveLength(1);
      expectDeclared('GET', '/api/tickets', tickets);
      expectDeclared('GET', '/api/tickets/:id', await call(app, 'GET', `/api/tickets/${tickets.body.data[0].id}`, { key }));
    });

    test('a webhook carrying a valid API key is judged by its signature alone and not counted on the key’s organisation', async () => {
      const { org, secret: key } = await createOrgWithKey(database, { perMinute: 50 });
      const connector = await makeConnector(database, org.id, { secret: 'route-rules-secret' });
      const body = JSON.stringify({ ticket: { id: 'rr-1', subject: 'Hello' } });
      const deliver = (signature: string) =>
        call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
          key,
          rawBody: body,
          headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
        });

      const forged = await deliver(hubSignature('not-the-secret', body));
      expect(forged.status).toBe(401);
      expect(forged.body.error).toMatch(/Invalid webhook signature/);
      const signed = await deliver(hubSignature('route-rules-secret', body));
      expectDeclared('POST', '/api/webhooks/tickets', signed);
      // Both were counted on the connector's budget, none on the organisation's.
      expect(signed.headers.get('x-ratelimit-limit-minute')).toBe(String(testConfig().webhookLimitPerMinute));
      expect(signed.headers.get('x-ratelimit-remaining-minute')).toBe(String(testConfig().webhookLimitPerMinute - 2));
      const me = await call(app, 'GET', '/api/me', { key });
      expect(me.body.data.rate_limit.minute).toMatchObject({ limit: 50, remaining: 49 });
    });

    test("Google Chat's route reads its bearer token as Google's, never as an API key, and does not count it on the key's organisation", async () => {
      const { secret: key } = await createOrgWithKey(database, { perMinute: 50 });
      const event = {
        type: 'MESSAGE',
        eventTime: new Date().toISOString(),
        space: { name: 'spaces/ROUTERULES' },
        message: { text: 'help' },
        user: { email: 'a@b.example' },
      };
      const res = await call(app, 'POST', '/api/webhooks/workspace-chat', { key, body: event });
      expect(res.status).toBe(401);
      expect(res.body.error).toMatch(/^Invalid Google Chat request/);
      const me = await call(app, 'GET', '/api/me', { key });
      expect(me.body.data.rate_limit.minute.remaining).toBe(49);
    });

    test('an unknown path under /api/webhooks/ is public: a key there is not looked at, the address pays', async () => {
      const { org, secret: key } = await createOrgWithKey(database, { perMinute: 50 });
      const unknown = await call(app, 'POST', '/api/webhooks/elsewhere', { key, body: {} });
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get('x-ratelimit-limit-minute')).toBe(String(testConfig().anonLimitPerMinute));
      const me = await call(app, 'GET', '/api/me', { key });
      expect(me.body.data.org.id).toBe(org.id);
      expect(me.body.data.rate_limit.minute.remaining).toBe(49);
    });
  });
}
