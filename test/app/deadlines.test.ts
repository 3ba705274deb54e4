// Every route answers by REQUEST_TIMEOUT_MS, whatever holds the database: on the embedded database
// one long unit of work holds it for every tenant, so each declared route — the API, the console's
// sign-in, every platform's webhook — is asked while a transaction holds it, and must answer its
// own answer or 503 request_timeout, never wait for the database to come back.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { buildApp, call, createOrgWithKey, openTestDatabase, testConfig, type TestDatabase } from '../helpers/harness.ts';
import { TEST_SECRET_KEY } from '../helpers/tickets.ts';

describe('deadlines on every route (embedded, the database held by a unit)', () => {
  let database: TestDatabase;
  let key: string;
  let app: ReturnType<typeof buildApp>['app'];
  let declarations: ReturnType<typeof buildApp>['app']['declarations'];

  beforeAll(async () => {
    database = await openTestDatabase('embedded');
    key = (await createOrgWithKey(database)).secret;
    const built = buildApp(database, { config: testConfig({ databaseUrl: null, secretKey: TEST_SECRET_KEY, requestTimeoutMs: 100 }) });
    app = built.app;
    declarations = built.app.declarations;
    // Keys answered once are cached: the key is known before the database is held.
    expect((await call(app, 'GET', '/api/me', { key })).status).toBe(200);
  });
  afterAll(() => database?.dispose());

  test('each declared route answers while a transaction holds the database: its own answer or 503 request_timeout', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const holding = database.db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
      await held;
    });
    const answers: { route: string; status: number; code: unknown }[] = [];
    try {
      for (const route of declarations) {
        const path = route.path.replace(/:(\w+)/g, 'x_$1');
        const withBody = route.method !== 'GET' && route.method !== 'DELETE';
        const answer = await call(app, route.method, path, {
          key,
          headers: { 'x-forwarded-for': '203.0.113.9' },
          ...(withBody ? { body: {} } : {}),
        });
        answers.push({
          route: `${route.method} ${route.path}`,
          status: answer.status,
          code: (answer.body as { code?: unknown } | null)?.code,
        });
      }
    } finally {
      release();
      await holding;
    }
    const wrong = answers.filter((a) => a.status >= 500 && !(a.status === 503 && a.code === 'request_timeout'));
    expect(wrong).toEqual([]);
    expect(answers.length).toBe(declarations.length);
  }, 120_000);
});
