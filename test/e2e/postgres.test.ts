// The compiled binary on PostgreSQL: several processes, one database. Runs when TEST_DATABASE_URL is
// set (CI sets it); each run makes its own empty database and drops it afterwards.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import postgres from 'postgres';
import { TEST_DATABASE_URL, awayFromMinuteBoundary } from '../helpers/harness.ts';
import { ensureBinary, get, runCli, startServe, waitFor, type ServeProcess } from '../helpers/binary.ts';
import { fakeSlack } from '../helpers/fake-slack.ts';
import { randomBase62 } from '../../src/lib/ids.ts';

const TEST_REDIS_URL = process.env.TEST_REDIS_URL || null;
const suites = TEST_DATABASE_URL ? ['postgres'] : [];

for (const _ of suites) {
  describe('the binary on PostgreSQL', () => {
    const admin = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    const servers: ServeProcess[] = [];
    const track = (server: ServeProcess) => (servers.push(server), server);
    const databases: string[] = [];

    /** A brand-new empty database on the same server. */
    async function emptyDatabase(): Promise<string> {
      const name = `revintel_e2e_${randomBase62(8).toLowerCase()}`;
      await admin.unsafe(`create database ${name}`);
      databases.push(name);
      const url = new URL(TEST_DATABASE_URL!);
      url.pathname = `/${name}`;
      return url.href;
    }

    // Building the binary (when it is older than the sources) takes longer than a hook's default.
    beforeAll(() => {
      ensureBinary();
    }, 180_000);
    // Each test's servers go when it ends: a server holds its pools' connections, and PostgreSQL
    // allows 100 by default.
    afterEach(async () => {
      const ending = servers.splice(0);
      ending.forEach((s) => s.kill('SIGKILL'));
      await Promise.all(ending.map((s) => s.exited));
    });
    afterAll(async () => {
      for (const name of databases) await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    });

    test('two instances booting together on an empty database both come up', async () => {
      const url = await emptyDatabase();
      const [a, b] = await Promise.all([startServe({ DATABASE_URL: url }), startServe({ DATABASE_URL: url })]);
      track(a);
      track(b);
      for (const server of [a, b]) expect((await get(`${server.url}/readyz`)).status).toBe(200);
      const check = postgres(url, { max: 1 });
      const [{ n }] = (await check`select count(*)::int as n from drizzle.__drizzle_migrations`) as unknown as [{ n: number }];
      const instances = await check`select id from instances where stopped_at is null`;
      await check.end();
      expect(instances.length).toBe(2); // each instance registered itself
      // the two took turns: between them each migration was applied exactly once
      const appliedBy = (server: { output(): string }) => Number(/"migrations_applied":(\d+)/.exec(server.output())![1]);
      expect(appliedBy(a) + appliedBy(b)).toBe(n);
      expect(n).toBeGreaterThanOrEqual(2);
    });

    test('two processes sharing one database share the limit exactly: 200 concurrent requests, 60 pass', async () => {
      const url = await emptyDatabase();
      const a = track(await startServe({ DATABASE_URL: url }));
      const b = track(await startServe({ DATABASE_URL: url }));
      const org = await runCli(['orgs', 'create', '--name', 'Shared Co', '--plan', 'growth_agents', '--json'], { DATABASE_URL: url });
      expect(org.code).toBe(0);
      const key = await runCli(['keys', 'create', '--org', 'Shared Co', '--name', 'k', '--json'], { DATABASE_URL: url });
      await awayFromMinuteBoundary();
      const statuses = await Promise.all(
        Array.from({ length: 200 }, (_, i) => get(`${(i % 2 ? a : b).url}/api/me`, key.json.secret).then((r) => r.status)),
      );
      expect(statuses.filter((s) => s === 200).length).toBe(60);
      expect(statuses.filter((s) => s === 429).length).toBe(140);
    });

    test('a key revoked with the CLI stops working on every instance within 5 seconds', async () => {
      const url = await emptyDatabase();
      const a = track(await startServe({ DATABASE_URL: url }));
      const b = track(await startServe({ DATABASE_URL: url }));
      await runCli(['orgs', 'create', '--name', 'Revokers', '--plan', 'enterprise'], { DATABASE_URL: url });
      const key = await runCli(['keys', 'create', '--org', 'Revokers', '--name', 'k', '--json'], { DATABASE_URL: url });
      for (const server of [a, b]) expect((await get(`${server.url}/api/me`, key.json.secret)).status).toBe(200);
      const revokedAt = Date.now();
      expect((await runCli(['keys', 'revoke', key.json.id], { DATABASE_URL: url })).code).toBe(0);
      for (const server of [a, b]) await waitFor(async () => (await get(`${server.url}/api/me`, key.json.secret)).status === 401, 5_000);
      expect(Date.now() - revokedAt).toBeLessThan(5_000);
    });

    test('sharing a port takes REUSE_PORT and a shared store; without it the port is refused', async () => {
      const url = await emptyDatabase();
      const first = track(await startServe({ DATABASE_URL: url, REUSE_PORT: 'true' }));
      const refused = await runCli(['serve'], { DATABASE_URL: url, PORT: String(first.port), HOST: '127.0.0.1' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('in use');
      const second = track(await startServe({ DATABASE_URL: url, REUSE_PORT: 'true', PORT: String(first.port) }));
      expect(second.port).toBe(first.port);
      expect((await get(`${first.url}/readyz`)).status).toBe(200);
    });

    test('migrate on an empty database, then serve starts without migrating again', async () => {
      const url = await emptyDatabase();
      const migrated = await runCli(['migrate', '--json'], { DATABASE_URL: url });
      expect(migrated.code).toBe(0);
      expect(migrated.json.applied).toBeGreaterThanOrEqual(2);
      const again = await runCli(['migrate', '--json'], { DATABASE_URL: url });
      expect(again.json.applied).toBe(0);
      const server = track(await startServe({ DATABASE_URL: url }));
      expect(server.output()).toContain('"migrations_applied":0');
    });

    if (TEST_REDIS_URL) {
      test('with REDIS_URL the limit lives in Redis, shared by the processes', async () => {
        const url = await emptyDatabase();
        const env = { DATABASE_URL: url, REDIS_URL: TEST_REDIS_URL };
        const a = track(await startServe(env));
        const b = track(await startServe(env));
        expect(a.output() + b.output()).not.toContain('error');
        await runCli(['orgs', 'create', '--name', 'Redis Co', '--plan', 'growth_agents', '--limit-per-minute', '25'], env);
        const key = await runCli(['keys', 'create', '--org', 'Redis Co', '--name', 'k', '--json'], env);
        await awayFromMinuteBoundary();
        const statuses = await Promise.all(
          Array.from({ length: 80 }, (_, i) => get(`${(i % 2 ? a : b).url}/api/me`, key.json.secret).then((r) => r.status)),
        );
        expect(statuses.filter((s) => s === 200).length).toBe(25);
      });
    }

    test('two instances sending Slack approvals from one outbox: every message posted once, every copy updated once', async () => {
      const slack = fakeSlack();
      try {
        const url = await emptyDatabase();
        const env = {
          DATABASE_URL: url,
          SECRET_KEY: 'two-instances-secret-key-0123456789abcdef',
          SLACK_API_BASE: slack.base,
          ALLOW_INSECURE_PLATFORM_URLS: 'true',
        };
        const [a, b] = [track(await startServe(env)), track(await startServe(env))];
        await runCli(['orgs', 'create', '--name', 'Chatty', '--plan', 'enterprise'], env);
        const key = (await runCli(['keys', 'create', '--org', 'Chatty', '--name', 'k', '--json'], env)).json.secret as string;
        expect(
          (await runCli(['chat', 'add', 'slack', '--org', 'Chatty', '--team-id', 'T0TWO', '--bot-token', 'xoxb-two-instances'], env)).code,
        ).toBe(0);
        const call = (server: ServeProcess, method: string, path: string, body?: unknown) =>
          fetch(`${server.url}${path}`, {
            method,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
        expect(
          (await call(a, 'POST', '/api/csms', { email: 'ana@chatty.test', name: 'Ana', slack_user_id: 'U0ANA', channels: ['slack'] }))
            .status,
        ).toBe(201);
        // Twenty actions proposed through both instances at once, then approved through the other one.
        const ids = await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const server = i % 2 ? a : b;
            const customer = await call(server, 'POST', '/api/customers', {
              external_id: `c-${i}`,
              name: `Customer ${i}`,
              currency: 'EUR',
              csm: { email: 'ana@chatty.test' },
            });
            const action = await call(server, 'POST', '/api/agent-actions', {
              customer_id: customer.body.data.id,
              type: 'check_in',
              params: { channel: 'call', due_in_days: 3 },
            });
            expect(action.status).toBe(201);
            return action.body.data.id as string;
          }),
        );
        const actionOf = (body: unknown) => /act_[A-Za-z0-9]+/.exec(JSON.stringify(body))?.[0];
        await waitFor(async () => slack.callsOf('chat.postMessage').length >= 20, 20_000);
        await Promise.all(
          ids.map((id, i) => call(i % 2 ? b : a, 'POST', `/api/agent-actions/${id}/approve`).then((r) => expect(r.status).toBe(200))),
        );
        await waitFor(async () => slack.callsOf('chat.update').length >= 20, 20_000);
        await Bun.sleep(1_000); // room for a second send, were there one
        const posted = slack.callsOf('chat.postMessage').map((c) => actionOf(c.body));
        const updated = slack.callsOf('chat.update').map((c) => actionOf(c.body));
        expect(posted.sort()).toEqual([...ids].sort());
        expect(updated.sort()).toEqual([...ids].sort());
        // The outbox agrees: forty sends (a post and an update per action), each delivered once.
        const check = postgres(url, { max: 1 });
        const sends = await check`select status, count(*)::int as n, max(attempts)::int as attempts from chat_sends group by status`;
        await check.end();
        expect(sends.map((r) => [r.status, r.n, r.attempts])).toEqual([['delivered', 40, 1]]);
      } finally {
        slack.stop();
      }
    }, 60_000);

    test('SIGTERM: exit 0 and the instance is marked stopped', async () => {
      const url = await emptyDatabase();
      const server = track(await startServe({ DATABASE_URL: url }));
      server.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      const check = postgres(url, { max: 1 });
      const rows = await check`select stopped_at from instances`;
      await check.end();
      expect(rows[0]!.stopped_at).toBeInstanceOf(Date);
    });
  });
}
