// POST /api/ticket-intelligence/import (202) and GET /api/ticket-intelligence/import/:batch_id.
import { Elysia } from 'elysia';
import type { Config } from '../../../config.ts';
import type { Database } from '../../../db/client.ts';
import { ok } from '../../../lib/envelope.ts';
import { AppError } from '../../../lib/errors.ts';
import { requestBody } from '../../../lib/validation.ts';
import { readJsonBody } from '../../../plugins/body.ts';
import { principalAccessor } from '../../../plugins/auth.ts';
import type { RequestStates } from '../../../plugins/request-state.ts';
import { bodyLimit, type RouteDeclaration } from '../../../lib/routes.ts';
import { ImportBatchParams, ImportOutcome, ImportProgress, TicketImportBody } from './model.ts';
import { importProgress, importTickets } from './service.ts';

/** The import takes up to 1,000 tickets in one body: its own, larger limit. */
export const TICKET_IMPORT_ROUTES = {
  import: {
    method: 'POST',
    path: '/api/ticket-intelligence/import',
    auth: 'key',
    counted: 'organisation',
    body: 'import',
    response: ImportOutcome,
    summary: 'Import tickets (202); the worker processes them',
  },
  progress: {
    method: 'GET',
    path: '/api/ticket-intelligence/import/:batch_id',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: ImportProgress,
    summary: 'How far an import batch has got',
  },
} as const satisfies Record<string, RouteDeclaration>;

export function ticketImportModule(deps: {
  database: Database;
  states: RequestStates;
  config: Pick<Config, 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook'>;
  wakeWorker?: (events: number) => void;
}) {
  const principalOf = principalAccessor(deps.states);
  const importBody = requestBody(TicketImportBody);
  const limit = bodyLimit(TICKET_IMPORT_ROUTES.import.body, deps.config);
  return new Elysia({ name: 'revintel/ticket-import' })
    .post(TICKET_IMPORT_ROUTES.import.path, async ({ request, set }) => {
      const orgId = principalOf(request).org.id;
      // Each ticket is stored as JSON text (a NUL stays escaped) and cleaned by the worker, as a
      // webhook's body is.
      const body = await readJsonBody(request, limit, { storedAsText: true });
      if (body === null) throw new AppError('validation_failed', 'Request body is required: {"tickets": [ … ]}');
      const outcome = await importTickets(deps.database.db, orgId, importBody(body));
      if (outcome.accepted > 0) deps.wakeWorker?.(outcome.accepted);
      set.status = 202;
      return ok(outcome);
    })
    .get(
      TICKET_IMPORT_ROUTES.progress.path,
      async ({ request, params }) => ok(await importProgress(deps.database.db, principalOf(request).org.id, params.batch_id)),
      {
        params: ImportBatchParams,
      },
    );
}
