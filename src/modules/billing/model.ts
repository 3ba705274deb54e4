import { t } from 'elysia';
import { BILLING_EVENT_STATES, BILLING_MODES, BILLING_PLATFORMS } from '../../db/schema/index.ts';
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
