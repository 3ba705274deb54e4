// Idle until there is work: a loop waits with `idle(ms)`; `wake()` ends the wait at once, and a
// wake-up that comes while the loop is busy (nobody waiting) makes its next idle return at once, so
// work committed just after a claim looked is not left for the next poll. `stop()` ends every wait
// for good.
export interface Waker {
  idle(ms: number): Promise<void>;
  wake(): void;
  stop(): void;
}

export function createWaker(): Waker {
  const sleepers = new Set<() => void>();
  let missedWake = false;
  let stopped = false;
  const wakeAll = () => {
    for (const resolve of sleepers) resolve();
    sleepers.clear();
  };
  return {
    idle(ms) {
      if (stopped || missedWake) {
        missedWake = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          sleepers.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        sleepers.add(done);
      });
    },
    wake() {
      if (sleepers.size === 0) missedWake = true;
      wakeAll();
    },
    stop() {
      stopped = true;
      wakeAll();
    },
  };
}

/** The default longest idle wait of the worker's loops (modules/tickets/queue/loop.ts, jobs/job-loop.ts). */
export const IDLE_POLL_MAX_MS = 5_000;

/** The longest idle wait on the embedded database. This process is its only user (the CLI goes
 * through the admin socket), so every event and job is committed here and wakes the loops, and what
 * comes due later is known: the job loop's claim says when the next queued job is due and its
 * schedules when they fire, the ticket loop's claim when the next retry is. What is left for the
 * poll is a slip in that bookkeeping; each look is a transaction on the thread that answers
 * requests and feeds PGlite's wasm to JavaScriptCore's compiler (most of an idle server's CPU). */
export const IDLE_POLL_MAX_EMBEDDED_MS = 60_000;

/**
 * How long an idle loop waits before it looks again: `baseMs` after a look that found work, doubling
 * with each look that found none, up to `maxMs`. Work queued in this process wakes the loop at once
 * (`Waker.wake`), so the longer waits only delay what nobody announced — a retry coming due, work
 * another process or the CLI queued on PostgreSQL — while an idle server looks a few times a
 * minute instead of every second (on the embedded database each look is a transaction on the
 * thread that answers requests).
 */
export function idleBackoff(baseMs: number, maxMs: number) {
  let next = baseMs;
  return {
    found() {
      next = baseMs;
    },
    /** Nothing found: the wait before the next look. */
    empty(): number {
      const wait = next;
      next = Math.min(Math.max(baseMs, maxMs), next * 2);
      return wait;
    },
  };
}
