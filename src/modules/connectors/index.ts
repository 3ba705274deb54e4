// GET /api/connectors: the caller's organisation's connectors and their webhook URLs, for API
// clients that set platforms up; never a secret (sealed, never shown after creation).
import { Elysia, t } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { ConnectorView } from './model.ts';
import { listConnectors, presentConnector } from './service.ts';

export const CONNECTOR_ROUTES = {
  list: { method: 'GET', path: '/api/connectors', auth: 'key', counted: 'organisation', body: 'none', response: t.Array(ConnectorView), summary: "The organisation's connectors and their webhook URLs" },
} as const satisfies Record<string, RouteDeclaration>;

export function connectorsModule(deps: { database: Database; states: RequestStates; config: Pick<Config, 'publicUrl'> }) {
  const principalOf = principalAccessor(deps.states);
  return new Elysia({ name: 'revintel/connectors' }).get(CONNECTOR_ROUTES.list.path, async ({ request }) => {
    const rows = await listConnectors(deps.database.db, { orgId: principalOf(request).org.id });
    return ok(rows.map((row) => presentConnector(row, deps.config.publicUrl)));
  });
}
