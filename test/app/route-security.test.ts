// Every declared route refuses what its declaration refuses, generated from the declarations so a
// new route is covered without a new test: no credential on a key route → 401; an API key on a
// route for people signed in to the console → 403; a platform route with no signature → a refusal
// (never a 2xx, never a 5xx); another organisation's id on every `:id` route is answered exactly as
// an id nobody has.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import {
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  TEST_DATABASE_URL,
  testConfig,
  uniqueName,
  type TestDatabase,
} from '../helpers/harness.ts';
import type { RouteDeclaration } from '../../src/lib/routes.ts';
import { queryText, type Db } from '../../src/db/client.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { recomputePredictions } from '../../src/modules/predictions/service.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';

/** A concrete path for a declared one: each `:param` filled with an id nobody has. */
const concrete = (path: string) => path.replace(/:([A-Za-z_]+)/g, (_, name: string) => `${name}_nobody0000000000`);
const label = (route: RouteDeclaration) => `${route.method} ${route.path}`;
const bodyOf = (route: RouteDeclaration) => (route.method === 'GET' || route.method === 'DELETE' ? undefined : {});

for (const backend of BACKENDS) {
  describe(`every declared route refuses a caller its rules refuse (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
      // Two passes of bad credentials over every key route spend one address's failures budget:
      // raised, so that each route, however many there are, is answered by its rules and not a 429.
      const databaseUrl = backend === 'postgres' ? TEST_DATABASE_URL : null;
      app = buildApp(database, { config: testConfig({ databaseUrl, anonLimitPerMinute: 100_000 }) }).app;
      key = (await createOrgWithKey(database)).secret;
    });
    afterAll(() => database.dispose());

    test("another organisation's id on every :id route is answered as an id nobody has (never a 2xx)", async () => {
      const other = await database.db.transaction((tx) =>
        loadDemo(
          tx as unknown as Db,
          { orgName: uniqueName('other'), customers: 40, seed: 5, today: '2026-06-30', actor: 'test' },
          DEFAULT_ACTION_SETTINGS,
        ),
      );
      await queryText(
        database.db,
        `update organisations set rate_limit_per_minute = 1000000, rate_limit_per_day = 100000000 where id = $1`,
        [other.org.id],
      );
      // What a demo leaves empty, made for the other organisation the way its users make it: its
      // predictions (and the scorecard in force), a backtest and a forecast backtest asked for, an import batch, and a ticket
      // delivered to its help desk. Collections with no list of their own answer an id here.
      await recomputePredictions(database.db, { orgId: other.org.id, today: '2026-06-30' });
      const asked = await call(app, 'POST', '/api/cfo/backtests', { key: other.secret, body: {} });
      const askedForecast = await call(app, 'POST', '/api/cfo/forecast-backtests', { key: other.secret, body: {} });
      const imported = await call(app, 'POST', '/api/ticket-intelligence/import', {
        key: other.secret,
        body: { tickets: [{ id: 'SEC-1', subject: 'Export', description: 'How do I export invoices?' }] },
      });
      const delivered = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${other.connector.id}`, {
        rawBody: JSON.stringify({ id: 'SEC-2', subject: 'Login', description: 'We cannot sign in since this morning.' }),
        headers: { 'content-type': 'application/json' },
      });
      expect([asked.status, askedForecast.status, imported.status, delivered.status]).toEqual([202, 202, 202, 200]);
      const idsWithoutList: Record<string, string> = {
        '/api/cfo/backtests': (asked.body as { data: { id: string } }).data.id,
        '/api/cfo/forecast-backtests': (askedForecast.body as { data: { id: string } }).data.id,
        '/api/ticket-intelligence/import': (imported.body as { data: { batch_id: string } }).data.batch_id,
      };
      const routes = app.declarations.filter(
        (route) => route.auth === 'key' && route.who !== 'session' && route.who !== 'admin-session' && /\/:[a-z_]+/.test(route.path),
      );
      const covered: string[] = [];
      const wrong: string[] = [];
      for (const route of routes) {
        // The other organisation's id: the first item of the collection the route belongs to.
        const collection = route.path.slice(0, route.path.indexOf('/:'));
        const param = /:([a-z_]+)/.exec(route.path)![1]!;
        let theirs: unknown = idsWithoutList[collection];
        if (theirs === undefined) {
          const list = await call(app, 'GET', `${collection}?limit=1`, { key: other.secret });
          const item = ((list.body as { data?: unknown })?.data as Record<string, unknown>[] | undefined)?.[0];
          theirs = list.status === 200 ? (item?.[param] ?? item?.id) : undefined;
        }
        if (typeof theirs !== 'string') continue;
        covered.push(collection);
        const path = (id: string) =>
          route.path.replace(/:[a-z_]+/, encodeURIComponent(id)).replace(/:([a-z_]+)/g, (_, name: string) => `${name}_nobody0000000000`);
        const asTheirs = await call(app, route.method, path(theirs), { key, body: bodyOf(route) });
        const asNobody = await call(app, route.method, path(`${theirs.split('_')[0]}_nobody0000000000`), { key, body: bodyOf(route) });
        if (asTheirs.status < 400 || asTheirs.status !== asNobody.status)
          wrong.push(`${label(route)}: theirs ${asTheirs.status}, nobody's ${asNobody.status} ${asTheirs.text.slice(0, 100)}`);
      }
      expect(wrong).toEqual([]);
      // Every :id route an API key may call is exercised. Keys', users' and connectors' :id routes
      // are console-only: an API key is refused 403 before any id is looked at (the test below).
      expect(covered.sort()).toEqual(routes.map((route) => route.path.slice(0, route.path.indexOf('/:'))).sort());
    }, 120_000);

    test('no credential on a key route: 401 in the envelope, whatever the method and body', async () => {
      const routes = app.declarations.filter((route) => route.auth === 'key');
      expect(routes.length).toBeGreaterThan(40);
      const wrong: string[] = [];
      for (const route of routes) {
        const answer = await call(app, route.method, concrete(route.path), { body: bodyOf(route) });
        const body = answer.body as { success?: boolean } | undefined;
        if (answer.status !== 401 || body?.success !== false) wrong.push(`${label(route)}: ${answer.status} ${answer.text.slice(0, 120)}`);
      }
      expect(wrong).toEqual([]);
    });

    test('a made-up key on a key route: 401 as well', async () => {
      const wrong: string[] = [];
      for (const route of app.declarations.filter((r) => r.auth === 'key')) {
        const answer = await call(app, route.method, concrete(route.path), {
          key: 'rvk_madeup000000000000000000000000',
          body: bodyOf(route),
        });
        if (answer.status !== 401) wrong.push(`${label(route)}: ${answer.status}`);
      }
      expect(wrong).toEqual([]);
    });

    test('an API key on a route for a person signed in to the console: 403', async () => {
      const routes = app.declarations.filter((route) => route.auth === 'key' && (route.who === 'session' || route.who === 'admin-session'));
      expect(routes.length).toBeGreaterThan(0);
      const wrong: string[] = [];
      for (const route of routes) {
        const answer = await call(app, route.method, concrete(route.path), { key, body: bodyOf(route) });
        if (answer.status !== 403) wrong.push(`${label(route)}: ${answer.status} ${answer.text.slice(0, 120)}`);
      }
      expect(wrong).toEqual([]);
    });

    test('a platform route with no signature is refused, never done and never a server error', async () => {
      const routes = app.declarations.filter((route) => route.auth === 'platform-signature');
      expect(routes.length).toBeGreaterThanOrEqual(4);
      const wrong: string[] = [];
      for (const route of routes) {
        const answer = await call(app, route.method, concrete(route.path), {
          rawBody: '{"event":"made up"}',
          headers: { 'content-type': 'application/json' },
        });
        if (answer.status < 400 || answer.status >= 500) wrong.push(`${label(route)}: ${answer.status} ${answer.text.slice(0, 120)}`);
      }
      expect(wrong).toEqual([]);
    });
  });
}
