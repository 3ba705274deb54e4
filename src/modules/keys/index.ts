// GET /api/keys: the organisation's keys as a client may see them (never a secret or a hash).
// Keys are created and revoked by the operator (`revintel keys …`) — and later from the settings
// page — not by API keys: a leaked key must not be able to mint its own replacements.
import { Elysia, t } from 'elysia';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import type { RouteDeclaration, ScopeDeclaration } from '../../lib/routes.ts';
import { PublicKeyView } from './model.ts';
import { presentKey } from './present.ts';
import { listKeys } from './service.ts';

export const KEY_ROUTES = {
  list: { method: 'GET', path: '/api/keys', auth: 'key', counted: 'organisation', body: 'none', response: t.Array(PublicKeyView), summary: "The organisation's API keys" },
} as const satisfies Record<string, RouteDeclaration>;

/** Everything under /api is called with an API key unless its route says otherwise: an unknown
 * path too, so that it is a 401 without a key and a 404 with one, counted on the organisation. */
export const API_SCOPE: ScopeDeclaration = { prefix: '/api/', auth: 'key', counted: 'organisation', body: 'api' };

export function keysModule(deps: { database: Database; states: RequestStates }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/keys' }).get(KEY_ROUTES.list.path, async ({ request }) => ok((await listKeys(db, { org: principalOf(request).org.id })).map(presentKey)));
}
