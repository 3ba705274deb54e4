import type { Principal } from '../modules/keys/service.ts';
import type { Decision } from '../lib/rate-limiter.ts';

/** What the cross-cutting plugins learn about a request before a handler runs. Kept in a WeakMap on
 * the Request so it exists for every request, matched route or not. */
export interface RequestState {
  id: string;
  startedAt: number;
  clientAddress: string;
  principal: Principal | null;
  /** SHA-256 of the key the gate admitted. */
  tokenHash: string | null;
  /** The rate-limit decision for this request (absent for probes, which are not counted). */
  rateLimit: Decision | null;
  /** The status of an error answer (Elysia does not tell onAfterResponse what onError sent). */
  errorStatus: number | null;
  /** Rate-limit headers to put on whatever response this request ends with. */
  headers: Record<string, string>;
}

export type RequestStates = WeakMap<Request, RequestState>;
