// What a refused platform signature (Slack's, Google Chat's token, Meta's) costs its sender: one
// failed authentication from its address, in the same budget a bad API key spends (plugins/gate.ts,
// RATE_LIMIT_ANON_*), and one against the installation the unproven body names (a team, a space,
// a phone number id), counted in this process. Past either budget the refusal is a 429 with
// Retry-After instead of a 401. Only refusals are counted and only refusals are judged: a valid
// signature always passes (the installation's own delivery budget aside), so strangers forging
// deliveries — from anywhere, in anyone's name — never refuse the platform's real ones.
import { AppError } from '../../lib/errors.ts';
import { memoryRateLimiter, rateLimitHeaders, type Decision, type Limits, type RateLimiter } from '../../lib/rate-limiter.ts';
import { failuresOf } from '../../plugins/gate.ts';
import type { RequestState } from '../../plugins/request-state.ts';
import type { Config } from '../../config.ts';

export type RefusedSignatures = (state: RequestState, refusal: AppError, claimed: string | null) => Promise<never>;

export function refusedSignatures(limiter: RateLimiter, config: Pick<Config, 'anonLimitPerMinute' | 'anonLimitPerDay'>): RefusedSignatures {
  const limits: Limits = { perMinute: config.anonLimitPerMinute, perDay: config.anonLimitPerDay };
  // Names in unproven bodies are anyone's to make up: a flood guard in this process, no round trip.
  const claimedLimiter = memoryRateLimiter();
  const consumed = async (counted: Decision | Promise<Decision>) => (counted instanceof Promise ? await counted : counted);

  return async function refuse(state, refusal, claimed) {
    const address = await consumed(limiter.consume(failuresOf(state), limits));
    state.rateLimit = address;
    state.headers = rateLimitHeaders(address);
    const installation =
      claimed && address.allowed ? await consumed(claimedLimiter.consume(`sigfail:${claimed.slice(0, 200)}`, limits)) : null;
    const over = !address.allowed ? address : installation && !installation.allowed ? installation : null;
    if (!over) throw refusal;
    const whose = over === address ? 'from this address' : 'in the name of this installation';
    throw new AppError('rate_limited', `Too many refused signatures ${whose}; retry in ${over.retryAfter} s`, {
      ...refusal.headers,
      'retry-after': String(over.retryAfter),
    });
  };
}
