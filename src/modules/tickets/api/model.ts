import { t } from 'elysia';
import { enumOf, instant, nullable } from '../../../lib/record-fields.ts';
import { CHURN_SIGNALS, TOPICS, URGENCIES } from '../intelligence.ts';
import { PLATFORMS } from '../platforms.ts';

/** What `sentiment_below` may be (a sentiment score). */
export const SENTIMENT_RANGE = { min: -1, max: 1 } as const;

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

/** A ticket as the API shows it (presentTicket): the platform's fields, normalised, with the
 * intelligence the worker derived (null until it has run). */
export const Ticket = t.Object(
  {
    id: t.String(),
    connector: t.Object({ id: t.String(), name: t.String(), platform: enumOf(PLATFORMS) }, { additionalProperties: false }),
    external_id: t.String(),
    customer_id: nullable(t.String()),
    subject: nullable(t.String()),
    description: nullable(t.String()),
    status: nullable(enumOf(TICKET_STATUSES)),
    external_status: nullable(t.String()),
    priority: nullable(t.String()),
    external_priority: nullable(t.String()),
    requester_email: nullable(t.String()),
    source_created_at: nullable(instant),
    source_updated_at: nullable(instant),
    intelligence: t.Object(
      {
        sentiment: nullable(t.Number({ minimum: -1, maximum: 1 })),
        urgency: nullable(enumOf(URGENCIES)),
        topics: t.Array(enumOf(TOPICS)),
        churn_signals: t.Array(enumOf(CHURN_SIGNALS)),
        method: nullable(t.String()),
        version: nullable(t.String()),
      },
      { additionalProperties: false },
    ),
    created_at: instant,
    updated_at: instant,
  },
  { additionalProperties: false },
);
