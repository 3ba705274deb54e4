import { t } from 'elysia';
import { BILLING_EVENT_STATES, BILLING_MODES, BILLING_OBJECT_TYPES, BILLING_PLATFORMS } from '../../db/schema/index.ts';
import { enumOf, instant, nullable } from '../../lib/record-fields.ts';

/** A billing connector as it may be shown: which credentials it has, never one of them. */
export const BillingConnectorView = t.Object(
  {
    id: t.String(),
    org_id: t.String(),
    name: t.String(),
    platform: enumOf(BILLING_PLATFORMS),
    mode: enumOf(BILLING_MODES),
    site: nullable(t.String()),
    webhook_url: t.String(),
    webhook_secret: t.Boolean(),
    api_key: t.Boolean(),
    basic_auth: t.Boolean(),
    previous_secret_valid_until: nullable(instant),
    created_at: instant,
    updated_at: instant,
  },
  { additionalProperties: false },
);

const secretText = (what: string) => t.String({ minLength: 8, maxLength: 500, error: `must be ${what} of 8 to 500 characters` });

export const BillingConnectorCreate = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200, error: 'must be a name of 1 to 200 characters' }),
    platform: enumOf(BILLING_PLATFORMS),
    mode: t.Optional(enumOf(BILLING_MODES)),
    site: t.Optional(
      t.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', error: 'must be a Chargebee site name (acme of acme.chargebee.com)' }),
    ),
    webhook_secret: t.Optional(secretText('a Stripe endpoint secret (whsec_…)')),
    api_key: t.Optional(secretText('an API key')),
    basic_auth: t.Optional(
      t.String({ pattern: '^[^:]{1,200}:.{8,300}$', error: 'must be USER:PASSWORD (a password of 8 characters or more)' }),
    ),
  },
  { additionalProperties: false },
);
export type BillingConnectorCreate = typeof BillingConnectorCreate.static;

export const BillingConnectorPatch = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200, error: 'must be a name of 1 to 200 characters' })),
    mode: t.Optional(enumOf(BILLING_MODES)),
    webhook_secret: t.Optional(secretText('a Stripe endpoint secret (whsec_…)')),
    grace_seconds: t.Optional(
      t.Integer({ minimum: 0, maximum: 30 * 24 * 3600, error: 'must be a whole number of seconds from 0 to 2592000' }),
    ),
    api_key: t.Optional(secretText('an API key')),
    basic_auth: t.Optional(
      t.String({ pattern: '^[^:]{1,200}:.{8,300}$', error: 'must be USER:PASSWORD (a password of 8 characters or more)' }),
    ),
  },
  { additionalProperties: false },
);
export type BillingConnectorPatch = typeof BillingConnectorPatch.static;

export const BillingConnectorParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) });

export const BillingSyncView = t.Object(
  {
    id: t.String(),
    connector_id: t.String(),
    state: t.String(),
    phase: t.String(),
    pages: t.Integer(),
    requests: t.Integer(),
    rate_limited: t.Integer(),
    report: t.Record(t.String(), t.Record(t.String(), t.Integer())),
    error: nullable(t.String()),
    job_id: nullable(t.String()),
    created_at: instant,
    finished_at: nullable(instant),
  },
  { additionalProperties: false },
);

export const BillingEventCounts = t.Record(enumOf(BILLING_EVENT_STATES), t.Integer());

const billingObjectType = enumOf(BILLING_OBJECT_TYPES);

/** A dead event: its object failed MAX_APPLY_ATTEMPTS times; `detail` says why the last time. */
export const BillingDeadEventView = t.Object(
  {
    id: t.String(),
    event_id: t.String(),
    type: t.String(),
    object_type: nullable(billingObjectType),
    object_id: nullable(t.String()),
    source: t.String(),
    attempts: t.Integer(),
    detail: nullable(t.String()),
    occurred_at: instant,
    received_at: instant,
  },
  { additionalProperties: false },
);

const objectOutcome = t.Object({ read: t.Integer(), created: t.Integer(), updated: t.Integer(), unchanged: t.Integer() });

/** What the last backfill did to the records: objects created, updated, unchanged per type, and the
 * objects it read that were not applied, grouped by reason. */
export const BillingSyncOutcome = t.Object(
  {
    objects: t.Object({ customer: objectOutcome, subscription: objectOutcome, invoice: objectOutcome }),
    skipped: t.Array(
      t.Object({ object_type: nullable(billingObjectType), state: enumOf(BILLING_EVENT_STATES), reason: t.String(), count: t.Integer() }),
    ),
  },
  { additionalProperties: false },
);

export const BillingConnectorStatusView = t.Object(
  {
    connector: BillingConnectorView,
    events: t.Object({ pending: t.Integer(), applied: t.Integer(), ignored: t.Integer(), dead: t.Integer() }),
    last_event: nullable(
      t.Object({
        id: t.String(),
        event_id: t.String(),
        type: t.String(),
        source: t.String(),
        state: enumOf(BILLING_EVENT_STATES),
        occurred_at: instant,
        received_at: instant,
      }),
    ),
    /** Seconds the oldest pending event has waited (0 when none waits): how far behind the records are. */
    lag_seconds: t.Integer(),
    oldest_pending_at: nullable(instant),
    last_sync: nullable(BillingSyncView),
    last_sync_outcome: nullable(BillingSyncOutcome),
    dead: t.Array(BillingDeadEventView),
    /** Dead events beyond those listed. */
    dead_more: t.Integer(),
  },
  { additionalProperties: false },
);
export type BillingConnectorStatusView = typeof BillingConnectorStatusView.static;

export const BillingEventParams = t.Object({
  id: t.String({ minLength: 1, maxLength: 100 }),
  event_id: t.String({
    minLength: 1,
    maxLength: 200,
    description: "the event: our id (`bev_…`) or the billing system's (Stripe's `evt_…`, Chargebee's `ev_…`)",
  }),
});

export const BillingReplayView = t.Object(
  {
    /** The dead events set pending again: the one asked for and its object's other dead ones. */
    replayed: t.Array(t.String()),
    object_type: nullable(billingObjectType),
    object_id: nullable(t.String()),
  },
  { additionalProperties: false },
);
