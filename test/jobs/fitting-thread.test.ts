// The fitting thread runs only while fits are due: an idle server does not hold its memory. A fit
// queued here (and woken) or by another process (found by the supervisor's look) starts it; once
// none is due or running it is stopped, and that stop is not counted as a death.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { BACKENDS, openTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/harness.ts';
import { startSupervisor, type Supervisor } from '../../src/jobs/supervisor.ts';
import { createLogger } from '../../src/lib/log.ts';
import { newId } from '../../src/lib/ids.ts';
import { enqueueJob, showJob } from '../../src/queue/job-queue.ts';
import { trainJob } from '../../src/modules/predictions/jobs/train.ts';
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

for (const backend of BACKENDS) {
  describe(`the fitting thread on demand (${backend})`, () => {
    let database: TestDatabase;
    let supervisor: Supervisor;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      supervisor = startSupervisor({
        settings: DEFAULT_SETTINGS,
        workerUrl: WORKER_URL,
        database,
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
        instance: { id: newId('ins'), hostname: 'test-host', pid: process.pid, version: 'test', startedAt: new Date() },
        log: createLogger('silent'),
        logLevel: 'silent',
        heartbeatMs: 100,
        lookMs: 100,
        fittingIdleMs: 300,
      });
      await supervisor.ready;
    });
    afterAll(async () => {
      await supervisor.stop();
      await database.dispose();
    });

    /** A retrain without an organisation: the fitting thread (and only it) runs the kind, and ends it
     * at once as dead, saying why. */
    const fitThatFails = async () => (await enqueueJob(database.db, trainJob, {})).id;
    const deadWithReason = (id: string) =>
      until(async () => {
        const job = await showJob(database.db, id);
        return job?.state === 'dead' && job;
      });

    test('a fit queued and woken here starts the thread, which runs it and stops once idle', async () => {
      const id = await fitThatFails();
      supervisor.wakeJobs();
      const job = await deadWithReason(id);
      expect(job.last_error).toContain('needs an organisation');
      await until(() => !supervisor.fittingRunning());
      expect(supervisor.restarts()).toBe(0);
    });

    test('a fit queued by another process, with nobody woken, is found by the look', async () => {
      await until(() => !supervisor.fittingRunning());
      const id = await fitThatFails();
      expect((await deadWithReason(id)).last_error).toContain('needs an organisation');
      await until(() => !supervisor.fittingRunning());
      expect(supervisor.restarts()).toBe(0);
    });
  });
}
