// Outbound events never reach inside (docs/agent-actions.md → Outbound events), with the default
// ALLOW_PRIVATE_ENDPOINTS=false: every encoding of the test's own loopback listener — IPv4-mapped
// and NAT64 IPv6, numeric IPv4 forms, localhost with a trailing dot — is refused by
// `endpoints add` (the CLI and the server's own check), and an endpoint stored earlier (while the
// operator allowed it) is refused at send time, the listener never hit; redirects are not followed;
// what the organisation reads of a failed attempt is a category, the same whether or not anything
// listens at the address. Every URL here is the test's own loopback listener (or a port it closed).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { isIP } from 'node:net';
import { sql } from 'drizzle-orm';
import { AppError } from '../../src/lib/errors.ts';
import { newId } from '../../src/lib/ids.ts';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { endpointAdminUnits } from '../../src/modules/agent-actions/endpoints.ts';
import { attemptDelivery, deliverEventJob, newEndpointSecret, type Network, type Pending } from '../../src/modules/agent-actions/outbox.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src/settings.ts';
import { runSourceCli } from '../helpers/binary.ts';
import {
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  tempDir,
  testConfig,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../helpers/harness.ts';
import { drainJobs } from '../helpers/jobs.ts';

const SECRET_KEY = 'ssrf-test-secret-key-0123456789abcdefghij';

/** The test's own listener on 127.0.0.1, counting every request that reaches it. */
function listener(answer: () => Response = () => new Response('ok')) {
  const hits: string[] = [];
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => (hits.push(request.url), answer()) });
  return { port: server.port!, hits, stop: () => server.stop(true) };
}

const target = listener();
/** A port of our own that nothing listens on any more. */
const closedPort = (() => {
  const closed = listener();
  closed.stop();
  return closed.port;
})();
afterAll(() => target.stop());

/** The listener's address written every way that means this machine. */
const FORMS = (port: number) => [
  `http://[::ffff:127.0.0.1]:${port}/hook`,
  `http://[::ffff:7f00:1]:${port}/hook`,
  `http://[0:0:0:0:0:ffff:7f00:1]:${port}/hook`,
  `http://[::127.0.0.1]:${port}/hook`,
  `http://[64:ff9b::127.0.0.1]:${port}/hook`,
  `http://[2002:7f00:1::]:${port}/hook`,
  `http://[::1]:${port}/hook`,
  `http://[::]:${port}/hook`,
  `http://2130706433:${port}/hook`,
  `http://0x7f.1:${port}/hook`,
  `http://127.1:${port}/hook`,
  `http://0177.0.0.1:${port}/hook`,
  `http://127.0.0.1.:${port}/hook`,
  `http://0.0.0.0:${port}/hook`,
  `http://localhost:${port}/hook`,
  `http://localhost.:${port}/hook`,
  `http://LocalHost.:${port}/hook`,
  `http://hooks.localhost:${port}/hook`,
];

describe('endpoints add (the CLI) refuses every form of a loopback address', () => {
  const dataDir = tempDir('revintel-ssrf-cli-');
  afterAll(async () => (await import('node:fs')).rmSync(dataDir, { recursive: true, force: true }));
  test.each(FORMS(target.port))('%p', async (url) => {
    const refused = await runSourceCli(['endpoints', 'add', '--org', 'org_nobody', '--url', url, '--json'], {
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      SECRET_KEY,
    });
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stderr)).toMatchObject({
      code: 'usage',
      error: expect.stringMatching(/^--url: .* is not a public address \(/),
    });
    expect(target.hits).toEqual([]);
  });
});

