// `revintel users` through the compiled binary against a running server (in-process, as `serve` runs it): on the
// embedded database the CLI goes through the server's admin socket, on PostgreSQL on its own
// connection. The printed link signs in; list shows the user; disable ends their sessions.
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { startServer } from '../../src/server.ts';
import { createLogger } from '../../src/lib/log.ts';
import { runCli } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { BACKENDS, tempDir, testConfig, TEST_DATABASE_URL, uniqueName } from '../helpers/harness.ts';

const WORKER_URL = new URL('../../src/jobs/worker.ts', import.meta.url);
const { dirs } = e2eFile();

for (const backend of BACKENDS) {
  describe(`users CLI against a running server (${backend})`, () => {
    test('create prints a one-time link that signs in; list shows the user; disable ends their sessions', async () => {
      const dataDir = join(tempDir(), 'data');
      dirs.push(dataDir);
      const config = testConfig({
        port: 0,
        host: '127.0.0.1',
        dataDir,
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
        shutdownTimeoutMs: 5_000,
      });
      const server = await startServer(config, { workerUrl: WORKER_URL, log: createLogger('silent') });
      try {
        const base = server.url.href.replace(/\/$/, '');
        const env: Record<string, string> = {
          LOG_LEVEL: 'silent',
          PUBLIC_URL: base,
          ...(backend === 'postgres' ? { DATABASE_URL: TEST_DATABASE_URL! } : { DATA_DIR: dataDir }),
        };
        const cli = (args: string[]) => runCli([...args, '--json'], env);
        const org = uniqueName('users-cli');
        expect((await cli(['orgs', 'create', '--name', org, '--plan', 'growth_agents'])).code).toBe(0);

        const created = await cli(['users', 'create', '--org', org, '--email', 'Ops@Example.com', '--name', 'Ops', '--role', 'admin']);
        if (created.code !== 0) throw new Error(created.stderr + created.stdout);
        expect(created.code).toBe(0);
        expect(created.json).toMatchObject({ email: 'ops@example.com', name: 'Ops', role: 'admin', status: 'invited' });
        expect(created.json.id).toMatch(/^usr_/);
        expect(created.json.sign_in_link).toMatch(new RegExp(`^${base}/sign-in/accept#token=[0-9A-Za-z]{43}$`));
        expect(Date.parse(created.json.link_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
        const badRole = await cli(['users', 'create', '--org', org, '--email', 'x@example.com', '--role', 'owner']);
        expect(badRole.code).toBe(1);
        expect(JSON.parse(badRole.stderr).error).toContain('role must be one of admin, member');

        const token = created.json.sign_in_link.split('#token=')[1];
        const accepted = await fetch(`${base}/api/auth/accept`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token, password: 'a long password' }),
        });
        expect(accepted.status).toBe(200);
        const cookie = accepted.headers.get('set-cookie')!.split(';')[0]!;
        expect((await fetch(`${base}/api/me`, { headers: { cookie } })).status).toBe(200);

        const listed = await cli(['users', 'list', '--org', org]);
        expect(listed.json).toEqual([expect.objectContaining({ id: created.json.id, status: 'active' })]);
        expect(listed.stdout).not.toContain('argon2');

        const disabled = await cli(['users', 'disable', created.json.id]);
        if (disabled.code !== 0) throw new Error(disabled.stderr + disabled.stdout);
        expect(disabled.json).toMatchObject({ id: created.json.id, status: 'disabled' });
        expect((await fetch(`${base}/api/me`, { headers: { cookie } })).status).toBe(401);
        const link = await cli(['users', 'link', created.json.id]);
        expect(link.code).toBe(1);
        expect(JSON.parse(link.stderr).error).toContain('is disabled');
      } finally {
        await server.stop();
      }
    });
  });
}
