import { t } from 'elysia';
import { instant } from '../../lib/record-fields.ts';
import { CHURN_SIGNALS } from './intelligence.ts';

export const TICKET_STATUSES = ['open', 'pending', 'solved', 'closed'] as const;

export const ListTicketsQuery = t.Object({
  customer_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  connector_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  /** The normalised status (the platform's own label is in `external_status`). */
  status: t.Optional(t.Union(TICKET_STATUSES.map((s) => t.Literal(s)))),
  /** A number from -1 to 1; checked by the route (a message that names it). */
  sentiment_below: t.Optional(t.String()),
  churn_signal: t.Optional(t.Union(CHURN_SIGNALS.map((s) => t.Literal(s)))),
  updated_since: t.Optional(instant),
  limit: t.Optional(t.String()),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
});

export const TicketParams = t.Object({ id: t.String({ minLength: 1, maxLength: 300 }) });
