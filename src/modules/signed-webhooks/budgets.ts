// The budgets a signed webhook spends, as its route declares them (`counted` in lib/routes.ts):
// a proven delivery spends its sender's — the connector's or the platform installation's — counted
// in this process (a flood guard, not a plan's quota: with N servers a sender may deliver up to N
// times it, and there is no round trip to a shared store on the path every delivery takes).
//
// A refused signature costs its sender one failed authentication from its address, in the same
// budget a bad API key spends (plugins/gate.ts, RATE_LIMIT_ANON_*), and one against the
// installation the unproven body names, counted in this process. Past either budget the refusal is
// a 429 with Retry-After instead of a 401. Only refusals are judged there: a valid signature always
// passes (its sender's own budget aside), so strangers forging deliveries in anyone's name never
// refuse the platform's real ones. A delivery that names no known sender spends its address's
// public budget.
import type { Config } from '../../config.ts';
import { AppError } from '../../lib/errors.ts';
import { type Decision, type Limits, memoryRateLimiter, type RateLimiter, rateLimitHeaders } from '../../lib/rate-limiter.ts';
import type { PlatformRules } from '../../lib/routes.ts';
import { anonSubject, failuresOf } from '../../plugins/gate.ts';
import type { RequestState } from '../../plugins/request-state.ts';

export interface WebhookBudgets {
  /** Counts a proven delivery of `senderId` on the budget `counted` names; throws the 429. */
  spend(state: RequestState, counted: PlatformRules['counted'], senderId: string): Promise<void>;
  /** Counts a delivery that names no sender this server knows on its address; throws the 429. */
  spendAddress(state: RequestState): Promise<void>;
  /** Counts a refused signature and throws what the request ends with: `refusal`, or the 429. */
  refuse(state: RequestState, refusal: AppError, claimed: string | null): Promise<never>;
}

export type BudgetConfig = Pick<Config, 'anonLimitPerMinute' | 'anonLimitPerDay' | 'webhookLimitPerMinute' | 'webhookLimitPerDay'>;

const settled = async (counted: Decision | Promise<Decision>) => (counted instanceof Promise ? await counted : counted);

/** `limiter` is the shared store (addresses); senders and claimed names are counted in this process. */
export function webhookBudgets(limiter: RateLimiter, config: BudgetConfig): WebhookBudgets {
  const anonLimits: Limits = { perMinute: config.anonLimitPerMinute, perDay: config.anonLimitPerDay };
  const senderLimits: Limits = { perMinute: config.webhookLimitPerMinute, perDay: config.webhookLimitPerDay };
  const local = memoryRateLimiter();

  const decide = (state: RequestState, decision: Decision, whose: string) => {
    state.rateLimit = decision;
    state.headers = rateLimitHeaders(decision);
    if (!decision.allowed)
      throw new AppError('rate_limited', `Rate limit exceeded for this ${whose}; retry in ${decision.retryAfter} s`, {
        'retry-after': String(decision.retryAfter),
      });
  };

  return {
    async spend(state, counted, senderId) {
      // The sender's budget is in-process: no promise to wait for on the common path.
      const counting = local.consume(`${counted}:${senderId}`, senderLimits);
      decide(state, counting instanceof Promise ? await counting : counting, counted);
    },
    async spendAddress(state) {
      decide(state, await settled(limiter.consume(anonSubject(state.clientAddress), anonLimits)), 'address');
    },
    async refuse(state, refusal, claimed) {
      const address = await settled(limiter.consume(failuresOf(state), anonLimits));
      state.rateLimit = address;
      state.headers = rateLimitHeaders(address);
      const installation = claimed && address.allowed ? await settled(local.consume(`sigfail:${claimed.slice(0, 200)}`, anonLimits)) : null;
      const over = !address.allowed ? address : installation && !installation.allowed ? installation : null;
      if (!over) throw refusal;
      const whose = over === address ? 'from this address' : 'in the name of this installation';
      throw new AppError('rate_limited', `Too many refused signatures ${whose}; retry in ${over.retryAfter} s`, {
        ...refusal.headers,
        'retry-after': String(over.retryAfter),
      });
    },
  };
}
