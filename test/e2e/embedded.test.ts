// The compiled binary on the embedded database, as a newcomer and an operator use it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBinary, get, runCli, startServe, waitFor, type ServeProcess } from '../helpers/binary.ts';
import { tempDir } from '../helpers/harness.ts';
import { readLockHolder } from '../../src/db/data-dir-lock.ts';

const dirs: string[] = [];
const servers: ServeProcess[] = [];
afterAll(() => {
  servers.forEach((s) => s.kill('SIGKILL'));
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});
const newDir = () => {
  const dir = tempDir('revintel-e2e-');
  dirs.push(dir);
  return dir;
};
const track = (server: ServeProcess) => (servers.push(server), server);

// Building the binary (when it is older than the sources) takes longer than a hook's default.
beforeAll(() => {
  ensureBinary();
}, 180_000);

describe('the binary on the embedded database', () => {
  let cwd: string;
  let server: ServeProcess;
  let env: Record<string, string>;
  let orgId: string;
  let secret: string;

  beforeAll(async () => {
    // a directory with nothing in it: no node_modules, no config; DATA_DIR defaults to ./data
    cwd = newDir();
    env = {};
    server = track(await startServe(env, { cwd }));
  });

  test('starts with nothing configured and is ready', async () => {
    const ready = (await (await get(`${server.url}/readyz`)).json()) as any;
    expect(ready).toMatchObject({ success: true, data: { status: 'ready' } });
    expect(ready.data.checks.map((c: { name: string }) => c.name)).toEqual(['database', 'migrations', 'worker']);
    expect(existsSync(join(cwd, 'data', 'pgdata', 'PG_VERSION'))).toBe(true);
    expect(existsSync(join(cwd, 'data', 'secret.key'))).toBe(true);
  });

  test('the CLI works while serve runs, through the server, and its keys work at once', async () => {
    const org = await runCli(['orgs', 'create', '--name', 'Acme Corp', '--plan', 'growth_agents', '--json'], env, { cwd });
    expect(org.code).toBe(0);
    expect(org.json).toMatchObject({ name: 'Acme Corp', plan: 'growth_agents', limit_per_minute: 60, limit_per_day: 10_000 });
    orgId = org.json.id;
    const key = await runCli(['keys', 'create', '--org', 'Acme Corp', '--name', 'ci', '--json'], env, { cwd });
    expect(key.code).toBe(0);
    secret = key.json.secret;
    expect(secret).toMatch(/^rvk_[0-9A-Za-z]{40}$/);
    const me = await get(`${server.url}/api/me`, secret);
    expect(me.status).toBe(200);
    expect(((await me.json()) as any).data.org).toEqual({ id: orgId, name: 'Acme Corp', plan: 'growth_agents' });

    const human = await runCli(['keys', 'create', '--org', orgId, '--name', 'human'], env, { cwd });
    expect(human.stdout).toContain('only time the key is shown');
    const list = await runCli(['keys', 'list', '--org', orgId, '--json'], env, { cwd });
    expect(list.json.map((k: { name: string }) => k.name).sort()).toEqual(['ci', 'human']);
    expect(list.stdout).not.toContain(secret);
  });

  test('an override set with the CLI applies to the running server', async () => {
    const updated = await runCli(['orgs', 'update', orgId, '--limit-per-minute', '5', '--json'], env, { cwd });
    expect(updated.code).toBe(0);
    expect(updated.json.limit_per_minute).toBe(5);
    const response = await get(`${server.url}/api/me`, secret);
    expect(response.headers.get('x-ratelimit-limit-minute')).toBe('5');
    await runCli(['orgs', 'update', orgId, '--limit-per-minute', 'plan'], env, { cwd });
  });

  test('a key revoked with the CLI stops working at once', async () => {
    const key = await runCli(['keys', 'create', '--org', orgId, '--name', 'short-lived', '--json'], env, { cwd });
    expect((await get(`${server.url}/api/me`, key.json.secret)).status).toBe(200);
    const revoked = await runCli(['keys', 'revoke', key.json.id, '--json'], env, { cwd });
    expect(revoked.code).toBe(0);
    expect(revoked.json).toMatchObject({ id: key.json.id, status: 'revoked', already_revoked: false });
    const response = await get(`${server.url}/api/me`, key.json.secret);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toStartWith('Bearer');
  });

  test('a CLI killed mid-command never wedges the server', async () => {
    for (let i = 0; i < 8; i++) {
      const proc = Bun.spawn([ensureBinary(), 'keys', 'create', '--org', orgId, '--name', `killed-${i}`], {
        cwd,
        env: { PATH: process.env.PATH! },
        stdout: 'ignore',
        stderr: 'ignore',
      });
      await Bun.sleep(i * 15);
      proc.kill('SIGKILL');
      await proc.exited;
    }
    expect((await get(`${server.url}/readyz`)).status).toBe(200);
    expect((await get(`${server.url}/api/me`, secret)).status).toBe(200);
    const list = await runCli(['orgs', 'list', '--json'], env, { cwd });
    expect(list.code).toBe(0);
    expect(list.json.map((o: { name: string }) => o.name)).toEqual(['Acme Corp']);
  });

  test('a client that dies mid-command on the admin socket never wedges the server; a whole command it sent is done', async () => {
    const socketPath = join(cwd, 'data', 'run', 'revintel.sock');
    const connect = () => Bun.connect({ unix: socketPath, socket: { data() {} } });
    // half a request, then gone
    const half = await connect();
    half.write('POST /units/keys.create HTTP/1.1\r\nHost: revintel\r\nContent-Length: 500\r\n\r\n{"org": "');
    half.terminate();
    // a whole request, then gone before the answer
    const body = JSON.stringify({ org: orgId, name: 'sent-then-gone', expiresAt: null, actor: 'cli:test' });
    const whole = await connect();
    whole.write(
      `POST /units/keys.create HTTP/1.1\r\nHost: revintel\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    whole.terminate();
    const names = await waitFor(async () => {
      const list = await runCli(['keys', 'list', '--org', orgId, '--json'], env, { cwd });
      const found = list.json.map((k: { name: string }) => k.name);
      return found.includes('sent-then-gone') && found;
    });
    expect(names.filter((n: string) => n === 'sent-then-gone')).toHaveLength(1);
    expect((await get(`${server.url}/readyz`)).status).toBe(200);
    expect((await get(`${server.url}/api/me`, secret)).status).toBe(200);
  });

  test('METRICS_PORT: Prometheus metrics on a local port of their own, without a token; not on the API port', async () => {
    const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
    const port = probe.port;
    probe.stop(true);
    const metricsServer = track(await startServe({ METRICS_PORT: String(port) }, { cwd: newDir() }));
    expect((await get(`${metricsServer.url}/healthz`)).status).toBe(200);
    const scraped = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(scraped.status).toBe(200);
    const text = await scraped.text();
    expect(text).toContain('revintel_http_requests_total{route="/healthz",method="GET",status="200"} 1');
    expect(text).toContain('revintel_database_up{kind="embedded"} 1');
    expect((await fetch(`http://127.0.0.1:${port}/anything`)).status).toBe(404);
    expect((await get(`${metricsServer.url}/metrics`)).status).toBe(404); // no METRICS_TOKEN
  });

  test('a second serve on the same DATA_DIR exits at once, naming the directory and the holder', async () => {
    const second = await runCli(['serve'], { PORT: '0' }, { cwd });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(join(cwd, 'data'));
    expect(second.stderr).toContain(`process ${server.proc.pid}`);
  });

  test('a port in use is an error, not a silently shared socket', async () => {
    const other = await runCli(['serve'], { PORT: String(server.port), HOST: '127.0.0.1', DATA_DIR: join(newDir(), 'data') });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`PORT ${server.port}`);
    expect(other.stderr).toContain('in use');
  });

  test('kill -9, restart: everything acknowledged is still there', async () => {
    server.kill('SIGKILL');
    await server.exited;
    server = track(await startServe(env, { cwd }));
    expect((await get(`${server.url}/readyz`)).status).toBe(200);
    const me = await get(`${server.url}/api/me`, secret);
    expect(me.status).toBe(200);
    const list = await runCli(['keys', 'list', '--org', orgId, '--json'], env, { cwd });
    expect(list.json.length).toBeGreaterThanOrEqual(3);
  });

  test('SIGTERM: a clean exit 0, DATA_DIR released, everything kept (in-flight requests: test/server.test.ts)', async () => {
    // requests keep arriving until the signal
    const load = Promise.all(
      Array.from({ length: 50 }, () =>
        get(`${server.url}/api/me`, secret).then(
          (r) => r.status,
          () => 0,
        ),
      ),
    );
    server.kill('SIGTERM');
    const statuses = await load;
    expect(statuses.every((status) => status === 200 || status === 0)).toBe(true); // answered in full, or refused at connect
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
    expect(readLockHolder(join(cwd, 'data'))).toBeNull();
    const list = await runCli(['keys', 'list', '--org', orgId, '--json'], env, { cwd });
    expect(list.code).toBe(0);
    expect(list.json.map((k: { name: string }) => k.name)).toContain('ci');
  });
});

describe('the binary refuses bad configuration, naming the variable', () => {
  test.each([
    [{ PORT: 'abc' }, 'PORT must be an integer'],
    [{ DATABASE_URL: 'mysql://localhost/db' }, 'DATABASE_URL must be a URL starting with postgres: or postgresql:'],
    [{ RATE_LIMIT_STORE: 'redis' }, 'RATE_LIMIT_STORE is redis but REDIS_URL is not set'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [{ REUSE_PORT: 'true' }, 'REUSE_PORT needs DATABASE_URL'],
  ])('%o', async (env, message) => {
    const result = await runCli(['serve'], { DATA_DIR: join(newDir(), 'data'), ...env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  test('flags win over the environment and are validated the same way', async () => {
    const result = await runCli(['serve', '--port', '99999'], { PORT: '3000', DATA_DIR: join(newDir(), 'data') });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PORT must be an integer between 0 and 65535, got "99999"');
  });

  test('every command has --help', async () => {
    for (const command of [['serve'], ['migrate'], ['orgs'], ['keys'], ['version']]) {
      const result = await runCli([...command, '--help'], {});
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Usage: revintel');
    }
    const version = await runCli(['version', '--json'], {});
    expect(version.json).toMatchObject({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });
});
