// The test harness: real databases (embedded PGlite always, PostgreSQL when TEST_DATABASE_URL is
// set), the real app, and tenant-isolated factories (each test makes its own organisation).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type AppDeps } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { connectPostgres, openEmbedded, queryText, type Database, type Db } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/lib/log.ts';
import { memoryRateLimiter, type RateLimiter } from '../../src/lib/rate-limiter.ts';
import { createAuthenticator, createKey } from '../../src/modules/keys/service.ts';
import { createOrg } from '../../src/modules/orgs/service.ts';
import type { Plan } from '../../src/db/schema/index.ts';
import { randomBase62 } from '../../src/lib/ids.ts';
import { patternMatcher, type RouteDeclaration } from '../../src/lib/routes.ts';
import { Value } from '@sinclair/typebox/value';
import { echoModule } from './fixture-routes.ts';

export type BackendKind = 'embedded' | 'postgres';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || null;

/** Every suite runs on the embedded database, and on PostgreSQL too when TEST_DATABASE_URL is set. */
export const BACKENDS: BackendKind[] = TEST_DATABASE_URL ? ['embedded', 'postgres'] : ['embedded'];

export function tempDir(prefix = 'revintel-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestDatabase extends Database {
  /** Closes the database and removes what the test created on disk. */
  dispose(): Promise<void>;
}

export async function openTestDatabase(kind: BackendKind): Promise<TestDatabase> {
  if (kind === 'postgres') {
    if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
    const database = connectPostgres(TEST_DATABASE_URL, 10);
    await runMigrations(database, TEST_DATABASE_URL);
    return { ...database, dispose: () => database.close() };
  }
  const dir = tempDir();
  const database = await openEmbedded(dir, 'test');
  await runMigrations(database, null);
  return {
    ...database,
    dispose: async () => {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ LOG_LEVEL: 'silent' }), ...overrides };
}

export function buildApp(database: Database, overrides: Partial<AppDeps> = {}) {
  const config = overrides.config ?? testConfig({ databaseUrl: database.kind === 'postgres' ? TEST_DATABASE_URL : null });
  const authenticator = overrides.authenticator ?? createAuthenticator(database.db);
  const limiter: RateLimiter = overrides.limiter ?? memoryRateLimiter();
  const app = createApp({
    config,
    database,
    limiter,
    authenticator,
    log: createLogger('silent'),
    readiness: async () => [{ name: 'database', ok: true }],
    modules: [echoModule(config)],
    ...overrides,
  });
  return { app, authenticator, limiter, config };
}

export const uniqueName = (label = 'org') => `${label}-${randomBase62(10)}`;

export async function createOrgWithKey(
  database: Database,
  options: { plan?: Plan; perMinute?: number | null; perDay?: number | null; expiresAt?: Date | null } = {},
) {
  return database.db.transaction(async (tx) => {
    const org = await createOrg(tx as never, {
      name: uniqueName(),
      plan: options.plan ?? 'enterprise',
      rateLimitPerMinute: options.perMinute ?? null,
      rateLimitPerDay: options.perDay ?? null,
      actor: 'test',
    });
    const { key, plaintext } = await createKey(tx as never, {
      org: org.id,
      name: 'test key',
      expiresAt: options.expiresAt ?? null,
      actor: 'test',
    });
    return { org, key, secret: plaintext };
  });
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  rawBody?: string | Uint8Array | ReadableStream;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** One request through the app, as a client would send it. */
export async function call(
  app: { handle(request: Request): Response | Promise<Response> },
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Uint8Array | ReadableStream | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // leave undefined: tests asserting the envelope will fail loudly
  }
  // JSON answers only: an empty 200 (a Slack click's) or a text/plain one (Meta's handshake) has no body to check.
  if ('declarations' in app && text !== '' && response.headers.get('content-type')?.includes('json'))
    expectDocumented(app as { declarations: readonly RouteDeclaration[] }, method, path, response.status, parsed);
  return { status: response.status, headers: response.headers, body: parsed, text };
}

const routeMatchers = new WeakMap<readonly RouteDeclaration[], { route: RouteDeclaration; matcher: RegExp }[]>();

/** Every successful answer a test receives is what its route declares (the schema the OpenAPI
 * document publishes): a field added, renamed or typed otherwise in a service fails the test that
 * saw it, naming the route. */
function expectDocumented(app: { declarations: readonly RouteDeclaration[] }, method: string, path: string, status: number, body: unknown) {
  if (status < 200 || status >= 300) return;
  let matchers = routeMatchers.get(app.declarations);
  if (!matchers)
    routeMatchers.set(app.declarations, (matchers = app.declarations.map((route) => ({ route, matcher: patternMatcher(route.path) }))));
  const pathOnly = path.split('?')[0]!;
  const found = matchers.find((m) => m.route.method === method && m.matcher.test(pathOnly));
  if (!found) return;
  const data = found.route.envelope === false ? body : (body as { data?: unknown } | undefined)?.data;
  const errors = [...Value.Errors(found.route.response, data)].slice(0, 3);
  if (errors.length > 0) {
    throw new Error(
      `${method} ${found.route.path} answered ${status} with data its declaration does not describe: ${errors.map((e) => `${e.path || '/'} ${e.message} (got ${JSON.stringify(e.value)?.slice(0, 80)})`).join('; ')}`,
    );
  }
}

/** Limits use fixed windows aligned to the UTC minute: a test that counts up to a limit must not
 * straddle a boundary, or the new window would rightly admit more. Waits for the next minute when
 * fewer than `marginMs` are left in this one. */
export async function awayFromMinuteBoundary(marginMs = 8_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await Bun.sleep(left + 50);
}

/** Inserts one row as given (column names as in SQL), past the API: for building histories the API
 * would date today (a ticket created last year, first intelligence, a churn mark). */
export async function insertRow(db: Db, table: string, row: Record<string, unknown>): Promise<void> {
  const columns = Object.keys(row);
  await queryText(
    db,
    `insert into ${table} (${columns.join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
    Object.values(row),
  );
}
