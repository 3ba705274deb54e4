// Background units take turns with requests, and with one another, on the embedded database.
//
// PGlite runs every query on the server's main thread, and hands its lock from one waiting
// transaction to the next in a microtask: background units queued behind one another (the worker
// threads' jobs and tickets, the CLI's commands) then ran back to back without a turn of the event
// loop, and no request was answered, not even /healthz, until the last of them ended (p99 2.9 s with
// no unit longer than 0.35 s). So background units run here one at a time, each after a turn of the
// event loop and after the requests in flight have finished — waiting for those at most
// `maxWaitMs`, so that steady traffic slows background work without stopping it. Each source (a
// worker thread, the CLI's socket) has its own queue and the sources take turns: the job loop keeps
// many units queued, and the CLI, which sends one at a time, imported at 175 rows/s behind them
// instead of 5,000.
import type { UnitRegistry, UnitResult, UnitRunner } from './units-of-work.ts';

export interface BackgroundTurns {
  /** A request is being answered: background units wait for it (briefly). */
  requestStarted(): void;
  requestEnded(): void;
  /** `runner` as one source of units, each run in its turn. */
  inTurn<U extends UnitRegistry>(runner: UnitRunner<U>): UnitRunner<U>;
  /** Units waiting for their turn (the one running included). */
  waiting(): number;
}

type Task = () => Promise<void>;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createBackgroundTurns(options: { maxWaitMs?: number } = {}): BackgroundTurns {
  const maxWaitMs = options.maxWaitMs ?? 50;
  let requests = 0;
  /** Wakes the unit waiting for the requests in flight to end (one at most: units run one at a time). */
  let wakeWaiting: (() => void) | null = null;
  /** One queue per source, in the order the sources take turns. */
  const sources: Task[][] = [];
  let nextSource = 0;
  let queued = 0;
  let pumping = false;

  /** Resolves when no request is in flight, or after `maxWaitMs`. */
  const requestsDone = () =>
    requests === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            wakeWaiting = null;
            resolve();
          }, maxWaitMs);
          wakeWaiting = () => {
            clearTimeout(timer);
            wakeWaiting = null;
            resolve();
          };
        });

  /** The next source's first unit, sources in rotation. */
  function take(): Task | undefined {
    for (let i = 0; i < sources.length; i++) {
      const index = (nextSource + i) % sources.length;
      const task = sources[index]!.shift();
      if (task) {
        nextSource = (index + 1) % sources.length;
        return task;
      }
    }
    return undefined;
  }

  async function pump() {
    if (pumping) return;
    pumping = true;
    try {
      while (queued > 0) {
        await nextTurn();
        await requestsDone();
        const task = take();
        if (task) await task();
      }
    } finally {
      pumping = false;
    }
  }

  function inTurn<U extends UnitRegistry>(runner: UnitRunner<U>): UnitRunner<U> {
    const queue: Task[] = [];
    sources.push(queue);
    return {
      run(name, args) {
        return new Promise<UnitResult<U, typeof name>>((resolve, reject) => {
          queued += 1;
          queue.push(() =>
            runner.run(name, args).then(
              (result) => {
                queued -= 1;
                resolve(result);
              },
              (error) => {
                queued -= 1;
                reject(error);
              },
            ),
          );
          void pump();
        });
      },
    };
  }

  return {
    requestStarted: () => void (requests += 1),
    requestEnded() {
      requests = Math.max(0, requests - 1);
      if (requests === 0) wakeWaiting?.();
    },
    inTurn,
    waiting: () => queued,
  };
}
