// The outbox of outbound events on both backends (docs/agent-actions.md → Outbound events): an
// endpoint registered with `revintel endpoints add` (the secret printed once; a loopback address
// refused unless ALLOW_PRIVATE_ENDPOINTS=true), a real receiver (Bun.serve on port 0) that checks
// the Standard Webhooks signature and answers 500, 500, 200 — delivered once, signed, the same
// webhook-id each time; a 4xx other than 408/429 dead at once, then `revintel outbox retry`;
// Retry-After honoured; dead after 8 attempts; a private address refused at delivery;
// GET /api/events/deliveries showing the attempts to its organisation only; over HTTPS, the attempt
// connects to the address it checked, the certificate verified against the URL's name.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { connectPostgres, openEmbedded, queryText, type Database } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { ensureSecretKey } from '../../src/lib/secret-key.ts';
import { Value } from '@sinclair/typebox/value';
import { Delivery } from '../../src/modules/agent-actions/model.ts';
import {
  attemptDelivery,
  deliverEventJob,
  newEndpointSecret,
  signWebhook,
  type Network,
  type Pending,
} from '../../src/modules/agent-actions/outbox.ts';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src/settings.ts';
import { runSourceCli } from '../helpers/binary.ts';
import { buildApp, call, createOrgWithKey, tempDir, testConfig, TEST_DATABASE_URL } from '../helpers/harness.ts';
import { drainJobs } from '../helpers/jobs.ts';

