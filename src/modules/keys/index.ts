// GET /api/keys: the organisation's keys as a client may see them (never a secret or a hash).
// Keys are created and revoked by the operator (`revintel keys …`) — and later from the settings
// page — not by API keys: a leaked key must not be able to mint its own replacements.
import { Elysia } from 'elysia';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { presentKey } from './present.ts';
import { listKeys } from './service.ts';

export function keysModule(deps: { database: Database; states: RequestStates }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/keys' })
    .get('/api/keys', async ({ request }) => ok((await listKeys(db, { org: principalOf(request).org.id })).map(presentKey)));
}
