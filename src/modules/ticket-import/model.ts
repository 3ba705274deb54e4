import { t } from 'elysia';

/** Tickets in one import request, at most (README "Importing tickets"). */
export const MAX_IMPORT_TICKETS = 1000;

/** The request: the tickets (each the normalised fields — `id`, `subject`, `description`, `status`,
 * `priority`, `requester_email`, `created_at` — or a platform's raw object) and, optionally, the
 * connector they belong to. Items are checked one by one after this. */
export const TicketImportBody = t.Object(
  {
    connector_id: t.Optional(t.String({ pattern: '^[A-Za-z0-9_]{1,100}$', error: 'must be a connector id (con_…)' })),
    tickets: t.Array(t.Unknown(), { minItems: 1, maxItems: MAX_IMPORT_TICKETS }),
  },
  { additionalProperties: false },
);
export type TicketImportBody = typeof TicketImportBody.static;

export const ImportBatchParams = t.Object({ batch_id: t.String({ pattern: '^[A-Za-z0-9_]{1,100}$', error: 'must be an import batch id (tib_…)' }) });
