// On PostgreSQL the main worker thread runs only while there is work: an idle server keeps its
// instance's heartbeat and runs the upkeep jobs (schedules, lease recovery) on the main thread, and
// a look starts the thread for work queued by another process. On the embedded database the thread
// always runs; the schedules and lease recovery behave the same on both.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import {
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  testConfig,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../helpers/harness.ts';
import { makeConnector, TEST_SECRET_KEY } from '../helpers/tickets.ts';
import { instances } from '../../src/db/schema/index.ts';
import { queryText } from '../../src/db/client.ts';
import { startSupervisor, type Supervisor } from '../../src/jobs/supervisor.ts';
import { createLogger } from '../../src/lib/log.ts';
import { newId } from '../../src/lib/ids.ts';
import { enqueueJob, showJob } from '../../src/queue/job-queue.ts';
import { executeActionJob } from '../../src/modules/agent-actions/execute-job.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

const WORKER_URL = new URL('../../src/jobs/worker.ts', import.meta.url);

async function until<T>(probe: () => Promise<T | null | undefined | false> | T, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as T;
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await Bun.sleep(25);
  }
}

const start = (database: TestDatabase, backend: string, instanceId: string): Supervisor =>
  startSupervisor({
    settings: DEFAULT_SETTINGS,
    workerUrl: WORKER_URL,
    database,
    databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
    instance: { id: instanceId, hostname: 'test-host', pid: process.pid, version: 'test', startedAt: new Date() },
    log: createLogger('silent'),
    logLevel: 'silent',
    heartbeatMs: 100,
    lookMs: 200,
    mainIdleMs: 500,
  });

for (const backend of BACKENDS) {
  describe(`upkeep and lease recovery (${backend})`, () => {
    let database: TestDatabase;
    let supervisor: Supervisor;
    let jobId: string;
    const deadInstance = newId('ins');

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      // A job held by an instance that has stopped (its lease not yet run out), and the lease
      // recovery due now: the first firing takes the job back.
      const now = new Date();
      await database.db
        .insert(instances)
        .values({ id: deadInstance, hostname: 'gone', pid: 1, version: 'test', startedAt: now, workerHeartbeatAt: now, stoppedAt: now });
      jobId = (await enqueueJob(database.db, executeActionJob, { actionId: newId('act') })).id;
      await queryText(
        database.db,
        `update jobs set state = 'running', lease_owner = $2, lease_until = now() + interval '10 minutes', attempts = 1 where id = $1`,
        [jobId, deadInstance],
      );
      await queryText(database.db, `update job_schedules set next_run_at = now() where kind = 'jobs.recover-leases'`, []);
      supervisor = start(database, backend, newId('ins'));
      await supervisor.ready;
    });
    afterAll(async () => {
      await supervisor.stop();
      await database.dispose();
    });

    test("the schedules fire and a stopped instance's job is taken back and run again", async () => {
      // Claimed again (a second attempt) only once taken back from the instance that held it.
      const job = await until(async () => {
        const row = await showJob(database.db, jobId);
        return row && row.attempts >= 2 && row;
      });
      expect(job.lease_owner).not.toBe(deadInstance);
      // (Embedded, the start took it back: the process is the database's only owner.)
      await until(
        async () =>
          (
            await queryText(
              database.db,
              `select 1 from jobs where kind = 'jobs.recover-leases' and state = 'done' and finished_at > now() - interval '1 minute'`,
              [],
            )
          ).length > 0,
      );
    });
  });
}

describe.skipIf(!TEST_DATABASE_URL)('the main worker thread on demand (postgres)', () => {
  let database: TestDatabase;
  let supervisor: Supervisor;
  const instanceId = newId('ins');

  beforeAll(async () => {
    database = await openTestDatabase('postgres');
    supervisor = start(database, 'postgres', instanceId);
    await supervisor.ready;
  });
  afterAll(async () => {
    await supervisor.stop();
    await database.dispose();
  });

  const heartbeat = async () =>
    (await database.db.select().from(instances).where(eq(instances.id, instanceId)))[0]!.workerHeartbeatAt.getTime();

  test('an idle server runs no worker thread, and keeps its heartbeat and readiness', async () => {
    await until(() => !supervisor.mainRunning());
    const first = await heartbeat();
    await until(async () => (await heartbeat()) > first);
    expect(supervisor.mainRunning()).toBe(false);
    expect(supervisor.isAlive()).toBe(true);
  });

  test('a ticket event stored by another process, with nobody woken, starts the thread; it is processed and the thread stops', async () => {
    await until(() => !supervisor.mainRunning());
    const { org } = await createOrgWithKey(database);
    const connector = await makeConnector(database, org.id);
    // Another process's server: it stores the event and wakes its own worker, not this one.
    const app = buildApp(database, { config: testConfig({ secretKey: TEST_SECRET_KEY }) }).app;
    const res = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
      rawBody: JSON.stringify({ ticket: { id: 'D-1', subject: 'Hello' } }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    await until(async () => {
      const [row] = await queryText<{ status: string }>(database.db, `select status from ticket_events where connector_id = $1`, [
        connector.id,
      ]);
      return row?.status === 'done';
    });
    await until(() => !supervisor.mainRunning());
    expect(supervisor.restarts()).toBe(0);
  });

  test('a job queued here starts the thread at once', async () => {
    await until(() => !supervisor.mainRunning());
    const { id } = await enqueueJob(database.db, executeActionJob, { actionId: newId('act') });
    supervisor.wakeJobs();
    expect(supervisor.mainRunning()).toBe(true);
    await until(async () => (await showJob(database.db, id))?.attempts === 1);
  });
});
