// The organisation's API keys: listed with a key or a session (never a secret or a hash); created
// and revoked by an admin signed in to the console (`who: 'admin-session'`, judged by the gate) or
// by the operator (`revintel keys …`) — never with an API key: a leaked key must not be able to
// mint its own replacements.
import { Elysia, t } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { transaction } from '../../db/transaction.ts';
import { ok } from '../../lib/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import { jsonBody } from '../../plugins/body.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import type { RouteDeclaration, ScopeDeclaration } from '../../lib/routes.ts';
import { CreatedKey, CreateKeyBody, PublicKeyView } from './model.ts';
import { presentKey } from './present.ts';
import { actorOf, createKey, listKeys, revokeKey, type Authenticator } from './service.ts';

const KeyParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) });

const admins = { auth: 'key', counted: 'organisation', who: 'admin-session' } as const;

export const KEY_ROUTES = {
  list: {
    method: 'GET',
    path: '/api/keys',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: t.Array(PublicKeyView),
    summary: "The organisation's API keys",
  },
  create: {
    ...admins,
    body: 'api',
    method: 'POST',
    path: '/api/keys',
    response: CreatedKey,
    summary: 'Generate an API key: its secret is answered once (admins signed in to the console)',
  },
  revoke: {
    ...admins,
    body: 'none',
    method: 'DELETE',
    path: '/api/keys/:id',
    response: PublicKeyView,
    summary: 'Revoke an API key: it stops working at once (admins signed in to the console)',
  },
} as const satisfies Record<string, RouteDeclaration>;

/** Everything under /api is called with an API key unless its route says otherwise: an unknown
 * path too, so that it is a 401 without a key and a 404 with one, counted on the organisation. */
export const API_SCOPE: ScopeDeclaration = { prefix: '/api/', auth: 'key', counted: 'organisation', body: 'api' };

export function keysModule(deps: { database: Database; states: RequestStates; config: Config; authenticator: Authenticator }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/keys' })
    .get(KEY_ROUTES.list.path, async ({ request }) => ok((await listKeys(db, { org: principalOf(request).org.id })).map(presentKey)))
    .post(
      KEY_ROUTES.create.path,
      async ({ request, body, set }) => {
        const principal = principalOf(request);
        const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
        if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new AppError('validation_failed', 'expires_at must be an ISO 8601 time');
        const { key, plaintext } = await transaction(db, (tx) =>
          createKey(tx, { org: principal.org.id, name: body.name, expiresAt, actor: actorOf(principal) }),
        );
        set.status = 201;
        set.headers['cache-control'] = 'no-store';
        return ok({ ...presentKey(key), secret: plaintext });
      },
      { body: CreateKeyBody, parse: jsonBody(KEY_ROUTES.create, deps.config) },
    )
    .delete(
      KEY_ROUTES.revoke.path,
      async ({ request, params }) => {
        const principal = principalOf(request);
        const { key } = await transaction(db, (tx) =>
          revokeKey(tx, { keyId: params.id, orgId: principal.org.id, actor: actorOf(principal) }),
        );
        deps.authenticator.invalidate(); // at once in this process; other processes within KEY_CACHE_TTL_MS
        return ok(presentKey(key));
      },
      { params: KeyParams },
    );
}
