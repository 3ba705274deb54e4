// Before any route runs (and before any body is read): authenticate the callers of key routes, count
// the request against its rate limit — the organisation's; for a failed authentication the client
// address's failures budget; for public routes the address's own — and refuse a declared body over
// the limit. What a request needs is what its route declares (lib/routes.ts; app.ts looks it up).
// It runs for every request, matched route or not, so 401s and 404s carry the rate-limit headers
// too, and every request of an organisation counts against its limit. Failures are counted apart
// from the address's public requests so that strangers behind the same NAT sending bad keys never
// refuse a valid key: a key is always looked up, and judged by its organisation's budget.
// A console session (the `revintel_session` cookie) authenticates the same routes when the request
// has no Authorization header; its state-changing requests must carry the session's CSRF token and
// this server's Origin. What a route asks of its caller beyond that (`who`: a session, an admin's
// session) is judged here too, once, for every route that declares it.
import { AppError } from '../lib/errors.ts';
import { tooLarge } from '../lib/body.ts';
import { bodyLimit, type BodyKind, type Rules, type Who } from '../lib/routes.ts';
import { rateLimitHeaders, untouchedDecision, type Decision, type Limits, type RateLimiter } from '../lib/rate-limiter.ts';
import { AUTH_FAILURE_MESSAGES, type AuthFailure, type Authenticator, type Principal } from '../modules/keys/service.ts';
import {
  clearedSessionCookie,
  csrfProblem,
  SAFE_METHODS,
  SESSION_FAILURE_MESSAGES,
  sessionTokenOf,
  type SessionAuthenticator,
  type SessionFailure,
} from '../modules/auth/sessions.ts';
import type { Config } from '../config.ts';
import type { RequestState } from './request-state.ts';
import { bearerToken } from './bearer-token.ts';
import { hasKeyInQuery } from './request-url.ts';

/** How long a probe waits for the store to tell its address's budget (see probeHeaders). */
const PROBE_PEEK_MS = 50;

/** Whose budget an unauthenticated request spends: its address, or for IPv6 its /64 — one host
 * commonly holds a whole /64 and could otherwise rotate through it. */
