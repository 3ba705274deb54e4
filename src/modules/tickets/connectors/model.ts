import { t } from 'elysia';
import { enumOf, instant, nullable } from '../../../lib/record-fields.ts';
import { PLATFORMS } from '../platforms.ts';
import { EVENT_SOURCES, EVENT_STATUSES } from '../../../db/schema/index.ts';

/** A connector as API clients see it (presentConnector): whether it has a secret or a token, never
 * either. */
export const ConnectorView = t.Object(
  {
    id: t.String(),
    org_id: t.String(),
    name: t.String(),
    platform: enumOf(PLATFORMS),
    builtin: t.Boolean(),
    webhook_url: nullable(t.String()),
    signed: t.Boolean(),
    token: t.Boolean(),
    previous_secret_valid_until: nullable(instant),
    created_at: instant,
    updated_at: instant,
  },
  { additionalProperties: false },
);

export const ConnectorParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) });

export const ConnectorCreate = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200, error: 'must be a name of 1 to 200 characters' }),
    platform: enumOf(PLATFORMS),
  },
  { additionalProperties: false },
);
export type ConnectorCreate = typeof ConnectorCreate.static;

/** Sets the webhook secret, or rotates it: the current one stays valid for `grace_seconds`. Without
 * `secret` the server generates one and answers it once. */
export const SecretBody = t.Object(
  {
    secret: t.Optional(t.String({ minLength: 8, maxLength: 500, error: 'must be 8 to 500 characters' })),
    grace_seconds: t.Optional(
      t.Integer({ minimum: 0, maximum: 30 * 24 * 3600, error: 'must be a whole number of seconds from 0 to 2592000 (30 days)' }),
    ),
  },
  { additionalProperties: false },
);
export type SecretBody = typeof SecretBody.static;

export const SecretSet = t.Object(
  {
    connector: ConnectorView,
    /** Only when the server generated it: shown this once. */
    secret: t.Optional(t.String()),
  },
  { additionalProperties: false },
);

/** A webhook delivery or imported ticket as it went through the queue. */
export const TicketEvent = t.Object(
  {
    id: t.String(),
    org_id: t.String(),
    connector_id: t.String(),
    connector_name: t.String(),
    source: enumOf(EVENT_SOURCES),
    status: enumOf(EVENT_STATUSES),
    attempts: t.Integer(),
    run_after: instant,
    last_error: nullable(t.String()),
    ticket_ids: nullable(t.Array(t.String())),
    received_at: instant,
    processed_at: nullable(instant),
  },
  { additionalProperties: false },
);

export const ListEventsQuery = t.Object(
  {
    connector_id: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
    status: t.Optional(enumOf(EVENT_STATUSES)),
    limit: t.Optional(t.String()),
    cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);

export const EventParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) });
