// GET /api/me: who the key belongs to and where it stands against its limits — how a client checks
// its key before doing anything else.
import { Elysia } from 'elysia';
import { ok } from '../../lib/envelope.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { Me } from './model.ts';

export const ME_ROUTES = {
  me: { method: 'GET', path: '/api/me', auth: 'key', counted: 'organisation', body: 'none', response: Me, summary: "The key's organisation, the key, and its rate-limit budget" },
} as const satisfies Record<string, RouteDeclaration>;

export function meModule(deps: { states: RequestStates }) {
  const principalOf = principalAccessor(deps.states);
  return new Elysia({ name: 'revintel/me' }).get(ME_ROUTES.me.path, ({ request }) => {
    const { org, key } = principalOf(request);
    const rate = deps.states.get(request)!.rateLimit!;
    return ok({
      org: { id: org.id, name: org.name, plan: org.plan },
      key: { id: key.id, name: key.name, prefix: key.prefix, expires_at: key.expiresAt?.toISOString() ?? null },
      rate_limit: { minute: rate.minute, day: rate.day },
    });
  });
}