export function anonSubject(address: string): string {
  const plain = address.replace(/^::ffff:/, '').replace(/%.*$/, '');
  if (!plain.includes(':')) return `ip:${plain}`;
  const [head = '', tail = ''] = plain.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups = plain.includes('::') ? [...front, ...Array(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back] : front;
  return `ip6:${groups
    .slice(0, 4)
    .map((g) => parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

interface GateDeps {
  config: Pick<Config, 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook' | 'anonLimitPerMinute' | 'anonLimitPerDay' | 'publicUrl'>;
  limiter: RateLimiter;
  authenticator: Authenticator;
  sessions: SessionAuthenticator;
}

type KeyRules = Extract<Rules, { auth: 'key' }>;

/** The budget failed authentications from an address spend: apart from its public requests. The
 * platform routes' refused signatures spend it too (modules/signed-webhooks/budgets.ts). */
export const failuresOf = (state: RequestState) => `authfail:${anonSubject(state.clientAddress)}`;

const unauthorized = (message: string) => new AppError('unauthorized', message, { 'www-authenticate': 'Bearer realm="revintel"' });

/** Said to an API key on a route for people (`who`). */
const PEOPLE_ONLY: Record<Exclude<Who, 'admin'>, string> = {
  'admin-session': 'Not with an API key: keys are made by people: sign in to the console as an admin',
  session: 'Not with an API key: this is for a person signed in to the console',
};

export function createGate(deps: GateDeps) {
  const anonLimits: Limits = { perMinute: deps.config.anonLimitPerMinute, perDay: deps.config.anonLimitPerDay };
  const bodyLimits: Record<BodyKind, number> = {
    api: bodyLimit('api', deps.config),
    import: bodyLimit('import', deps.config),
    webhook: bodyLimit('webhook', deps.config),
    none: bodyLimit('none', deps.config),
  };

  /** Counts the request and decides it; throws the AppError (or failure) it must end with. */
  function decide(
    state: RequestState,
    request: Request,
    body: BodyKind,
    subject: string | null,
    limits: Limits,
    authError: unknown,
  ): void | Promise<void> {
    const settle = (decision: Decision) => {
      state.rateLimit = decision;
      state.headers = rateLimitHeaders(decision);
      if (!decision.allowed) {
        const [limit, window] = decision.day.remaining === 0 ? [limits.perDay, 'day'] : [limits.perMinute, 'minute'];
        throw new AppError('rate_limited', `Rate limit exceeded: ${limit} requests per ${window}; retry in ${decision.retryAfter} s`, {
          'retry-after': String(decision.retryAfter),
        });
      }
      if (authError) throw authError;
      const limit = bodyLimits[body];
      if (Number(request.headers.get('content-length') ?? 0) > limit) throw tooLarge(limit);
    };
    const pending = deps.limiter.consume(subject ?? anonSubject(state.clientAddress), limits);
    return pending instanceof Promise ? pending.then(settle) : settle(pending);
  }

  /** A probe's headers: the address's budget as the store tells it within PROBE_PEEK_MS, else the
   * windows untouched. Liveness must not wait on the store (a shared one is the database or Redis,
   * and an outage of either must not fail /healthz or hide /readyz's own account of it). */
  function probeHeaders(state: RequestState): Promise<void> {
    let timer: Timer | undefined;
    const fallback = new Promise<Decision>((resolve) => {
      timer = setTimeout(() => resolve(untouchedDecision(anonLimits)), PROBE_PEEK_MS);
    });
    const peeked = deps.limiter.peek(anonSubject(state.clientAddress), anonLimits).catch(() => untouchedDecision(anonLimits));
    return Promise.race([peeked, fallback]).then((decision) => {
      clearTimeout(timer);
      state.headers = rateLimitHeaders(decision);
    });
  }

  /** Why this principal may not make this request (null: it may): the route's `who`, and for a
   * session's state-changing request its CSRF token and Origin. */
  function refusal(request: Request, who: Who | undefined, principal: Principal): AppError | null {
    if (principal.kind === 'key') return who && who !== 'admin' ? new AppError('forbidden', PEOPLE_ONLY[who]) : null;
    if (!SAFE_METHODS.has(request.method)) {
      const problem = csrfProblem(request, principal, deps.config);
      if (problem) return new AppError('csrf_failed', problem);
    }
    if ((who === 'admin-session' || who === 'admin') && principal.user.role !== 'admin')
      return new AppError('forbidden', 'Only an admin of the organisation may do this');
    return null;
  }

  /** Turns what authentication said into whose budget the request spends, then decides it. */
  function authenticated(
    state: RequestState,
    request: Request,
    rules: KeyRules,
    token: string | null | undefined,
    result: Principal | AuthFailure | null,
    error: unknown,
  ) {
    if (error) return decide(state, request, rules.body, null, anonLimits, error);
    if (typeof result === 'string') {
      return decide(
        state,
        request,
        rules.body,
        failuresOf(state),
        anonLimits,
        unauthorized(AUTH_FAILURE_MESSAGES[token === null ? 'malformed' : result]),
      );
    }
    state.principal = result;
    return decide(state, request, rules.body, result!.rateSubject, result!.limits, refusal(request, rules.who, result!));
  }

  /** The same for a console session: an ended or unknown one spends the address's failures. */
  function sessionAuthenticated(state: RequestState, request: Request, rules: KeyRules, result: Principal | SessionFailure) {
    if (typeof result === 'string') {
      // The browser drops a cookie that will never work again, so it stops sending it.
      const ended = new AppError('unauthorized', SESSION_FAILURE_MESSAGES[result], {
        'www-authenticate': 'Bearer realm="revintel"',
        'set-cookie': clearedSessionCookie(deps.config),
      });
      return decide(state, request, rules.body, failuresOf(state), anonLimits, ended);
    }
    state.principal = result;
    return decide(state, request, rules.body, result.rateSubject, result.limits, refusal(request, rules.who, result));
  }

  /**
   * Resolves when the request may proceed; throws (or rejects with) what it must end with. Written
   * without async/await: for a cached key and the in-process store every step is synchronous, and
   * the request then pays for no promise at all.
   */
  return function admit(state: RequestState, request: Request, rules: Rules): void | Promise<void> {
    // A platform route proves its sender over the raw bytes and counts the call itself, against
    // the sender's budget once it knows the sender (modules/webhooks): its Authorization header,
    // whatever it holds, is never an API key here.
    if (rules.auth === 'platform-signature') return;
    // Public routes spend the client address's budget; probes are answered with the headers but
    // not counted (a load balancer polling every second must not exhaust its address's budget).
    if (rules.auth === 'none')
      return rules.counted === 'not-counted' ? probeHeaders(state) : decide(state, request, rules.body, null, anonLimits, null);
    // Whatever goes wrong while authenticating, the request is still counted (against the
    // address), so its answer carries rate-limit headers like every other.
    const authorization = request.headers.get('authorization');
    const token = bearerToken(authorization);
    if (hasKeyInQuery(request.url)) {
      // Keys in URLs end up in logs and browser histories: refuse them even alongside a header.
      return decide(
        state,
        request,
        rules.body,
        failuresOf(state),
        anonLimits,
        unauthorized('API keys are not accepted in the URL (access_token); send "Authorization: Bearer <key>"'),
      );
    }
    // The console's requests: a session cookie and no Authorization header (a header always wins,
    // so API clients never pay for a session lookup).
    if (authorization === null) {
      const sessionToken = sessionTokenOf(request.headers.get('cookie'));
      if (sessionToken !== null) {
        return deps.sessions.authenticate(sessionToken).then(
          (result) => sessionAuthenticated(state, request, rules, result),
          (error) => authenticated(state, request, rules, token, null, error),
        );
      }
    }
    let pending: ReturnType<Authenticator['authenticate']>;
    try {
      pending = deps.authenticator.authenticate(token === null ? 'not-a-bearer' : token);
    } catch (error) {
      return authenticated(state, request, rules, token, null, error);
    }
    if (pending instanceof Promise) {
      return pending.then(
        (result) => authenticated(state, request, rules, token, result, null),
        (error) => authenticated(state, request, rules, token, null, error),
      );
    }
    return authenticated(state, request, rules, token, pending, null);
  };
}
