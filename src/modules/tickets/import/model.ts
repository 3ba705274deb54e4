import { t } from 'elysia';
import { instant } from '../../../lib/record-fields.ts';

/** Tickets in one import request, at most (docs/tickets.md "Importing tickets"). */
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

export const ImportBatchParams = t.Object({
  batch_id: t.String({ pattern: '^[A-Za-z0-9_]{1,100}$', error: 'must be an import batch id (tib_…)' }),
});

const RejectedItems = t.Array(t.Object({ index: t.Integer({ minimum: 0 }), error: t.String() }, { additionalProperties: false }));

/** The 202 answer to an import (importTickets): what was taken, and what was refused and why. */
export const ImportOutcome = t.Object(
  {
    batch_id: t.String(),
    connector_id: t.String(),
    received: t.Integer({ minimum: 0 }),
    accepted: t.Integer({ minimum: 0 }),
    duplicates: t.Integer({ minimum: 0 }),
    rejected: RejectedItems,
  },
  { additionalProperties: false },
);

/** A batch and how far its tickets have got (importProgress). */
export const ImportProgress = t.Object(
  {
    batch_id: t.String(),
    connector_id: t.String(),
    status: t.Union([t.Literal('processing'), t.Literal('completed')]),
    received: t.Integer({ minimum: 0 }),
    accepted: t.Integer({ minimum: 0 }),
    duplicates: t.Integer({ minimum: 0 }),
    rejected: RejectedItems,
    progress: t.Object(
      {
        pending: t.Integer({ minimum: 0 }),
        processing: t.Integer({ minimum: 0 }),
        done: t.Integer({ minimum: 0 }),
        dead: t.Integer({ minimum: 0 }),
      },
      { additionalProperties: false },
    ),
    failed: RejectedItems,
    created_at: instant,
  },
  { additionalProperties: false },
);
