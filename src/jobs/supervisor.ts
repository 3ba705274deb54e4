// Keeps this instance's row (registration and heartbeat), starts the worker threads — `main`
// (tickets, jobs) and, while fits are due, `fitting` (the jobs that fit models) — answers their
// units of work when the main thread owns the database (embedded mode), watches their beats, and
// replaces a thread that dies. On PostgreSQL the main thread runs the upkeep jobs itself and the
// `main` worker thread runs only while there is other work. Stopping lets the current jobs finish.
import { answerUnit, localRunner, type UnitRunner } from '../db/units-of-work.ts';
import { queryText, type Database } from '../db/client.ts';
import type { BackgroundTurns } from '../db/turns.ts';
import type { Logger } from '../lib/log.ts';
import type { LogLevel } from '../config.ts';
import { unhandled, type FromWorker, type ToWorker, type WorkerRole } from './protocol.ts';
import { INGEST_PRIORITY_ABOVE } from '../modules/tickets/queue/loop.ts';
import { FITTING_JOB_KINDS, ON_DEMAND_JOB_KINDS, UPKEEP_JOB_KINDS } from './kind-registry.ts';
import { workerUnits, type InstanceInfo } from './worker-units.ts';
import { runJobLoop } from './job-loop.ts';
import { createWaker } from '../lib/waker.ts';
import type { Settings } from '../settings.ts';

export interface Supervisor {
  /** Resolves once the instance is registered and, on the embedded database, the main worker thread
   * is up (on PostgreSQL it starts when there is work). */
  ready: Promise<void>;
  /** The instance's heartbeat is fresh, and so is the main worker thread's if it runs. */
  isAlive(): boolean;
  lastHeartbeatAt(): number | null;
  restarts(): number;
  /** The fitting thread is running (it runs only while fits are due). */
  fittingRunning(): boolean;
  /** The main worker thread is running (always on the embedded database; on PostgreSQL only while
   * there is work). */
  mainRunning(): boolean;
  /** `events` new ticket events are waiting: the worker looks now rather than at its next poll. */
  wake(events?: number): void;
  /** Jobs were enqueued (and committed): the job loop looks now. */
  wakeJobs(): void;
  stop(timeoutMs?: number): Promise<void>;
}

export interface SupervisorOptions {
  workerUrl: URL | string;
  /** The first main thread, already started from `workerUrl`; a replacement is started anew. */
  firstWorker?: Worker;
  database: Database;
  databaseUrl: string | null;
  instance: InstanceInfo;
  log: Logger;
  logLevel: LogLevel;
  /** The threads' settings (sent in their init), and those of the units answered here. */
  settings: Settings;
  heartbeatMs?: number;
  startTimeoutMs?: number;
  /** Embedded mode: the workers' units take turns with requests (db/turns.ts). */
  turns?: BackgroundTurns;
  /** How often to look for work a stopped thread should start for (default: 5 s on PostgreSQL — the
   * main thread's work and fits; a minute on the embedded database — fits only); how long the
   * fitting thread may run with no fit due or running before it is stopped (default 60 s), and the
   * main one on PostgreSQL with no event or job due or running (default 30 s). */
  lookMs?: number;
  fittingIdleMs?: number;
  mainIdleMs?: number;
}

/** The supervisor hears a beat from the main worker thread every `heartbeatMs` (readiness) but
 * writes the instance's row every third one: the row is read only to take back the leases of an
 * instance silent for 15 s, so one write in 6 s is enough (on the embedded database each is a
 * transaction on the thread that answers requests). */
const BEATS_PER_WRITE = 3;

/** Fits this instance should run now: queued and due, or running under its lease. On PostgreSQL
 * they may have been queued by another process (the CLI, another server, the nightly schedule). */
const FITS_DUE = `select exists (
  select 1 from jobs where kind = any($1::text[]) and ((state = 'queued' and run_at <= now()) or (state = 'running' and lease_owner = $2))
) as due`;
const FITTING_KINDS = FITTING_JOB_KINDS.map((kind) => kind.kind);

/** PostgreSQL: the fits as above, and whether the main worker thread has work — a ticket event due
 * or held by a worker that is gone (or by this instance), a job of its kinds due or running here.
 * The same tests as its claims (modules/tickets/queue/service.ts, queue/job-queue.ts), one index
 * probe each. */
const WORK_DUE = `select
  exists (
    select 1 from jobs where kind = any($1::text[]) and ((state = 'queued' and run_at <= now()) or (state = 'running' and lease_owner = $2))
  ) as due,
  exists (select 1 from ticket_events where status = 'pending' and run_after <= now())
  or exists (
    select 1 from ticket_events where status = 'processing' and (lease_owner = $2 or lease_until < now() or lease_owner in (
      select i.id from instances i where i.stopped_at is not null or i.worker_heartbeat_at < now() - interval '15 seconds'))
  )
  or exists (
    select 1 from jobs where kind = any($3::text[]) and ((state = 'queued' and run_at <= now()) or (state = 'running' and lease_owner = $2))
  ) as main_due`;
