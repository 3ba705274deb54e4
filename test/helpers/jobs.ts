// The job queue in tests: a loop run until its work is done, and the real worker thread started
// on a test database.
import { queryText, type Db } from '../../src/db/client.ts';
import type { TSchema } from '@sinclair/typebox';
import { localRunner, type UnitRegistry } from '../../src/db/units-of-work.ts';
import type { HandleKind, JobContext, JobInfo, JobKind } from '../../src/queue/job-kind.ts';
import { runJobLoop } from '../../src/jobs/job-loop.ts';
import { jobUnits } from '../../src/queue/job-units.ts';
import { startSupervisor, type Supervisor } from '../../src/jobs/supervisor.ts';
import { newId } from '../../src/lib/ids.ts';
import { createLogger } from '../../src/lib/log.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src/settings.ts';
import { TEST_DATABASE_URL, type BackendKind, type TestDatabase } from './harness.ts';

const WORKER_URL = new URL('../../src/jobs/worker.ts', import.meta.url);

/** Runs the job loop until none of `kinds` is due or running by the test's clock, with `settings`
 * (default: the defaults). */
export async function drainJobs(
  db: Db,
  kinds: JobKind[],
  options: { owner?: string; clock?: () => number; random?: () => number; concurrency?: number; settings?: Settings } = {},
) {
  const settings = options.settings ?? DEFAULT_SETTINGS;
  let stop = false;
  const clock = options.clock ?? Date.now;
  const busy = async () =>
    (
      await queryText(
        db,
        `select 1 from jobs where kind = any($1::text[]) and ((state = 'queued' and run_at <= $2::timestamptz) or state = 'running') limit 1`,
        [kinds.map((k) => k.kind), new Date(clock()).toISOString()],
      )
    ).length > 0;
  await runJobLoop({
    units: localRunner(db, jobUnits(kinds), settings),
    kinds,
    settings,
    owner: options.owner ?? 'test-worker',
    log: createLogger('silent'),
    isStopping: () => stop,
    // Idle with nothing left to do ends the test's loop; idle with slots full or work due goes round.
    idle: async () => {
      if (await busy()) await Bun.sleep(2);
      else stop = true;
    },
    wake: () => {},
    clock: options.clock,
    random: options.random,
    concurrency: options.concurrency,
  });
}

/** The real worker thread (src/jobs/worker.ts) on `database`, as `serve` starts it. */
export function startTestWorker(
  database: TestDatabase,
  backend: BackendKind,
  options: { instanceId?: string; heartbeatMs: number; settings?: Settings },
): Supervisor {
  return startSupervisor({
    workerUrl: WORKER_URL,
    database,
    databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
    instance: { id: options.instanceId ?? newId('ins'), hostname: 'test-host', pid: process.pid, version: 'test', startedAt: new Date() },
    log: createLogger('silent'),
    logLevel: 'silent',
    settings: options.settings ?? DEFAULT_SETTINGS,
    heartbeatMs: options.heartbeatMs,
  });
}

/** A `handle` kind's work for one job, its units run on `db` (each its own transaction), as the
 * job loop would run it; `failAfter` units, the next one throws (a worker dying mid-way); `seen`
 * hears of each unit run and what it answered. */
export function runHandler<P, R, U extends UnitRegistry>(
  db: Db,
  kind: HandleKind<TSchema, R, U> & { handle(payload: P, ctx: JobContext<U>): Promise<R> },
  payload: P,
  job: Partial<JobInfo> & { orgId: string | null },
  options: { failAfter?: number; seen?: (unit: string, args: unknown, result: unknown) => void; settings?: Settings } = {},
): Promise<R> {
  const settings = options.settings ?? DEFAULT_SETTINGS;
  const runner = localRunner(db, kind.units ?? ({} as U), settings);
  let units = 0;
  return kind.handle(payload, {
    job: { id: newId('job'), kind: kind.kind, attempts: 1, ...job },
    settings,
    run: (unit, args) => {
      if (options.failAfter !== undefined && units++ >= options.failAfter) return Promise.reject(new Error('the worker died'));
      return runner.run(unit, args).then((result) => {
        options.seen?.(unit, args, result);
        return result;
      });
    },
  });
}