const SECRET_KEY = 'outbox-test-secret-key-0123456789abcdefgh';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A receiver that checks every delivery's signature and answers from a script (then 200). */
function receiver() {
  const seen: { id: string; timestamp: string; body: string; valid: boolean; answered: number }[] = [];
  let script: { status: number; headers?: Record<string, string> }[] = [];
  let secret = '';
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const body = await request.text();
      const id = request.headers.get('webhook-id') ?? '';
      const timestamp = request.headers.get('webhook-timestamp') ?? '';
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
      const given = (request.headers.get('webhook-signature') ?? '')
        .split(' ')
        .map((part) => part.split(','))
        .filter(([v]) => v === 'v1')
        .map(([, sig]) => Buffer.from(sig ?? '', 'base64'));
      const valid = given.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected));
      const next = script.shift() ?? { status: 200 };
      seen.push({ id, timestamp, body, valid, answered: next.status });
      return new Response(next.status === 200 ? 'ok' : 'no', { status: next.status, headers: next.headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks/revintel`,
    seen,
    answer: (statuses: { status: number; headers?: Record<string, string> }[]) => (script = [...statuses]),
    useSecret: (s: string) => (secret = s),
    stop: () => server.stop(true),
  };
}

interface Target {
  label: string;
  env: Record<string, string>;
  open: () => Promise<Database>;
  secretKey: () => string;
}

const dataDir = tempDir('revintel-outbox-');
dirs.push(dataDir);
const targets: Target[] = [
  {
    label: 'embedded',
    env: { DATA_DIR: dataDir },
    open: () => openEmbedded(dataDir, 'test'),
    secretKey: () => ensureSecretKey(null, dataDir)!,
  },
];
if (TEST_DATABASE_URL) {
  const url = TEST_DATABASE_URL;
  targets.push({
    label: 'postgres',
    env: { DATABASE_URL: url, SECRET_KEY },
    open: async () => connectPostgres(url, 4),
    secretKey: () => SECRET_KEY,
  });
}

for (const target of targets) {
  describe(`outbound events (${target.label})`, () => {
    const cli = (args: string[], env: Record<string, string> = {}) =>
      runSourceCli([...args, '--json'], { LOG_LEVEL: 'silent', ...target.env, ...env });
    const hook = receiver();
    let orgName: string;
    let key: string;
    let otherKey: string;
    let endpointId: string;
    /** What the outbox's jobs run with (set once the target's SECRET_KEY is known). */
    let settings: Settings = DEFAULT_SETTINGS;
    const allowingPrivate = (allowPrivateEndpoints: boolean): Settings => ({
      ...DEFAULT_SETTINGS,
      actions: { ...DEFAULT_ACTION_SETTINGS, secretKey: target.secretKey(), allowPrivateEndpoints },
    });

    /** The database and app for the time of `fn` (the embedded CLI needs DATA_DIR between). */
    async function withApp<T>(fn: (app: ReturnType<typeof buildApp>['app'], database: Database) => Promise<T>): Promise<T> {
      const database = await target.open();
      try {
        await runMigrations(database, target.label === 'postgres' ? TEST_DATABASE_URL : null);
        const app = buildApp(database, {
          config: testConfig({ databaseUrl: target.label === 'postgres' ? TEST_DATABASE_URL : null, secretKey: target.secretKey() }),
        }).app;
        return await fn(app, database);
      } finally {
        await database.close();
      }
    }
    /** Every outbox job run, retries included, by a clock three hours ahead (back-offs are due). */
    const deliverAll = (database: Database) =>
      drainJobs(database.db, [deliverEventJob], { clock: () => Date.now() + 3 * 3600_000, settings });
    /** Proposes an action for a new customer: one `agent_action.proposed` event. */
    async function propose(app: ReturnType<typeof buildApp>['app']): Promise<string> {
      const customer = await call(app, 'POST', '/api/customers', { key, body: { name: 'Acme', currency: 'EUR' } });
      const action = await call(app, 'POST', '/api/agent-actions', {
        key,
        body: { customer_id: customer.body.data.id, type: 'success_plan', params: { goals: ['onboarding'] } },
      });
      expect(action.status).toBe(201);
      return action.body.data.id;
    }
    const deliveries = (app: ReturnType<typeof buildApp>['app'], query = '', k = key) =>
      call(app, 'GET', `/api/events/deliveries${query}`, { key: k });

    beforeAll(async () => {
      if (target.label === 'postgres') expect((await runSourceCli(['migrate'], { LOG_LEVEL: 'silent', ...target.env })).code).toBe(0);
      await withApp(async (_app, database) => {
        const made = await createOrgWithKey(database);
        orgName = made.org.name;
        key = made.secret;
        otherKey = (await createOrgWithKey(database)).secret;
      });
      settings = allowingPrivate(true);
    });
    afterAll(() => {
      hook.stop();
    });

    test('endpoints add refuses a loopback address unless allowed, prints the secret once; list shows no secret', async () => {
      const refused = await cli(['endpoints', 'add', '--org', orgName, '--url', hook.url]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('--url: 127.0.0.1 is not a public address (loopback 127.0.0.0/8)');
      const bad = await cli(['endpoints', 'add', '--org', orgName, '--url', 'ftp://example.com/x']);
      expect(bad.code).toBe(2);
      const added = await cli(
        ['endpoints', 'add', '--org', orgName, '--url', hook.url, '--events', 'agent_action.proposed,agent_action.executed'],
        { ALLOW_PRIVATE_ENDPOINTS: 'true' },
      );
      expect(added.code).toBe(0);
      expect(added.json).toMatchObject({ url: hook.url, events: ['agent_action.proposed', 'agent_action.executed'] });
      expect(added.json.id).toMatch(/^whe_/);
      expect(added.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      endpointId = added.json.id;
      hook.useSecret(added.json.secret);
      const listed = await cli(['endpoints', 'list', '--org', orgName]);
      expect(listed.json.map((e: any) => e.id)).toEqual([endpointId]);
      expect(listed.stdout).not.toContain('whsec_');
      expect(listed.stdout).not.toContain('secret');
    });

    test('the receiver answers 500, 500, 200: delivered once, every attempt signed with the same webhook-id', async () => {
      hook.seen.length = 0;
      hook.answer([{ status: 500 }, { status: 500 }]);
      await withApp(async (app, database) => {
        const actionId = await propose(app);
        await deliverAll(database);
        expect(hook.seen.map((s) => s.answered)).toEqual([500, 500, 200]);
        expect(hook.seen.every((s) => s.valid)).toBe(true);
        expect(new Set(hook.seen.map((s) => s.id)).size).toBe(1);
        const body = JSON.parse(hook.seen[2]!.body);
        expect(body).toMatchObject({ type: 'agent_action.proposed', data: { action: { id: actionId, status: 'pending_approval' } } });
        const listed = await deliveries(app, `?endpoint_id=${endpointId}`);
        expect(listed.status).toBe(200);
        expect(listed.body.data[0]).toMatchObject({
          event_id: hook.seen[0]!.id,
          status: 'delivered',
          attempts: 3,
          last_status: 200,
          url: hook.url,
        });
        expect(listed.body.data[0].history.map((h: any) => h.status)).toEqual([500, 500, 200]);
        expect(Value.Check(Delivery, listed.body.data[0])).toBe(true);
        expect((await deliveries(app, '', otherKey)).body.data).toHaveLength(0);
        expect((await deliveries(app, '?status=lost')).status).toBe(400);
      });
    });

    test('a 410 is final at once; outbox retry sends it again; Retry-After is honoured', async () => {
      hook.seen.length = 0;
      hook.answer([{ status: 410 }]);
      let deliveryId = '';
      await withApp(async (app, database) => {
        await propose(app);
        await deliverAll(database);
        const [dead] = (await deliveries(app, '?status=dead')).body.data;
        expect(dead).toMatchObject({ attempts: 1, last_status: 410 });
        expect(dead.last_error).toContain('not retried');
        deliveryId = dead.id;
      });
      const listed = await cli(['outbox', 'list', '--org', orgName, '--status', 'dead']);
      expect(listed.json.map((d: any) => d.id)).toContain(deliveryId);
      const retried = await cli(['outbox', 'retry', deliveryId]);
      expect(retried.json).toEqual({ retried: [deliveryId] });
      hook.answer([{ status: 429, headers: { 'retry-after': '7200' } }]);
      await withApp(async (app, database) => {
        await drainJobs(database.db, [deliverEventJob], { settings }); // by the real clock: one attempt, then not due for two hours
        const [again] = (await deliveries(app, `?status=pending`)).body.data;
        expect(again).toMatchObject({ id: deliveryId, attempts: 1, last_status: 429 });
        expect(Date.parse(again.next_attempt_at) - Date.now()).toBeGreaterThan(7000 * 1000);
        await deliverAll(database);
        expect(
          (await queryText<{ status: string }>(database.db, `select status from event_deliveries where id = $1`, [deliveryId]))[0]!.status,
        ).toBe('delivered');
      });
    });

    test('a receiver failing every time: dead after 8 attempts', async () => {
      hook.seen.length = 0;
      hook.answer(Array.from({ length: 20 }, () => ({ status: 503 })));
      await withApp(async (app, database) => {
        await propose(app);
        await deliverAll(database);
        expect(hook.seen).toHaveLength(8);
        const [dead] = (await deliveries(app, '?status=dead')).body.data;
        expect(dead).toMatchObject({ attempts: 8, last_status: 503 });
      });
      hook.answer([]);
    });

    test('with private endpoints not allowed, a delivery to a loopback address is refused at once', async () => {
      hook.seen.length = 0;
      settings = allowingPrivate(false);
      try {
        await withApp(async (app, database) => {
          await propose(app);
          await deliverAll(database);
          const [dead] = (await deliveries(app, '?status=dead')).body.data;
          expect(dead).toMatchObject({ attempts: 1, last_status: null, last_error: 'refused: address not allowed' });
        });
        expect(hook.seen).toHaveLength(0);
      } finally {
        settings = allowingPrivate(true);
      }
    });

    test('endpoints remove: nothing more is delivered to it, and what was pending stops, dead with the reason', async () => {
      let pendingId = '';
      await withApp(async (app) => {
        await propose(app); // its delivery is pending: no job has run it
        pendingId = (await deliveries(app, '?status=pending')).body.data[0].id;
      });
      const removed = await cli(['endpoints', 'remove', endpointId]);
      expect(removed.code).toBe(0);
      hook.seen.length = 0;
      await withApp(async (app, database) => {
        await propose(app);
        await deliverAll(database);
        const [stopped] = (await deliveries(app, '?status=dead')).body.data;
        expect(stopped).toMatchObject({ id: pendingId, attempts: 0, last_error: 'the endpoint was removed' });
      });
      expect(hook.seen).toHaveLength(0);
    });
  });
}

describe('a delivery connects to the address it checked', () => {
  // An HTTPS receiver whose certificate names receiver.test, a name only the test's resolver knows:
  // a delivery that reached it connected to the address the resolver gave, with the name as SNI.
  const TLS = new URL('../fixtures/tls/', import.meta.url);
  const ca = readFileSync(new URL('receiver.test.crt', TLS), 'utf8');
  const seen: { host: string | null; valid: boolean }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: ca, key: readFileSync(new URL('receiver.test.key', TLS), 'utf8') },
    async fetch(request) {
      const body = await request.text();
      const expected = signWebhook(secret, request.headers.get('webhook-id')!, Number(request.headers.get('webhook-timestamp')), body);
      seen.push({ host: request.headers.get('host'), valid: request.headers.get('webhook-signature') === expected });
      return new Response('ok');
    },
  });
  afterAll(() => server.stop(true));
  const secret = newEndpointSecret();
  const settings = { ...DEFAULT_ACTION_SETTINGS, secretKey: SECRET_KEY, allowPrivateEndpoints: true };
  const pendingFor = (url: string): Pending => ({
    id: 'dlv_test',
    org_id: 'org_test',
    attempts: 0,
    endpoint_id: 'whe_test',
    url,
    secret_sealed: sealSecret(secret, SECRET_KEY, 'whe_test'),
    event_id: 'evt_test',
    event_type: 'agent_action.proposed',
    data: { action: { id: 'act_test' } },
    event_at: new Date().toISOString(),
  });
  const resolvingTo = (...addresses: string[]): Network => ({
    ca,
    resolve: async () => addresses.map((address) => ({ address, family: isIP(address) })),
  });
  const url = `https://receiver.test:${server.port}/hooks`;

  test('over HTTPS: to the resolved address, the certificate checked against the name', async () => {
    seen.length = 0;
    const result = await attemptDelivery(pendingFor(url), settings, Date.now(), resolvingTo('127.0.0.1'));
    expect(result).toMatchObject({ status: 200, error: null });
    expect(seen).toEqual([{ host: `receiver.test:${server.port}`, valid: true }]);
  });

  test('a name resolving to a private address (or to one among public ones) is refused before connecting, unless allowed', async () => {
    seen.length = 0;
    for (const addresses of [['127.0.0.1'], ['93.184.216.34', '10.1.2.3'], ['::ffff:192.168.0.10']]) {
      const result = await attemptDelivery(
        pendingFor(url),
        { ...settings, allowPrivateEndpoints: false },
        Date.now(),
        resolvingTo(...addresses),
      );
      expect(result).toMatchObject({ status: null, final: true, error: 'refused: address not allowed' });
    }
    expect(seen).toEqual([]);
  });

  test('a certificate for another name is not trusted: no delivery, tried again later', async () => {
    seen.length = 0;
    const other = `https://elsewhere.test:${server.port}/hooks?token=receivers-own-secret`;
    const result = await attemptDelivery(pendingFor(other), settings, Date.now(), resolvingTo('127.0.0.1'));
    expect(result).toMatchObject({ status: null, final: false, error: 'TLS failed' });
    // The detail (for the server's log) names the error and the address, not the URL and its token.
    expect(result.detail).toBe(`ERR_TLS_CERT_ALTNAME_INVALID connecting to 127.0.0.1:${server.port}`);
    expect(seen).toEqual([]);
  });
});
