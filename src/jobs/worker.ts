// The worker thread's entry (a second entrypoint of `bun build --compile`), started in two roles.
// `main` runs two loops and beats to the supervisor beside them: the ticket event queue
// (modules/tickets/queue/loop.ts) and the job queue (job-loop.ts). `fitting` runs only the job kinds
// that fit models, one at a time: seconds of CPU that must not hold up the tickets. The instance's
// row (its registration and heartbeat) is the supervisor's, on the main thread.
declare const self: Worker;

import { connectPostgres } from '../db/client.ts';
import { localRunner, messageRunner, type UnitRunner } from '../db/units-of-work.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { messageOf } from '../lib/errors.ts';
import { unhandled, type FromWorker, type ToWorker, type WorkerInit } from './protocol.ts';
import { workerUnits, type WorkerUnits } from './worker-units.ts';
import { DEFER_AT_MOST_MS, runTicketLoop } from '../modules/tickets/queue/loop.ts';
import { runJobLoop } from './job-loop.ts';
import { FITTING_JOB_KINDS, MAIN_JOB_KINDS, ON_DEMAND_JOB_KINDS } from './kind-registry.ts';
import { createWaker, IDLE_POLL_MAX_EMBEDDED_MS } from '../lib/waker.ts';
import { releaseStartupMemory } from '../lib/startup-memory.ts';

const send = (message: FromWorker) => self.postMessage(message);

let stopping = false;
const wakers = { tickets: createWaker(), jobs: createWaker() };
/** The heartbeat's pause: only a stop cuts it short. */
const pauses = createWaker();
/** The ticket loop's deferrals during a burst: cut short by a stop or by the burst's end. */
const deferrals = createWaker();

/** The server is taking webhooks faster than the worker should compete with (supervisor.ts). */
let ingestBusy = false;
let workerLog: Logger | null = null;
/** Set in embedded mode: unit calls go to the main thread, which owns the database. */
let remoteUnits: ReturnType<typeof messageRunner<WorkerUnits>> | null = null;

async function run(init: WorkerInit) {
  const log = createLogger(init.logLevel, { thread: init.role === 'main' ? 'worker' : 'fitting' });
  workerLog = log;
  const database = init.databaseUrl ? connectPostgres(init.databaseUrl, 3) : null;
  let units: UnitRunner<WorkerUnits>;
  if (database) units = localRunner(database.db, workerUnits, init.settings);
  else units = remoteUnits = messageRunner<WorkerUnits>(send);
  const owner = init.instance.id;
  try {
    if (init.role === 'fitting') {
      send({ type: 'ready' });
      await runFittingLoop(init, units, owner, log, !database);
    } else await runMain(init, units, owner, log, Boolean(database));
  } catch (error) {
    send({ type: 'failed', error: messageOf(error) });
    throw error;
  } finally {
    await database?.close();
  }
  send({ type: 'stopped' });
}

async function runMain(init: WorkerInit, units: UnitRunner<WorkerUnits>, owner: string, log: Logger, ownDatabase: boolean) {
  if (!ownDatabase) {
    // The embedded database has one owner: the ticket events held belong to a thread that is gone,
    // and at the process's start so do the jobs (later, the fitting thread's may still be running).
    await units.run('tickets.release-leases', {});
    if (init.firstStart) await units.run('jobs.recover', { now: new Date().toISOString(), all: true });
  }
  send({ type: 'ready' });
  releaseStartupMemory();
  const tickets = runTicketLoop({
    units,
    owner,
    log,
    isStopping: () => stopping,
    idle: wakers.tickets.idle,
    ingestBusy: () => ingestBusy,
    pause: deferrals.idle,
    jobsQueued: wakers.jobs.wake,
    idleMaxMs: ownDatabase ? undefined : IDLE_POLL_MAX_EMBEDDED_MS,
  });
  const jobs = runJobLoop({
    units,
    kinds: init.upkeep ? MAIN_JOB_KINDS : ON_DEMAND_JOB_KINDS,
    settings: init.settings,
    owner,
    log,
    isStopping: () => stopping,
    idle: wakers.jobs.idle,
    wake: wakers.jobs.wake,
    idleMaxMs: ownDatabase ? undefined : IDLE_POLL_MAX_EMBEDDED_MS,
  });
  // The supervisor's readiness hears that this thread's event loop still turns.
  while (!stopping) {
    send({ type: 'heartbeat', at: Date.now() });
    await pauses.idle(init.heartbeatMs);
  }
  // The work in hand is finished and recorded before the thread says it has stopped.
  await Promise.all([tickets, jobs]);
}

/** Fits run one at a time under a long lease: a fit holds this thread's event loop for seconds,
 * during which its lease cannot be renewed. A process that dies is found by its heartbeat. On the
 * embedded database every unit runs on the main thread, which also answers the requests: the
 * fitting thread waits as long as each unit took before the next, so a backtest's hundreds of
 * units take at most half of the main thread's time (back to back, they held webhook
 * acknowledgements at a p50 of 0.3–0.8 s at 100 a second). */
function runFittingLoop(init: WorkerInit, units: UnitRunner<WorkerUnits>, owner: string, log: Logger, embedded: boolean) {
  const paced: UnitRunner<WorkerUnits> = embedded
    ? {
        run: (async (name: keyof WorkerUnits & string, args: never) => {
          const started = performance.now();
          try {
            return await units.run(name, args);
          } finally {
            await Bun.sleep(performance.now() - started);
          }
        }) as UnitRunner<WorkerUnits>['run'],
      }
    : units;
  return runJobLoop({
    units: paced,
    kinds: FITTING_JOB_KINDS,
    settings: init.settings,
    owner,
    log,
    isStopping: () => stopping,
    idle: wakers.jobs.idle,
    wake: wakers.jobs.wake,
    concurrency: 1,
    leaseSeconds: 900,
    idleMaxMs: embedded ? IDLE_POLL_MAX_EMBEDDED_MS : undefined,
  });
}

self.addEventListener('message', (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  switch (message.type) {
    case 'init':
      // A failure was reported as `failed`; the supervisor replaces this thread.
      run(message).catch(() => {});
      return;
    case 'unit-reply':
      remoteUnits?.receive(message);
      return;
    case 'wake':
      wakers[message.queue].wake();
      return;
    case 'ingest':
      ingestBusy = message.busy;
      workerLog?.info(
        ingestBusy
          ? `webhooks arriving fast: ticket processing deferred (at most ${DEFER_AT_MOST_MS / 1000} s) so that acknowledging comes first`
          : 'ticket processing back to full speed',
      );
      if (!ingestBusy) deferrals.wake();
      return;
    case 'stop':
      stopping = true;
      for (const waker of [wakers.tickets, wakers.jobs, pauses, deferrals]) waker.stop();
      return;
    default:
      unhandled(message);
  }
});
