// Starts the worker threads — `main` (tickets, jobs, heartbeat) and, while fits are due, `fitting`
// (the jobs that fit models) — answers their units of work when the main thread owns the database
// (embedded mode), watches the heartbeat, and replaces a thread that dies. Stopping lets the
// current jobs finish.
import { answerUnit, localRunner, type UnitRunner } from '../db/units-of-work.ts';
import { queryText, type Database } from '../db/client.ts';
import type { BackgroundTurns } from '../db/turns.ts';
import type { Logger } from '../lib/log.ts';
import type { LogLevel } from '../config.ts';
import { unhandled, type FromWorker, type ToWorker, type WorkerRole } from './protocol.ts';
import { INGEST_PRIORITY_ABOVE } from '../modules/tickets/queue/loop.ts';
import { FITTING_JOB_KINDS } from './kind-registry.ts';
import { workerUnits, type InstanceInfo } from './worker-units.ts';
import type { Settings } from '../settings.ts';

export interface Supervisor {
  /** Resolves once the first worker has registered the instance. */
  ready: Promise<void>;
  /** The last heartbeat is recent enough. */
  isAlive(): boolean;
  lastHeartbeatAt(): number | null;
  restarts(): number;
  /** The fitting thread is running (it runs only while fits are due). */
  fittingRunning(): boolean;
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
  /** How often to look for due fits while the fitting thread is not running (default 15 s, a minute
   * on the embedded database), and
   * how long it may run with none due or running before it is stopped (default 60 s). */
  fitLookMs?: number;
  fittingIdleMs?: number;
}

/** Fits this instance should run now: queued and due, or running under its lease. On PostgreSQL
 * they may have been queued by another process (the CLI, another server, the nightly schedule). */
const FITS_DUE = `select exists (
  select 1 from jobs where kind = any($1::text[]) and ((state = 'queued' and run_at <= now()) or (state = 'running' and lease_owner = $2))
) as due`;
const FITTING_KINDS = FITTING_JOB_KINDS.map((kind) => kind.kind);

const post = (target: Worker, message: ToWorker) => target.postMessage(message);

