// Password hashing and verification (argon2id, Bun's defaults: 64 MiB and tens of milliseconds of a
// core each) behind one small gate per process: a few at once and a short queue. Past that a request
// is answered 503 with Retry-After at once, so a flood of unauthenticated sign-ins or link
// acceptances costs a bounded share of the CPU and memory, and an honest sign-in is answered
// quickly (refused or served) instead of waiting out the request timeout behind the flood.
import { AppError } from '../../lib/errors.ts';

interface PasswordHashingLimits {
  /** Hashings or verifications running at once. */
  concurrency: number;
  /** Requests that may wait for a turn; one more is refused at once. */
  queue: number;
}

/** A waiter that has not had its turn by then is refused too: the queue is short, not slow. */
const QUEUE_WAIT_MS = 5_000;
const RETRY_AFTER_SECONDS = 1;

interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Finds whose password this should be and checks it, in one turn of the gate (a request the gate
   * refuses costs no database work either): exactly one verification, against a dummy hash when
   * nothing was found, so that "not found" takes as long as a wrong password. The thing found when
   * the password is its own, else null. */
  check<T>(password: string, find: () => Promise<T | null>, hashOf: (found: T) => string | null): Promise<T | null>;
}

/** Made once per process, outside the gate (it is no one's request). */
let dummyHash: Promise<string> | null = null;
const dummy = () => (dummyHash ??= Bun.password.hash(crypto.randomUUID(), { algorithm: 'argon2id' }));

const busy = () =>
  new AppError('busy', `Too many sign-ins are being checked right now: retry in ${RETRY_AFTER_SECONDS} s`, {
    'retry-after': String(RETRY_AFTER_SECONDS),
  });

export function createPasswordHasher(limits: PasswordHashingLimits): PasswordHasher {
  let running = 0;
  const waiting: { start: () => void; timer: Timer }[] = [];

  /** Resolves when a slot is this caller's; a slot freed is handed to the next waiter directly. */
  function acquire(): Promise<void> {
    if (running < limits.concurrency) {
      running += 1;
      return Promise.resolve();
    }
    if (waiting.length >= limits.queue) return Promise.reject(busy());
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        start: resolve,
        timer: setTimeout(() => {
          waiting.splice(waiting.indexOf(waiter), 1);
          reject(busy());
        }, QUEUE_WAIT_MS),
      };
      waiting.push(waiter);
    });
  }

  function release(): void {
    const next = waiting.shift();
    if (!next) {
      running -= 1;
      return;
    }
    clearTimeout(next.timer);
    next.start();
  }

  async function gated<T>(work: () => Promise<T>): Promise<T> {
    await acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }

  return {
    hash: (password) => gated(() => Bun.password.hash(password, { algorithm: 'argon2id' })),
    check: (password, find, hashOf) =>
      gated(async () => {
        const found = await find();
        const hash = found === null ? null : hashOf(found);
        const matches = await Bun.password.verify(password, hash ?? (await dummy()));
        return matches && hash !== null ? found : null;
      }),
  };
}
