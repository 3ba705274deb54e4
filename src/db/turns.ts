// Background units take turns with requests on the embedded database.
//
// PGlite runs every query on the server's main thread, and hands its lock from one waiting
// transaction to the next in a microtask: background units queued behind one another (the worker
// threads' jobs and tickets, the CLI's commands) then ran back to back without a turn of the event
// loop, and no request was answered, not even /healthz, until the last of them ended (p99 2.9 s with
// no unit longer than 0.35 s). So background units run here one at a time, each after a turn of the
// event loop and after the requests in flight have finished — waiting for those at most
// `maxWaitMs`, so that steady traffic slows background work without stopping it.
import type { UnitRegistry, UnitResult, UnitRunner } from './units.ts';

export interface BackgroundTurns {
  /** A request is being answered: background units wait for it (briefly). */
  requestStarted(): void;
  requestEnded(): void;
  /** `runner`, with each unit run in its turn. */
  inTurn<U extends UnitRegistry>(runner: UnitRunner<U>): UnitRunner<U>;
  /** Units waiting for their turn (the one running included). */
  waiting(): number;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createBackgroundTurns(options: { maxWaitMs?: number } = {}): BackgroundTurns {
  const maxWaitMs = options.maxWaitMs ?? 50;
  let requests = 0;
  let quiet: (() => void)[] = [];
  let queued = 0;
  let last: Promise<unknown> = Promise.resolve();

  /** Resolves when no request is in flight, or after `maxWaitMs` (the waiter then leaves `quiet`:
   * under steady traffic requests never all end, and each unit would leave one behind). */
  const requestsDone = () =>
    requests === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(() => {
            quiet = quiet.filter((waiter) => waiter !== wake);
            resolve();
          }, maxWaitMs);
          quiet.push(wake);
        });

  function inTurn<U extends UnitRegistry>(runner: UnitRunner<U>): UnitRunner<U> {
    return {
      run(name, args) {
        queued += 1;
        const turn = last.then(async (): Promise<UnitResult<U, typeof name>> => {
          await nextTurn();
          await requestsDone();
          return runner.run(name, args);
        });
        last = turn.then(
          () => (queued -= 1),
          () => (queued -= 1),
        );
        return turn;
      },
    };
  }

  return {
    requestStarted: () => void (requests += 1),
    requestEnded() {
      requests = Math.max(0, requests - 1);
      if (requests > 0) return;
      const waiters = quiet;
      quiet = [];
      for (const wake of waiters) wake();
    },
    inTurn,
    waiting: () => queued,
  };
}
