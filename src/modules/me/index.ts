// GET /api/me: who is calling — the organisation, the key (or, with a console session, the person
// and the CSRF token their state-changing requests send back) — and where it stands against its
// limits: how a client checks its key, and how the console learns who is signed in.
import { Elysia } from 'elysia';
import { ok } from '../../lib/envelope.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { Me } from './model.ts';

export const ME_ROUTES = {
  me: {
    method: 'GET',
    path: '/api/me',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: Me,
    summary: 'The caller: its organisation, its key or signed-in user, and its rate-limit budget',
  },
} as const satisfies Record<string, RouteDeclaration>;

export function meModule(deps: { states: RequestStates }) {
  const principalOf = principalAccessor(deps.states);
  return new Elysia({ name: 'revintel/me' }).get(ME_ROUTES.me.path, ({ request, set }) => {
    const principal = principalOf(request);
    const { org } = principal;
    const rate = deps.states.get(request)!.rateLimit!;
    const key = principal.kind === 'key' ? principal.key : null;
    const session = principal.kind === 'session' ? principal : null;
    if (session) set.headers['cache-control'] = 'no-store';
    return ok({
      org: { id: org.id, name: org.name, plan: org.plan },
      key: key && { id: key.id, name: key.name, prefix: key.prefix, expires_at: key.expiresAt?.toISOString() ?? null },
      user: session && { id: session.user.id, email: session.user.email, name: session.user.name, role: session.user.role },
      csrf_token: session?.session.csrfToken ?? null,
      rate_limit: { minute: rate.minute, day: rate.day },
    });
  });
}
