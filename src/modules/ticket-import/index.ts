// POST /api/ticket-intelligence/import (202) and GET /api/ticket-intelligence/import/:batch_id.
import { Elysia } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import { validator } from '../../lib/validation.ts';
import { readJsonBody } from '../../plugins/body.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { ImportBatchParams, TicketImportBody } from './model.ts';
import { importProgress, importTickets } from './service.ts';

export const TICKET_IMPORT_PATH = '/api/ticket-intelligence/import';

export function ticketImportModule(deps: { database: Database; states: RequestStates; config: Pick<Config, 'bodyLimitImport'>; wakeWorker?: (events: number) => void }) {
  const principalOf = principalAccessor(deps.states);
  const check = validator(TicketImportBody);
  return new Elysia({ name: 'revintel/ticket-import' })
    .post(TICKET_IMPORT_PATH, async ({ request, set }) => {
      const orgId = principalOf(request).org.id;
      // Each ticket is stored as JSON text (a NUL stays escaped) and cleaned by the worker, as a
      // webhook's body is.
      const body = await readJsonBody(request, deps.config.bodyLimitImport, { storedAsText: true });
      if (body === null) throw new AppError('validation_failed', 'Request body is required: {"tickets": [ … ]}');
      const problem = check(body);
      if (problem) throw new AppError('validation_failed', problem.replace('Invalid record', 'Invalid request body'));
      const outcome = await importTickets(deps.database.db, orgId, body as TicketImportBody);
      if (outcome.accepted > 0) deps.wakeWorker?.(outcome.accepted);
      set.status = 202;
      return ok(outcome);
    })
    .get(`${TICKET_IMPORT_PATH}/:batch_id`, async ({ request, params }) => ok(await importProgress(deps.database.db, principalOf(request).org.id, params.batch_id)), {
      params: ImportBatchParams,
    });
}
