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