const ON_DEMAND_KINDS = ON_DEMAND_JOB_KINDS.map((kind) => kind.kind);

const post = (target: Worker, message: ToWorker) => target.postMessage(message);

export function startSupervisor(options: SupervisorOptions): Supervisor {
  const heartbeatMs = options.heartbeatMs ?? 2_000;
  const { db } = options.database;
  const instanceId = options.instance.id;
  // PostgreSQL: the main worker thread runs only while there is work (see ON_DEMAND_JOB_KINDS).
  const onDemand = options.database.kind === 'postgres';
  const threads: Record<WorkerRole, Thread> = { main: newThread('main'), fitting: newThread('fitting') };
  /** The supervisor's own beat (the instance's row written, or not due), and the main thread's. */
  let ownBeat: number | null = null;
  let workerBeat: number | null = null;
  let restartCount = 0;
  let stopping = false;
  let wakePending = false;
  // How fast events arrive, over the last second (four quarter-second counts): above
  // INGEST_PRIORITY_ABOVE the worker is told to defer its work (modules/tickets/queue/loop.ts), and
  // told again when the burst is over. A whole second, not a quarter: after a stall of a few hundred
  // ms the answers held up commit together, and a steady 1,000 a second must not look like a burst.
  let ingested = 0;
  const lastQuarters = [0, 0, 0, 0];
  let ingestBusy = false;
  // The count runs only while events arrive: an idle server has no timer firing four times a second.
  let ingestWatch: Timer | null = null;
  const watchIngest = () => {
    ingestWatch ??= setInterval(() => {
      lastQuarters.shift();
      lastQuarters.push(ingested);
      ingested = 0;
      const total = lastQuarters.reduce((sum, n) => sum + n, 0);
      const busy = total > INGEST_PRIORITY_ABOVE;
      if (busy !== ingestBusy && threads.main.worker) {
        ingestBusy = busy;
        post(threads.main.worker, { type: 'ingest', busy });
      }
      if (total === 0 && !ingestBusy) {
        clearInterval(ingestWatch!);
        ingestWatch = null;
      }
    }, 250);
    ingestWatch.unref?.();
  };
  let markReady!: () => void;
  let failStart!: (error: Error) => void;
  let started = false;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = () => {
      started = true;
      resolve();
    };
    failStart = reject;
  });
  // A worker that cannot start fails the start-up instead of hanging it.
  const startDeadline = setTimeout(
    () => failStart(new Error('the worker thread did not start within 30 s')),
    options.startTimeoutMs ?? 30_000,
  );
  ready.then(
    () => clearTimeout(startDeadline),
    () => clearTimeout(startDeadline),
  );

  // The instance's heartbeat, written here whether or not a worker thread runs: on PostgreSQL the
  // upkeep jobs below hold leases in its name.
  let beats = 0;
  let beating = false;
  const beat = async () => {
    if (beating || stopping) return;
    beating = true;
    try {
      if (++beats % BEATS_PER_WRITE === 0) await workerUnits['instances.heartbeat'](db, { id: instanceId });
      ownBeat = Date.now();
    } catch (error) {
      options.log.warn('heartbeat failed', { error: String(error) });
    } finally {
      beating = false;
    }
  };
  let beatTimer: Timer | null = null;

  // PostgreSQL: the upkeep kinds (schedules every 15 s and more) run here, so that an idle server
  // needs no worker thread: its heap and code cost ~8 MiB of RSS (measured: 81 -> 73 MiB).
  const upkeepWaker = createWaker();
  let upkeep: Promise<void> | null = null;
  const startUpkeep = () => {
    upkeep = runJobLoop({
      units: localRunner(db, workerUnits, options.settings),
      kinds: UPKEEP_JOB_KINDS,
      settings: options.settings,
      owner: instanceId,
      log: options.log,
      isStopping: () => stopping,
      idle: upkeepWaker.idle,
      wake: upkeepWaker.wake,
      // Its units take connections of the requests' pool: two at a time at most.
      concurrency: 2,
    }).catch((error) => options.log.error('upkeep job loop failed', { error: String(error) }));
  };

  // The fitting thread runs only while there are fits to run: idle, its heap and code cost ~14 MB
  // of the process's RSS (measured on PostgreSQL: 94 -> 80 MB); on PostgreSQL so does the main one.
  // A look (every `lookMs`, and at once when this process queues work) starts a stopped thread
  // whose work is due; a thread is stopped, the work in hand finished, once looks have found none
  // for `fittingIdleMs` / `mainIdleMs`.
  const lookMs = options.lookMs ?? (onDemand ? 5_000 : 60_000);
  const idleMs: Record<WorkerRole, number> = { fitting: options.fittingIdleMs ?? 60_000, main: options.mainIdleMs ?? 30_000 };
  const lastSeenAt: Record<WorkerRole, number> = { fitting: 0, main: 0 };
  let lookTimer: Timer | null = null;
  let looking = false;
  const found = (thread: Thread, due: boolean) => {
    if (due) {
      lastSeenAt[thread.role] = Date.now();
      if (!thread.worker && !thread.restartPending && !stopping) spawn(thread);
    } else if (thread.worker && !thread.retiring && Date.now() - lastSeenAt[thread.role] > idleMs[thread.role]) {
      thread.retiring = true;
      post(thread.worker, { type: 'stop' });
    }
  };
  const look = async () => {
    if (looking || stopping || !started) return;
    looking = true;
    try {
      if (onDemand) {
        const [row] = await queryText<{ due: boolean; main_due: boolean }>(db, WORK_DUE, [FITTING_KINDS, instanceId, ON_DEMAND_KINDS]);
        found(threads.fitting, Boolean(row?.due));
        found(threads.main, Boolean(row?.main_due));
      } else {
        const [row] = await queryText<{ due: boolean }>(db, FITS_DUE, [FITTING_KINDS, instanceId]);
        found(threads.fitting, Boolean(row?.due));
      }
    } catch (error) {
      options.log.warn('could not look for due work', { error: String(error) });
    } finally {
      looking = false;
    }
  };
  const startLooking = () => {
    lookTimer ??= setInterval(look, lookMs);
    lookTimer.unref?.();
    void look();
  };
  /** PostgreSQL: the main worker thread, started if it is not running (work was queued here). */
  const ensureMain = (): Worker | null => {
    const main = threads.main;
    if (onDemand && started && !stopping && !main.worker && !main.restartPending) {
      lastSeenAt.main = Date.now();
      spawn(main);
    }
    return main.worker;
  };

  // Embedded mode: the workers' units run here, on the one owner of the database.
  // Each thread is a source of its own, taking turns with the other and the CLI (db/turns.ts).
  const localUnits = options.database.kind === 'embedded' ? localRunner(db, workerUnits, options.settings) : null;
  const source = () => (localUnits && options.turns ? options.turns.inTurn(localUnits) : localUnits);
  const ownerUnits: Record<WorkerRole, UnitRunner<typeof workerUnits> | null> = { main: source(), fitting: source() };

  const spawn = (thread: Thread) => {
    thread.spawnedAt = Date.now();
    thread.restartPending = false;
    const current =
      thread.role === 'main' && thread.spawns === 0 && options.firstWorker ? options.firstWorker : new Worker(options.workerUrl);
    thread.worker = current;
    if (thread.role === 'main') workerBeat = null;
    current.addEventListener('message', (event: MessageEvent<FromWorker>) => {
      const message = event.data;
      switch (message.type) {
        case 'unit': {
          const units = ownerUnits[thread.role];
          if (units) answerUnit(units, message, (reply) => post(current, reply));
          return;
        }
        case 'ready':
          if (thread.role !== 'main') return;
          workerBeat = Date.now();
          if (started) return;
          markReady();
          // Fits are looked for once the main thread has taken back what an earlier run held.
          startLooking();
          return;
        case 'heartbeat':
          if (thread.role === 'main') workerBeat = Date.now();
          return;
        case 'failed':
          options.log.error('worker failed', { role: thread.role, error: message.error });
          if (!started && thread.role === 'main') {
            stopping = true; // nothing to restart: the start-up fails
            failStart(new Error(`the worker thread could not start: ${message.error}`));
          }
          current.terminate();
          return;
        case 'stopped':
          thread.stopped?.();
          current.terminate();
          return;
        default:
          unhandled(message);
      }
    });
    current.addEventListener('error', (event) => {
      options.log.error('worker error', { role: thread.role, error: (event as ErrorEvent).message });
    });
    current.addEventListener('close', () => {
      if (thread.worker !== current) return;
      thread.worker = null;
      if (stopping) return thread.stopped?.();
      if (thread.retiring) {
        thread.retiring = false;
        // Work queued while it was stopping found a thread that no longer listened.
        void look();
        return;
      }
      restartCount += 1;
      thread.consecutiveDeaths = Date.now() - thread.spawnedAt > 60_000 ? 1 : thread.consecutiveDeaths + 1;
      const delay = Math.min(30_000, 250 * 2 ** Math.min(thread.consecutiveDeaths, 7));
      options.log.warn('worker exited; restarting', { role: thread.role, restarts: restartCount, delay_ms: delay });
      thread.restartPending = true;
      setTimeout(() => !stopping && !thread.worker && spawn(thread), delay);
    });
    post(current, {
      type: 'init',
      role: thread.role,
      databaseUrl: options.databaseUrl,
      instance: options.instance,
      heartbeatMs,
      logLevel: options.logLevel,
      firstStart: thread.spawns++ === 0,
      settings: options.settings,
      upkeep: !onDemand,
    });
    // A worker started during a burst (a restart) defers like the one it replaces.
    if (ingestBusy && thread.role === 'main') post(current, { type: 'ingest', busy: true });
  };

  // The instance first: on PostgreSQL the supervisor is then ready (the main worker thread starts
  // when a look or a wake-up finds work); embedded, once the main worker thread is.
  (async () => {
    await workerUnits['instances.register'](db, options.instance);
    ownBeat = Date.now();
    beatTimer = setInterval(beat, heartbeatMs);
    beatTimer.unref?.();
    if (stopping) return;
    if (onDemand) {
      startUpkeep();
      markReady();
      startLooking();
    } else spawn(threads.main);
  })().catch((error) => {
    stopping = true;
    failStart(new Error(`could not register the instance: ${String((error as Error)?.message ?? error)}`));
  });

  const stopThread = async (thread: Thread, timeoutMs: number) => {
    const current = thread.worker;
    if (!current) return;
    const done = new Promise<void>((resolve) => (thread.stopped = resolve));
    post(current, { type: 'stop' });
    const timer = setTimeout(() => current.terminate(), timeoutMs);
    await done;
    clearTimeout(timer);
  };

  const recent = (at: number | null) => at !== null && Date.now() - at < heartbeatMs * 3 + 1_000;
  let stopped: Promise<void> | null = null;
  return {
    ready,
    // A main worker thread that runs must beat; on PostgreSQL none need run (a crashed one must
    // first be replaced).
    isAlive: () =>
      recent(ownBeat) &&
      (threads.main.worker ? recent(workerBeat) || recent(threads.main.spawnedAt) : onDemand && started && !threads.main.restartPending),
    lastHeartbeatAt: () => (ownBeat === null && workerBeat === null ? null : Math.max(ownBeat ?? 0, workerBeat ?? 0)),
    restarts: () => restartCount,
    fittingRunning: () => threads.fitting.worker !== null,
    mainRunning: () => threads.main.worker !== null,
    wake(events = 0) {
      ingested += events;
      if (events > 0) watchIngest();
      // Commits finishing in the same tick make one message; during a burst the worker defers its
      // work and is told when the burst is over, so there is nobody to wake.
      const main = ensureMain();
      if (wakePending || ingestBusy || !main) return;
      wakePending = true;
      post(main, { type: 'wake', queue: 'tickets' });
      queueMicrotask(() => (wakePending = false));
    },
    wakeJobs() {
      upkeepWaker.wake();
      ensureMain();
      for (const thread of Object.values(threads)) if (thread.worker) post(thread.worker, { type: 'wake', queue: 'jobs' });
      if (!threads.fitting.worker) void look();
    },
    stop(timeoutMs = 10_000) {
      return (stopped ??= (async () => {
        stopping = true;
        if (ingestWatch) clearInterval(ingestWatch);
        if (lookTimer) clearInterval(lookTimer);
        if (beatTimer) clearInterval(beatTimer);
        upkeepWaker.stop();
        // The threads and the upkeep loop finish the work in hand before the instance is marked
        // stopped: another process would then take back a job still running here.
        const deadline = Date.now() + timeoutMs;
        await stopThread(threads.fitting, timeoutMs);
        await stopThread(threads.main, Math.max(1_000, deadline - Date.now()));
        if (upkeep) await Promise.race([upkeep, Bun.sleep(Math.max(1_000, deadline - Date.now()))]);
        if (started) await workerUnits['instances.stop'](db, { id: instanceId }).catch(() => {});
      })());
    },
  };
}

interface Thread {
  role: WorkerRole;
  worker: Worker | null;
  spawnedAt: number;
  /** Deaths in a row without a minute of healthy running between them: what the back-off grows with. */
  consecutiveDeaths: number;
  /** Resolves the stop in progress. */
  stopped: (() => void) | null;
  spawns: number;
  /** Being stopped for want of work: its end is not a death. */
  retiring: boolean;
  /** It died and is started again after a back-off. */
  restartPending: boolean;
}

const newThread = (role: WorkerRole): Thread => ({
  role,
  worker: null,
  spawnedAt: 0,
  consecutiveDeaths: 0,
  stopped: null,
  spawns: 0,
  retiring: false,
  restartPending: false,
});
