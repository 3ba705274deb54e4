// Settings → API → Generate Key (interface spec §5.1), as an API: an organisation's keys can list,
// create and revoke the organisation's keys. The secret is in the answer to POST and nowhere else.
import { Elysia } from 'elysia';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { authPlugin } from '../../plugins/auth.ts';
import { bodyPlugin } from '../../plugins/body.ts';
import type { Config } from '../../config.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { CreateKeyBody, KeyIdParams } from './model.ts';
import { presentKey } from './present.ts';
import { createKey, listKeys, revokeKey, type Authenticator } from './service.ts';

export function keysModule(deps: { database: Database; states: RequestStates; authenticator: Authenticator; config: Config }) {
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/keys' })
    .use(authPlugin(deps.states))
    .use(bodyPlugin(deps.config))
    .get('/api/keys', async ({ principal }) => ok((await listKeys(db, { org: principal.org.id })).map(presentKey)), { auth: true })
    .post(
      '/api/keys',
      async ({ principal, body, set }) => {
        const { key, plaintext } = await db.transaction((tx) =>
          createKey(tx as never, {
            org: principal.org.id,
            name: body.name,
            expiresAt: body.expires_at ? new Date(body.expires_at) : null,
            actor: `key:${principal.key.id}`,
          }),
        );
        set.status = 201;
        return ok({ ...presentKey(key), secret: plaintext });
      },
      { auth: true, body: CreateKeyBody },
    )
    .delete(
      '/api/keys/:id',
      async ({ principal, params }) => {
        const { key } = await db.transaction((tx) =>
          revokeKey(tx as never, { keyId: params.id, orgId: principal.org.id, actor: `key:${principal.key.id}` }),
        );
        deps.authenticator.invalidate(key.id);
        return ok(presentKey(key));
      },
      { auth: true, params: KeyIdParams },
    );
}
