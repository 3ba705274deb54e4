// The worker thread reaches the database in both modes: on PostgreSQL with its own pool, on the
// embedded database through units of work run by the main thread (which owns PGlite). It registers
// the instance (a write), then beats (a write that reads its row back); a dead worker is replaced.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { startTestWorker } from '../helpers/jobs.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { instances } from '../../src/db/schema/index.ts';
import { startSupervisor, type Supervisor } from '../../src/jobs/supervisor.ts';
import { createLogger } from '../../src/lib/log.ts';
import { newId } from '../../src/lib/ids.ts';
import { queryText } from '../../src/db/client.ts';
import { enqueueJob, showJob } from '../../src/queue/job-queue.ts';
import { JOB_KINDS } from '../../src/jobs/kind-registry.ts';
import { idempotencyPurge } from '../../src/modules/idempotency/jobs/purge.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

async function until<T>(probe: () => Promise<T | null | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await Bun.sleep(25);
  }
}

for (const backend of BACKENDS) {
  describe(`worker thread (${backend})`, () => {
    let database: TestDatabase;
    let supervisor: Supervisor;
    const instanceId = newId('ins');

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      supervisor = startTestWorker(database, backend, { instanceId, heartbeatMs: 100 });
    });
    afterAll(async () => {
      await supervisor.stop();
      await database.dispose();
    });

    test('registers the instance and keeps its heartbeat fresh in the database', async () => {
      await supervisor.ready;
      const row = await until(async () => (await database.db.select().from(instances).where(eq(instances.id, instanceId)))[0]);
      expect(row).toMatchObject({ hostname: 'test-host', pid: process.pid, version: 'test', stoppedAt: null });
      const firstBeat = row.workerHeartbeatAt.getTime();
      await until(async () => {
        const [later] = await database.db.select().from(instances).where(eq(instances.id, instanceId));
        return later!.workerHeartbeatAt.getTime() > firstBeat;
      });
      expect(supervisor.isAlive()).toBe(true);
    });

    test('the main thread keeps serving while the worker uses the database', async () => {
      const before = supervisor.lastHeartbeatAt()!;
      for (let i = 0; i < 20; i++) await database.db.select().from(instances).limit(1);
      await until(async () => supervisor.lastHeartbeatAt()! > before);
    });

    test("the worker runs the job queue: this build's schedules are registered, and a job enqueued and woken runs", async () => {
      const kinds = await until(async () => {
        const rows = await queryText<{ kind: string }>(
          database.db,
          `select kind from job_schedules where kind = any($1::text[]) order by kind`,
          [JOB_KINDS.map((k) => k.kind)],
        );
        return rows.length === 11 && rows.map((r) => r.kind);
      });
      expect(kinds).toEqual([
        'actions.expire',
        'actions.renewals-due',
        'actions.wake',
        'cfo.forecast-features-daily',
        'cfo.month-sums-daily',
        'cfo.sweep-marks',
        'idempotency.purge',
        'jobs.purge-finished',
        'jobs.recover-leases',
        'predictions.nightly',
        'predictions.sweep-stale',
      ]);
      const { id } = await enqueueJob(database.db, idempotencyPurge, {}, { priority: 10 });
      supervisor.wakeJobs();
      const done = await until(async () => {
        const job = await showJob(database.db, id);
        return job?.state === 'done' && job;
      }, 5_000);
      expect(done.result).toEqual({ deleted: expect.any(Number), batches: expect.any(Number) });
    });

    test('stopping lets the worker mark the instance stopped', async () => {
      await supervisor.stop();
      const [row] = await database.db.select().from(instances).where(eq(instances.id, instanceId));
      expect(row!.stoppedAt).toBeInstanceOf(Date);
    });
  });
}

describe('worker supervision', () => {
  test('a worker thread that dies is replaced', async () => {
    const database = await openTestDatabase('embedded');
    const supervisor = startSupervisor({
      settings: DEFAULT_SETTINGS,
      workerUrl: new URL('../helpers/crashing-worker.ts', import.meta.url),
      database,
      databaseUrl: null,
      instance: { id: newId('ins'), hostname: 'test-host', pid: process.pid, version: 'test', startedAt: new Date() },
      log: createLogger('silent'),
      logLevel: 'silent',
      heartbeatMs: 100,
    });
    try {
      await supervisor.ready;
      // each replacement starts, announces itself, and dies again: the count keeps rising
      await until(async () => supervisor.restarts() >= 2, 15_000);
    } finally {
      await supervisor.stop(1_000);
      await database.dispose();
    }
  });
});
