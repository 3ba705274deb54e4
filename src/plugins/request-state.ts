import type { Rules } from '../lib/routes.ts';
import type { Principal } from '../modules/keys/service.ts';
import type { Decision } from '../lib/rate-limiter.ts';

/** What the request pipeline learns about a request before a route runs. Kept in a WeakMap on the
 * Request, so routes (through principalOf) can read it. */
export interface RequestState {
  id: string;
  path: string;
  startedAt: number;
  readonly clientAddress: string;
  principal: Principal | null;
  /** The rate-limit decision for this request (absent for probes, which are not counted). */
  rateLimit: Decision | null;
  /** Rate-limit headers to put on whatever response this request ends with. */
  headers: Record<string, string>;
  /** Its log line is written (once, even when answered at its deadline and finished later). */
  logged: boolean;
  /** The rules it is judged by (its route's declaration, or its scope's), once known. */
  rules: Rules | null;
}

export type RequestStates = WeakMap<Request, RequestState>;