export function startSupervisor(options: SupervisorOptions): Supervisor {
  const heartbeatMs = options.heartbeatMs ?? 2_000;
  const threads: Record<WorkerRole, Thread> = { main: newThread('main'), fitting: newThread('fitting') };
  let lastBeat: number | null = null;
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
  let markReady: () => void;
  let failStart: (error: Error) => void;
  let started = false;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = () => {
      started = true;
      resolve();
    };
    failStart = reject;
  });
  // A worker that cannot register the instance fails the start-up instead of hanging it.
  const startDeadline = setTimeout(
    () => failStart(new Error('the worker thread did not start within 30 s')),
    options.startTimeoutMs ?? 30_000,
  );
  ready.then(
    () => clearTimeout(startDeadline),
    () => clearTimeout(startDeadline),
  );
  // The fitting thread runs only while there are fits to run: idle, its heap and code cost ~14 MB
  // of the process's RSS (measured on PostgreSQL: 94 -> 80 MB). Started when a look finds a fit
  // due (every `fitLookMs`, and at once when this process queues jobs); stopped, the work in hand
  // finished, after `fittingIdleMs` in which no look found one.
  // Embedded, every fit is queued in this process (and an API or CLI request wakes the look at once):
  // the look is left only the nightly retrains and the retries, which can wait a minute.
  const fitLookMs = options.fitLookMs ?? (options.database.kind === 'embedded' ? 60_000 : 15_000);
  const fittingIdleMs = options.fittingIdleMs ?? 60_000;
  let fitLook: Timer | null = null;
  let looking = false;
  let lastFitSeenAt = 0;
  const lookForFits = async () => {
    if (looking || stopping || !started) return;
    looking = true;
    try {
      const [row] = await queryText<{ due: boolean }>(options.database.db, FITS_DUE, [FITTING_KINDS, options.instance.id]);
      const fitting = threads.fitting;
      if (row?.due) {
        lastFitSeenAt = Date.now();
        if (!fitting.worker && !stopping) spawn(fitting);
      } else if (fitting.worker && !fitting.retiring && Date.now() - lastFitSeenAt > fittingIdleMs) {
        fitting.retiring = true;
        post(fitting.worker, { type: 'stop' });
      }
    } catch (error) {
      options.log.warn('could not look for due fits', { error: String(error) });
    } finally {
      looking = false;
    }
  };
  const startLookingForFits = () => {
    fitLook ??= setInterval(lookForFits, fitLookMs);
    fitLook.unref?.();
    void lookForFits();
  };

  // Embedded mode: the workers' units run here, on the one owner of the database.
  // Each thread is a source of its own, taking turns with the other and the CLI (db/turns.ts).
  const localUnits = options.database.kind === 'embedded' ? localRunner(options.database.db, workerUnits, options.settings) : null;
  const source = () => (localUnits && options.turns ? options.turns.inTurn(localUnits) : localUnits);
  const ownerUnits: Record<WorkerRole, UnitRunner<typeof workerUnits> | null> = { main: source(), fitting: source() };

  const spawn = (thread: Thread) => {
    thread.spawnedAt = Date.now();
    const current =
      thread.role === 'main' && thread.spawns === 0 && options.firstWorker ? options.firstWorker : new Worker(options.workerUrl);
    thread.worker = current;
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
          lastBeat = Date.now();
          markReady();
          // Fits are looked for once the main thread has taken back what an earlier run held.
          startLookingForFits();
          return;
        case 'heartbeat':
          lastBeat = Date.now();
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
        return;
      }
      restartCount += 1;
      thread.consecutiveDeaths = Date.now() - thread.spawnedAt > 60_000 ? 1 : thread.consecutiveDeaths + 1;
      const delay = Math.min(30_000, 250 * 2 ** Math.min(thread.consecutiveDeaths, 7));
      options.log.warn('worker exited; restarting', { role: thread.role, restarts: restartCount, delay_ms: delay });
      setTimeout(() => !stopping && spawn(thread), delay);
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
    });
    // A worker started during a burst (a restart) defers like the one it replaces.
    if (ingestBusy && thread.role === 'main') post(current, { type: 'ingest', busy: true });
  };
  spawn(threads.main);

  const stopThread = async (thread: Thread, timeoutMs: number) => {
    const current = thread.worker;
    if (!current) return;
    const done = new Promise<void>((resolve) => (thread.stopped = resolve));
    post(current, { type: 'stop' });
    const timer = setTimeout(() => current.terminate(), timeoutMs);
    await done;
    clearTimeout(timer);
  };

  return {
    ready,
    isAlive: () => lastBeat !== null && Date.now() - lastBeat < heartbeatMs * 3 + 1_000,
    lastHeartbeatAt: () => lastBeat,
    restarts: () => restartCount,
    fittingRunning: () => threads.fitting.worker !== null,
    wake(events = 0) {
      ingested += events;
      if (events > 0) watchIngest();
      // Commits finishing in the same tick make one message; during a burst the worker defers its
      // work and is told when the burst is over, so there is nobody to wake.
      const main = threads.main.worker;
      if (wakePending || ingestBusy || !main) return;
      wakePending = true;
      post(main, { type: 'wake', queue: 'tickets' });
      queueMicrotask(() => (wakePending = false));
    },
    wakeJobs() {
      for (const thread of Object.values(threads)) if (thread.worker) post(thread.worker, { type: 'wake', queue: 'jobs' });
      if (!threads.fitting.worker) void lookForFits();
    },
    async stop(timeoutMs = 10_000) {
      stopping = true;
      if (ingestWatch) clearInterval(ingestWatch);
      if (fitLook) clearInterval(fitLook);
      // The fitting thread first: the main one marks the instance stopped as it ends, and another
      // process would then take back a fit still running here.
      const deadline = Date.now() + timeoutMs;
      await stopThread(threads.fitting, timeoutMs);
      await stopThread(threads.main, Math.max(1_000, deadline - Date.now()));
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
  /** Being stopped for want of work (the fitting thread): its end is not a death. */
  retiring: boolean;
}

const newThread = (role: WorkerRole): Thread => ({
  role,
  worker: null,
  spawnedAt: 0,
  consecutiveDeaths: 0,
  stopped: null,
  spawns: 0,
  retiring: false,
});
