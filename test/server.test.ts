// The server in-process (what `revintel serve` runs): graceful shutdown with a request in flight,
// and a start-up that fails cleanly when the worker cannot start.
import { afterAll, describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../src/server.ts';
import { readLockHolder } from '../src/db/data-dir-lock.ts';
import { createLogger } from '../src/lib/log.ts';
import { ok } from '../src/lib/envelope.ts';
import { BACKENDS, TEST_DATABASE_URL, tempDir, testConfig } from './helpers/harness.ts';
import { localRunner } from '../src/db/units-of-work.ts';
import { adminUnits } from '../src/admin/cli-units.ts';
import { DEFAULT_SETTINGS } from '../src/settings.ts';

const WORKER_URL = new URL('../src/jobs/worker.ts', import.meta.url);
const FAILING_WORKER_URL = new URL('./helpers/failing-worker.ts', import.meta.url);

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function configFor(backend: string) {
  const dataDir = join(tempDir(), 'data');
  dirs.push(dataDir);
  return testConfig({
    port: 0,
    host: '127.0.0.1',
    dataDir,
    databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
    shutdownTimeoutMs: 5_000,
  });
}

for (const backend of BACKENDS) {
  describe(`serve in-process (${backend})`, () => {
    test('SIGTERM semantics: the request in flight finishes, then nothing is accepted and the database is closed', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const slow = new Elysia().get('/api/test-fixtures/slow', async () => {
        entered();
        await gate;
        return ok({ finished: true });
      });
      const config = configFor(backend);
      const server = await startServer(config, { workerUrl: WORKER_URL, log: createLogger('silent'), modules: [slow] });
      const admin = localRunner(server.database.db, adminUnits, DEFAULT_SETTINGS);
      const org = await admin.run('orgs.create', { name: `shutdown-${Math.random()}`, plan: 'enterprise', actor: 'test' });
      const { plaintext } = await admin.run('keys.create', { org: org.id, name: 'k', expiresAt: null, actor: 'test' });

      const inflight = fetch(`${server.url.href}api/test-fixtures/slow`, { headers: { authorization: `Bearer ${plaintext}` } });
      await inside;
      const stopped = server.stop(); // what SIGTERM calls
      await Bun.sleep(200);
      release();
      const response = await inflight;
      expect(response.status).toBe(200);
      expect(((await response.json()) as { data: unknown }).data).toEqual({ finished: true });
      await stopped;
      const refused = await fetch(`${server.url.href}healthz`).then(
        () => 'answered',
        () => 'refused',
      );
      expect(refused).toBe('refused');
      if (backend === 'embedded') expect(readLockHolder(config.dataDir)).toBeNull();
    });

    // On PostgreSQL the worker thread starts only when there is work (jobs/supervisor.ts): one that
    // cannot start then is restarted like one that dies, and start-up does not wait for it.
    test.if(backend === 'embedded')('a worker that cannot start fails the start-up with its reason, and releases everything', async () => {
      const config = configFor(backend);
      const error = await startServer(config, { workerUrl: FAILING_WORKER_URL, log: createLogger('silent') }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(String((error as Error)?.message)).toContain('the worker thread could not start: relation "instances" does not exist');
      expect(readLockHolder(config.dataDir)).toBeNull();
    });
  });
}
