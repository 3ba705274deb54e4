// Before any route runs: authenticate /api callers, count the request against its rate limit (the
// organisation's, or the client address's when unauthenticated), and refuse a declared body over
// the limit. It runs for every request, matched route or not, so 401s and 404s carry the
// rate-limit headers too, and every request of an organisation counts against its limit.
import { AppError } from '../lib/errors.ts';
import { bodyLimitFor, tooLarge } from '../lib/body.ts';
import { rateLimitHeaders, type Limits, type RateLimiter } from '../lib/rate-limiter.ts';
import { AUTH_FAILURE_MESSAGES, type AuthFailure, type Authenticator, type Principal } from '../modules/keys/service.ts';
import { limitsOf } from '../modules/orgs/service.ts';
import type { Config } from '../config.ts';
import type { RequestState } from './request-state.ts';

/** Paths that never need a key: liveness/readiness probes, and webhooks (their senders prove who
 * they are with their own credentials). */
const isPublic = (path: string) => !path.startsWith('/api/') || path.startsWith('/api/webhooks/');
/** Probes are answered with the headers but not counted: a load balancer polling every second must
 * not exhaust its address's budget. */
const isProbe = (path: string) => path === '/healthz' || path === '/readyz';

/** The path of an absolute URL without building a URL object (this runs on every request). */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = url.indexOf('?', start);
  return url.slice(start, end < 0 ? undefined : end);
}

/** Reads the credential exactly as @elysiajs/bearer does (the auth macro reads it through that
 * plugin), so both always see the same key. null: a header that is not a bearer credential. */
export function bearerToken(header: string | null): string | undefined | null {
  if (header === null) return undefined;
  return header.startsWith('Bearer ') ? header.slice('Bearer '.length) : null;
}

/** Whose budget an unauthenticated request spends: its address, or for IPv6 its /64 — one host
 * commonly holds a whole /64 and could otherwise rotate through it. */
export function anonSubject(address: string): string {
  const plain = address.replace(/^::ffff:/, '').replace(/%.*$/, '');
  if (!plain.includes(':')) return `ip:${plain}`;
  const [head = '', tail = ''] = plain.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups = plain.includes('::') ? [...front, ...Array(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back] : front;
  return `ip6:${groups.slice(0, 4).map((g) => parseInt(g || '0', 16).toString(16)).join(':')}::/64`;
}

export interface GateDeps {
  config: Pick<Config, 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook' | 'anonLimitPerMinute' | 'anonLimitPerDay'>;
  limiter: RateLimiter;
  authenticator: Authenticator;
}

const unauthorized = (message: string) => new AppError('unauthorized', message, { 'www-authenticate': 'Bearer realm="revintel"' });

export function createGate(deps: GateDeps) {
  const anonLimits: Limits = { perMinute: deps.config.anonLimitPerMinute, perDay: deps.config.anonLimitPerDay };

  /** Resolves when the request may proceed; throws the AppError (or failure) it must end with. */
  return async function admit(state: RequestState, request: Request): Promise<void> {
    const path = state.path;
    if (isProbe(path)) {
      state.headers = rateLimitHeaders(await deps.limiter.peek(anonSubject(state.clientAddress), anonLimits));
      return;
    }

    // The organisation's budget when authenticated; the client address's otherwise (looked up only
    // then: it costs a system call).
    let subject: string | null = null;
    let limits = anonLimits;
    // Whatever goes wrong while authenticating, the request is still counted (against the client
    // address) so that its answer carries rate-limit headers like every other.
    let authError: unknown = null;
    if (!isPublic(path)) {
      const token = bearerToken(request.headers.get('authorization'));
      if (request.url.includes('access_token') && new URL(request.url).searchParams.has('access_token')) {
        // Keys in URLs end up in logs and browser histories: refuse them even alongside a header.
        authError = unauthorized('API keys are not accepted in the URL (access_token); send "Authorization: Bearer <key>"');
      } else {
        let result: Principal | AuthFailure | 'throttled' | null = null;
        try {
          // A key the database must be asked about is a request from a client we do not know yet:
          // one already over its address's budget gets its 429 without costing a query.
          const addressHasRoom = async () => {
            const state_ = await deps.limiter.peek(anonSubject(state.clientAddress), anonLimits);
            return state_.minute.remaining > 0 && state_.day.remaining > 0;
          };
          const pending = deps.authenticator.authenticate(token === null ? 'not-a-bearer' : token, addressHasRoom);
          result = pending instanceof Promise ? await pending : pending;
        } catch (error) {
          authError = error;
        }
        if (result === 'throttled') {
          // counted below against the address, which refuses it
        } else if (typeof result === 'string') {
          authError = unauthorized(AUTH_FAILURE_MESSAGES[token === null ? 'malformed' : result]);
        } else if (result) {
          state.principal = result;
          state.token = token!;
          subject = `org:${result.org.id}`;
          limits = limitsOf(result.org);
        }
      }
    }

    const pending = deps.limiter.consume(subject ?? anonSubject(state.clientAddress), limits);
    const decision = pending instanceof Promise ? await pending : pending;
    state.rateLimit = decision;
    state.headers = rateLimitHeaders(decision);
    if (!decision.allowed) {
      const [limit, window] = decision.day.remaining === 0 ? [limits.perDay, 'day'] : [limits.perMinute, 'minute'];
      throw new AppError('rate_limited', `Rate limit exceeded: ${limit} requests per ${window}; retry in ${decision.retryAfter} s`, {
        'retry-after': String(decision.retryAfter),
      });
    }
    if (authError) throw authError;
    const limit = bodyLimitFor(path, deps.config);
    if (Number(request.headers.get('content-length') ?? 0) > limit) throw tooLarge(limit);
  };
}
