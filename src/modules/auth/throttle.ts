// How sign-in slows a password guesser without locking the owner out. Two budgets, each a minute
// and a quarter of an hour, counted in the rate-limit store (memory, PostgreSQL or Redis: one rule
// across instances):
// - wrong passwords per (client address, account): the guesser's address is slowed on that account,
//   while the owner, from an address that has not failed, still signs in with the right password;
// - attempts per client address, whatever the account: one address cannot spread its guesses.
// A refusal's Retry-After is at most the rest of the quarter hour, never "until midnight".
//
// The store knows minute and day windows only. The quarter hour's number is part of each subject, so
// the "day" window of a subject that changes every quarter hour counts that quarter hour and no more.
import type { Config } from '../../config.ts';
import { sha256Hex } from '../../lib/digest.ts';
import { AppError } from '../../lib/errors.ts';
import type { Decision, Limits, RateLimiter } from '../../lib/rate-limiter.ts';

const QUARTER_HOUR_MS = 15 * 60_000;

interface SignInThrottle {
  /** Counts an attempt from `address`; a 429 when the address's budget is spent. */
  countAttempt(address: string, now?: number): Promise<void>;
  /** A 429 when `address` has spent its wrong passwords on the account of `email` (counts nothing). */
  checkFailures(address: string, email: string, now?: number): Promise<void>;
  /** Counts a wrong password from `address` on the account of `email`. */
  countFailure(address: string, email: string, now?: number): Promise<void>;
}

/** What a refusal tells the client: the headers are the window in force's, the quarter hour named as such. */
function refusal(decision: Decision, limits: Limits, now: number, whose: string): AppError {
  const quarterSpent = decision.day.remaining === 0;
  const quarterEnds = (Math.floor(now / QUARTER_HOUR_MS) + 1) * QUARTER_HOUR_MS;
  const resetMs = quarterSpent ? quarterEnds : decision.minute.reset * 1000;
  const retryAfter = Math.max(1, Math.ceil((resetMs - now) / 1000));
  const [limit, window] = quarterSpent ? [limits.perDay, '15 minutes'] : [limits.perMinute, 'minute'];
  return new AppError('rate_limited', `Too many sign-in attempts ${whose}: ${limit} per ${window}; retry in ${retryAfter} s`, {
    'retry-after': String(retryAfter),
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': String(Math.ceil(resetMs / 1000)),
  });
}

export function signInThrottle(
  limiter: RateLimiter,
  config: Pick<
    Config,
    'signInLimitPerMinute' | 'signInLimitPer15Minutes' | 'signInAddressLimitPerMinute' | 'signInAddressLimitPer15Minutes'
  >,
): SignInThrottle {
  const failureLimits: Limits = { perMinute: config.signInLimitPerMinute, perDay: config.signInLimitPer15Minutes };
  const addressLimits: Limits = { perMinute: config.signInAddressLimitPerMinute, perDay: config.signInAddressLimitPer15Minutes };
  const quarter = (now: number) => Math.floor(now / QUARTER_HOUR_MS);
  // The account by its e-mail's hash: no e-mail address in the store.
  const failuresSubject = (address: string, email: string, now: number) => `signin:fail:${address}:${sha256Hex(email)}:q${quarter(now)}`;

  return {
    async countAttempt(address, now = Date.now()) {
      const decision = await limiter.consume(`signin:${address}:q${quarter(now)}`, addressLimits, now);
      if (!decision.allowed) throw refusal(decision, addressLimits, now, 'from this address');
    },
    async checkFailures(address, email, now = Date.now()) {
      const decision = await limiter.peek(failuresSubject(address, email, now), failureLimits, now);
      if (decision.minute.remaining === 0 || decision.day.remaining === 0)
        throw refusal(decision, failureLimits, now, 'for this account from this address');
    },
    async countFailure(address, email, now = Date.now()) {
      await limiter.consume(failuresSubject(address, email, now), failureLimits, now);
    },
  };
}
