// The console's sign-in (docs/api.md "Users and the console sign-in"): accept a one-time link (set the password), sign in with an
// e-mail and password, sign out of this session or of every one. A session is the
// `revintel_session` cookie (sessions.ts); the gate authenticates /api routes with it.
import { Elysia } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { transaction } from '../../db/transaction.ts';
import { ok } from '../../lib/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import type { RateLimiter } from '../../lib/rate-limiter.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import { jsonBody } from '../../plugins/body.ts';
import { anonSubject } from '../../plugins/gate.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { createPasswordHasher } from '../users/passwords.ts';
import {
  acceptLink,
  checkLinkUsable,
  checkPassword,
  endSession,
  signInAccount,
  signInVerified,
  signOutEverywhere,
  type SignedIn as SignedInResult,
} from '../users/service.ts';
import { AcceptLink, SignedIn, SignedOut, SignedOutEverywhere, SignIn } from './model.ts';
import { clearedSessionCookie, csrfTokenOf, foreignOriginProblem, sessionCookie } from './sessions.ts';
import { signInThrottle } from './throttle.ts';

const noSession = { auth: 'none', counted: 'address', body: 'api' } as const;
const ownSession = { auth: 'key', counted: 'organisation', who: 'session', body: 'none' } as const;

export const AUTH_ROUTES = {
  accept: {
    ...noSession,
    method: 'POST',
    path: '/api/auth/accept',
    response: SignedIn,
    summary: 'Use a one-time sign-in link: set the password and start a session (Set-Cookie)',
  },
  signIn: {
    ...noSession,
    method: 'POST',
    path: '/api/auth/sign-in',
    response: SignedIn,
    summary: 'Sign in to the console with an e-mail and password (Set-Cookie)',
  },
  signOut: { ...ownSession, method: 'POST', path: '/api/auth/sign-out', response: SignedOut, summary: 'End this console session' },
  signOutEverywhere: {
    ...ownSession,
    method: 'POST',
    path: '/api/auth/sign-out-everywhere',
    response: SignedOutEverywhere,
    summary: "End every one of this user's console sessions",
  },
} as const satisfies Record<string, RouteDeclaration>;

const WRONG_CREDENTIALS = 'Wrong e-mail or password';

export function authModule(deps: { database: Database; states: RequestStates; config: Config; limiter: RateLimiter }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  const passwords = createPasswordHasher({ concurrency: deps.config.passwordHashingConcurrency, queue: deps.config.passwordHashingQueue });
  const throttle = signInThrottle(deps.limiter, deps.config);

  /** No session yet, so no CSRF token: a cross-origin form post is refused by its Origin. */
  function refuseForeignOrigin(request: Request) {
    const problem = foreignOriginProblem(request, deps.config);
    if (problem) throw new AppError('csrf_failed', problem);
  }

  /** A throttle's refusal carries its own budget's headers, in place of the address's the gate set. */
  async function throttled(request: Request, check: Promise<void>) {
    try {
      await check;
    } catch (error) {
      const state = deps.states.get(request);
      if (state && error instanceof AppError && error.code === 'rate_limited') state.headers = { ...error.headers };
      throw error;
    }
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
        const { token, password } = body;
        checkPassword(password);
        // The link first: an unknown, used or expired token costs a lookup, not a hashing.
        await checkLinkUsable(db, token);
        const passwordHash = await passwords.hash(password);
        return answer(set, await transaction(db, (tx) => acceptLink(tx, { token, passwordHash })));
      },
      { body: AcceptLink, parse: jsonBody(AUTH_ROUTES.accept, deps.config) },
    )
    .post(
      AUTH_ROUTES.signIn.path,
      async ({ request, body, set }) => {
        refuseForeignOrigin(request);
        const { email, password, organisation } = body;
        const address = anonSubject(deps.states.get(request)?.clientAddress ?? 'unknown');
        const normalized = email.trim().toLowerCase();
        await throttled(request, throttle.countAttempt(address));
        await throttled(request, throttle.checkFailures(address, normalized));
        // One account, one verification: the time does not tell how many accounts share the e-mail.
        const account = await passwords.check(
          password,
          () => signInAccount(db, normalized, organisation),
          (found) => found.user.passwordHash,
        );
        if (!account) {
          await throttle.countFailure(address, normalized);
          throw new AppError('unauthorized', WRONG_CREDENTIALS);
        }
        return answer(set, await transaction(db, (tx) => signInVerified(tx, { userId: account.user.id })));
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
      const ended =
        principal.kind === 'session'
          ? await transaction(db, (tx) => signOutEverywhere(tx, { userId: principal.user.id, orgId: principal.org.id }))
          : 0;
      set.headers['set-cookie'] = clearedSessionCookie(deps.config);
      return ok({ sessions_ended: ended });
    });
}