for (const backend of BACKENDS) {
  describe(`outbound addresses (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    /** What the server's admin units and the outbox's jobs run with: ALLOW_PRIVATE_ENDPOINTS as a test sets it. */
    let running: Settings = DEFAULT_SETTINGS;
    const allowPrivate = (allowed: boolean) => {
      running = { ...DEFAULT_SETTINGS, actions: { ...DEFAULT_ACTION_SETTINGS, secretKey: SECRET_KEY, allowPrivateEndpoints: allowed } };
    };

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database, {
        config: testConfig({ databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null, secretKey: SECRET_KEY }),
      }).app;
    });
    afterAll(async () => {
      await database.dispose();
    });

    /** `endpoints add` as the server that owns the database runs it (the admin unit). */
    const addEndpoint = (orgId: string, url: string) => {
      const id = newId('whe');
      return endpointAdminUnits['endpoints.add'](
        database.db,
        {
          id,
          org: orgId,
          url,
          events: null,
          secretSealed: sealSecret(newEndpointSecret(), SECRET_KEY, id),
          actor: 'test',
        },
        running,
      );
    };
    /** An action proposed for a new customer (one event for each endpoint), every delivery job run. */
    async function proposeAndDeliver(key: string) {
      const customer = await call(app, 'POST', '/api/customers', { key, body: { name: 'Acme', currency: 'EUR' } });
      const action = await call(app, 'POST', '/api/agent-actions', {
        key,
        body: { customer_id: customer.body.data.id, type: 'success_plan', params: { goals: ['onboarding'] } },
      });
      expect(action.status).toBe(201);
      await drainJobs(database.db, [deliverEventJob], { settings: running });
      const listed = await call(app, 'GET', '/api/events/deliveries', { key });
      expect(listed.status).toBe(200);
      return listed.body.data as {
        url: string;
        status: string;
        attempts: number;
        last_status: number | null;
        last_error: string | null;
        history: { status: number | null; error: string | null }[];
      }[];
    }
    /** What a delivery tells its organisation, without its ids, times and URL. */
    const outcome = (d: Awaited<ReturnType<typeof proposeAndDeliver>>[number]) => ({
      status: d.status,
      attempts: d.attempts,
      last_status: d.last_status,
      last_error: d.last_error,
      history: d.history.map((h) => ({ status: h.status, error: h.error })),
    });

    describe('the server refuses to store it (422 naming --url)', () => {
      test.each(FORMS(target.port))('%p', async (url) => {
        allowPrivate(false);
        const { org } = await createOrgWithKey(database);
        const refused = await addEndpoint(org.id, url).then(
          () => null,
          (error: unknown) => error,
        );
        expect(refused).toBeInstanceOf(AppError);
        expect(refused).toMatchObject({
          status: 422,
          code: 'unprocessable',
          message: expect.stringMatching(/^--url: .* is not a public address \(/),
        });
      });
    });

    describe('stored while allowed, refused at send time once not: the listener never hit', () => {
      test.each(FORMS(target.port))('%p', async (url) => {
        const { org, secret: key } = await createOrgWithKey(database);
        allowPrivate(true);
        await addEndpoint(org.id, url);
        allowPrivate(false);
        target.hits.length = 0;
        const [delivery] = await proposeAndDeliver(key);
        expect(outcome(delivery!)).toEqual({
          status: 'dead',
          attempts: 1,
          last_status: null,
          last_error: 'refused: address not allowed',
          history: [{ status: null, error: 'refused: address not allowed' }],
        });
        expect(target.hits).toEqual([]);
      });
    });

    test('a refused address reads the same whether or not anything listens there', async () => {
      const { org, secret: key } = await createOrgWithKey(database);
      allowPrivate(true);
      await addEndpoint(org.id, `http://[::ffff:7f00:1]:${target.port}/hook`);
      await addEndpoint(org.id, `http://[::ffff:7f00:1]:${closedPort}/hook`);
      allowPrivate(false);
      const [a, b] = await proposeAndDeliver(key);
      expect(outcome(a!)).toEqual(outcome(b!));
      expect(a!.last_error).toBe('refused: address not allowed');
    });

    test('when allowed, a port with nothing listening reads "connect failed", not the network error naming it', async () => {
      const { org, secret: key } = await createOrgWithKey(database);
      allowPrivate(true);
      await addEndpoint(org.id, `http://127.0.0.1:${closedPort}/hook`);
      const [delivery] = await proposeAndDeliver(key);
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_status: null, last_error: 'connect failed' });
      expect(delivery!.history.map((h) => h.error)).toEqual(['connect failed']);
    });

    test("a failure recorded in the network's own words by an earlier build reads as its category", async () => {
      const { org, secret: key } = await createOrgWithKey(database);
      allowPrivate(true);
      await addEndpoint(org.id, `http://127.0.0.1:${closedPort}/hook`);
      await addEndpoint(org.id, `http://[::ffff:7f00:1]:${target.port}/hook`);
      await proposeAndDeliver(key);
      const old = [
        `Unable to connect. Is the computer able to access the url? (127.0.0.1:${closedPort})`,
        'db-internal resolves to 10.0.0.7, a loopback or private address (set ALLOW_PRIVATE_ENDPOINTS=true for on-premise receivers)',
      ];
      await database.db.execute(sql`
        update event_deliveries set last_error = case when last_error = 'connect failed' then ${old[0]} else ${old[1]} end,
          history = jsonb_build_array(jsonb_build_object('at', now(), 'status', null, 'error', case when last_error = 'connect failed' then ${old[0]} else ${old[1]} end, 'ms', 1))
        where org_id = ${org.id}`);
      const listed = await call(app, 'GET', '/api/events/deliveries', { key });
      const shown = (listed.body.data as { last_error: string; history: { error: string }[] }[])
        .map((d) => [d.last_error, d.history[0]!.error])
        .sort();
      expect(shown).toEqual([
        ['connect failed', 'connect failed'],
        ['refused: address not allowed', 'refused: address not allowed'],
      ]);
    });

    test("when allowed, an error answer reads as its status only, never the receiver's body", async () => {
      const talkative = listener(() => new Response('postgres 16.2 on db-internal-7: relation "users" does not exist', { status: 500 }));
      try {
        const { org, secret: key } = await createOrgWithKey(database);
        allowPrivate(true);
        await addEndpoint(org.id, `http://127.0.0.1:${talkative.port}/hook`);
        const [delivery] = await proposeAndDeliver(key);
        expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_status: 500, last_error: 'http 500' });
        expect(talkative.hits).toHaveLength(1);
      } finally {
        talkative.stop();
      }
    });

    test('a redirect is not followed (to our own second listener): final, that listener never hit', async () => {
      const second = listener();
      const redirecting = listener(
        () => new Response(null, { status: 307, headers: { location: `http://127.0.0.1:${second.port}/inside` } }),
      );
      try {
        const { org, secret: key } = await createOrgWithKey(database);
        allowPrivate(true);
        await addEndpoint(org.id, `http://127.0.0.1:${redirecting.port}/hook`);
        const [delivery] = await proposeAndDeliver(key);
        expect(delivery).toMatchObject({
          status: 'dead',
          attempts: 1,
          last_status: 307,
          last_error: 'http 307 (redirects are not followed): not retried',
        });
        expect(redirecting.hits).toHaveLength(1);
        expect(second.hits).toEqual([]);
      } finally {
        second.stop();
        redirecting.stop();
      }
    });
  });
}

