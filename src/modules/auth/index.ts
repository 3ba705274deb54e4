// The console's sign-in (SPEC 11): accept a one-time link (set the password), sign in with an
// e-mail and password, sign out of this session or of every one. A session is the
// `revintel_session` cookie (sessions.ts); the gate authenticates /api routes with it.
import { Elysia } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database, Db } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import { rateLimitHeaders, type Limits, type RateLimiter } from '../../lib/rate-limiter.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import { jsonBody } from '../../plugins/body.ts';
import { anonSubject } from '../../plugins/gate.ts';
import { sha256Hex } from '../../lib/digest.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { acceptLink, checkPassword, endSession, hashPassword, signInCandidates, signInVerified, signOutEverywhere, type SignedIn as SignedInResult } from '../users/service.ts';
import { AcceptLink, SignedIn, SignedOut, SignedOutEverywhere, SignIn } from './model.ts';
import { clearedSessionCookie, csrfTokenOf, foreignOriginProblem, sessionCookie } from './sessions.ts';

const noSession = { auth: 'none', counted: 'address', body: 'api' } as const;
const ownSession = { auth: 'key', counted: 'organisation', who: 'session', body: 'none' } as const;

export const AUTH_ROUTES = {
  accept: { ...noSession, method: 'POST', path: '/api/auth/accept', response: SignedIn, summary: 'Use a one-time sign-in link: set the password and start a session (Set-Cookie)' },
  signIn: { ...noSession, method: 'POST', path: '/api/auth/sign-in', response: SignedIn, summary: 'Sign in to the console with an e-mail and password (Set-Cookie)' },
  signOut: { ...ownSession, method: 'POST', path: '/api/auth/sign-out', response: SignedOut, summary: 'End this console session' },
  signOutEverywhere: { ...ownSession, method: 'POST', path: '/api/auth/sign-out-everywhere', response: SignedOutEverywhere, summary: "End every one of this user's console sessions" },
} as const satisfies Record<string, RouteDeclaration>;

const WRONG_CREDENTIALS = 'Wrong e-mail or password';

/** Verified when no account has the e-mail, so that an unknown e-mail takes as long as a wrong password. */
let dummyHash: Promise<string> | null = null;
const dummy = () => (dummyHash ??= Bun.password.hash(crypto.randomUUID(), { algorithm: 'argon2id' }));

export function authModule(deps: { database: Database; states: RequestStates; config: Config; limiter: RateLimiter }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  const inTransaction = <T>(work: (tx: Db) => Promise<T>) => db.transaction((tx) => work(tx as unknown as Db));
  const accountLimits: Limits = { perMinute: deps.config.signInLimitPerMinute, perDay: deps.config.signInLimitPerDay };
  const addressLimits: Limits = { perMinute: deps.config.signInAddressLimitPerMinute, perDay: deps.config.signInAddressLimitPerDay };

  /** No session yet, so no CSRF token: a cross-origin form post is refused by its Origin. */
  function refuseForeignOrigin(request: Request) {
    const problem = foreignOriginProblem(request, deps.config);
    if (problem) throw new AppError('csrf_failed', problem);
  }

  /** Counts a sign-in attempt against `subject`; over the limit, a 429 with that budget's headers. */
  async function spend(request: Request, subject: string, limits: Limits, whose: string) {
    const decision = await deps.limiter.consume(subject, limits);
    if (decision.allowed) return;
    const state = deps.states.get(request);
    if (state) state.headers = rateLimitHeaders(decision);
    const [limit, window] = decision.day.remaining === 0 ? [limits.perDay, 'day'] : [limits.perMinute, 'minute'];
    throw new AppError('rate_limited', `Too many sign-in attempts ${whose}: ${limit} per ${window}; retry in ${decision.retryAfter} s`, { 'retry-after': String(decision.retryAfter) });
  }

  function answer(set: { headers: Record<string, unknown> }, signedIn: SignedInResult) {
    set.headers['set-cookie'] = sessionCookie(signedIn.token, deps.config);
    set.headers['cache-control'] = 'no-store';
    const { user, org } = signedIn;
    return ok({
      user: { id: user.id, email: user.email, name: user.name, role: user.role },
      organisation: { id: org.id, name: org.name, plan: org.plan },
      csrf_token: csrfTokenOf(signedIn.token),
    });
  }

  return new Elysia({ name: 'revintel/auth' })
    .post(
      AUTH_ROUTES.accept.path,
      async ({ request, body, set }) => {
        refuseForeignOrigin(request);
        const { token, password } = body as AcceptLink;
        const passwordHash = await hashPassword(checkPassword(password));
        return answer(set, await inTransaction((tx) => acceptLink(tx, { token, passwordHash })));
      },
      { body: AcceptLink, parse: jsonBody(AUTH_ROUTES.accept, deps.config) },
    )
    .post(
      AUTH_ROUTES.signIn.path,
      async ({ request, body, set }) => {
        refuseForeignOrigin(request);
        const { email, password } = body as SignIn;
        const address = anonSubject(deps.states.get(request)?.clientAddress ?? 'unknown');
        await spend(request, `signin:${address}`, addressLimits, 'from this address');
        // By the e-mail's hash: the account (every account with that e-mail), and no address in the store.
        const normalized = email.trim().toLowerCase();
        await spend(request, `signin:account:${sha256Hex(normalized)}`, accountLimits, 'for this account');
        const candidates = await signInCandidates(db, normalized);
        if (candidates.length === 0) {
          await Bun.password.verify(password, await dummy());
          throw new AppError('unauthorized', WRONG_CREDENTIALS);
        }
        for (const candidate of candidates) {
          if (await Bun.password.verify(password, candidate.user.passwordHash!)) {
            return answer(set, await inTransaction((tx) => signInVerified(tx, { userId: candidate.user.id })));
          }
        }
        throw new AppError('unauthorized', WRONG_CREDENTIALS);
      },
      { body: SignIn, parse: jsonBody(AUTH_ROUTES.signIn, deps.config) },
    )
    .post(AUTH_ROUTES.signOut.path, async ({ request, set }) => {
      const principal = principalOf(request);
      if (principal.kind === 'session') await endSession(db, { sessionId: principal.session.id, orgId: principal.org.id });
      set.headers['set-cookie'] = clearedSessionCookie(deps.config);
      return ok({ signed_out: true as const });
    })
    .post(AUTH_ROUTES.signOutEverywhere.path, async ({ request, set }) => {
      const principal = principalOf(request);
      const ended = principal.kind === 'session' ? await inTransaction((tx) => signOutEverywhere(tx, { userId: principal.user.id, orgId: principal.org.id })) : 0;
      set.headers['set-cookie'] = clearedSessionCookie(deps.config);
      return ok({ sessions_ended: ended });
    });
}