describe('a name is judged by the addresses it resolves to at each attempt', () => {
  // The resolver is the test's: `hooks.test` resolves to whatever the case says, as a DNS answer
  // that changed since the endpoint was added would.
  const settings = { ...DEFAULT_ACTION_SETTINGS, secretKey: SECRET_KEY, allowPrivateEndpoints: false };
  const pending: Pending = {
    id: 'dlv_test',
    org_id: 'org_test',
    attempts: 0,
    endpoint_id: 'whe_test',
    url: `http://hooks.test:${target.port}/hook`,
    secret_sealed: sealSecret(newEndpointSecret(), SECRET_KEY, 'whe_test'),
    event_id: 'evt_test',
    event_type: 'agent_action.proposed',
    data: {},
    event_at: new Date().toISOString(),
  };
  const resolvingTo = (...addresses: string[]): Network => ({
    resolve: async () => addresses.map((address) => ({ address, family: isIP(address) })),
  });

  const ANSWERS: string[][] = [
    ['::ffff:7f00:1'],
    ['::ffff:127.0.0.1'],
    ['64:ff9b::7f00:1'],
    ['2002:7f00:1::'],
    ['::1'],
    ['0.0.0.0'],
    ['8.8.8.8', '::ffff:7f00:1'],
  ];
  test.each(ANSWERS.map((addresses) => ({ addresses })))('resolving to $addresses is refused before connecting', async ({ addresses }) => {
    target.hits.length = 0;
    const result = await attemptDelivery(pending, settings, Date.now(), resolvingTo(...addresses));
    expect(result).toMatchObject({ status: null, error: 'refused: address not allowed', final: true });
    expect(target.hits).toEqual([]);
  });

  test('a name that does not resolve reads "name lookup failed" and is tried again', async () => {
    const result = await attemptDelivery(pending, settings, Date.now(), {
      resolve: async () => Promise.reject(new Error('getaddrinfo ENOTFOUND hooks.test')),
    });
    expect(result).toMatchObject({ status: null, error: 'name lookup failed', final: false });
  });
});
