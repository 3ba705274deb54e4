import { t } from 'elysia';
import { CUSTOMER_STATUSES, RISK_BANDS } from '../../db/schema/index.ts';
import { currency, day, email, enumOf, externalId, instant, label, metadata, nullable } from '../../lib/record-fields.ts';

const CUSTOMER_SORTS = ['created_at', 'name', 'arr'] as const;
export type CustomerSort = (typeof CUSTOMER_SORTS)[number];

/** Every parameter GET /api/customers understands; anything else is a 400 naming it. */
export const ListCustomersQuery = t.Object(
  {
    status: t.Optional(t.Union(CUSTOMER_STATUSES.map((s) => t.Literal(s)))),
    segment: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    currency: t.Optional(currency),
    csm_email: t.Optional(t.String({ minLength: 3, maxLength: 320 })),
    q: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    updated_since: t.Optional(instant),
    renewing_before: t.Optional(day),
    include_deleted: t.Optional(t.BooleanString()),
    sort: t.Optional(t.Union(CUSTOMER_SORTS.map((s) => t.Literal(s)))),
    limit: t.Optional(t.String()), // checked by parseLimit, so the message names it
    cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export type ListCustomersQuery = typeof ListCustomersQuery.static;

/** A customer id, or `ext:<external_id>`. */
export const CustomerParams = t.Object({ id: t.String({ minLength: 1, maxLength: 300 }) });

const csm = t.Object(
  {
    name: t.Optional(nullable(label(200))),
    email: t.Optional(nullable(email)),
    phone: t.Optional(nullable(t.String({ minLength: 1, maxLength: 50 }))),
    slack_user_id: t.Optional(nullable(t.String({ minLength: 1, maxLength: 50 }))),
  },
  { additionalProperties: false },
);

/** A customer's writable fields (docs/arr-data.md); the derived values are not among them. */
const customerFields = {
  external_id: t.Optional(nullable(externalId)),
  name: label(),
  domain: t.Optional(
    nullable(
      t.String({
        maxLength: 253,
        pattern: '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$',
        error: 'must be a domain name such as acme.com',
      }),
    ),
  ),
  email: t.Optional(nullable(email)),
  status: t.Optional(enumOf(CUSTOMER_STATUSES)),
  /** The day the customer churned; today's when the status becomes churned without one. Only a
   * churned customer has one. */
  churned_at: t.Optional(nullable(day)),
  segment: t.Optional(nullable(label(100))),
  country: t.Optional(nullable(t.String({ pattern: '^[A-Z]{2}$', error: 'must be an ISO 3166-1 alpha-2 country code such as DE' }))),
  currency,
  csm: t.Optional(nullable(csm)),
  metadata: t.Optional(metadata),
};

/** POST /api/customers: create, or update the customer with this external_id. */
export const CustomerCreate = t.Object(customerFields, { additionalProperties: false });
export type CustomerCreate = typeof CustomerCreate.static;

/** PATCH /api/customers/:id: any of the fields; null clears the ones that may be empty. */
export const CustomerPatch = t.Partial(t.Object(customerFields, { additionalProperties: false }));
export type CustomerPatch = typeof CustomerPatch.static;

/** A customer as the API shows it (presentCustomer): its fields and the values derived from its
 * contracts as of today. The `data` of GET, POST, PATCH and DELETE. */
export const Customer = t.Object(
  {
    id: t.String(),
    external_id: nullable(t.String()),
    name: t.String(),
    domain: nullable(t.String()),
    email: nullable(t.String()),
    status: enumOf(CUSTOMER_STATUSES),
    churned_at: nullable(day),
    segment: nullable(t.String()),
    country: nullable(t.String()),
    currency,
    csm: nullable(
      t.Object({
        name: t.Optional(nullable(t.String())),
        email: t.Optional(nullable(t.String())),
        phone: t.Optional(nullable(t.String())),
        slack_user_id: t.Optional(nullable(t.String())),
      }),
    ),
    arr: t.Integer({
      description:
        'Annual recurring revenue in minor units, from the contracts that count today (a cancelled contract counts until its end_date)',
    }),
    mrr: t.Integer({ description: 'arr / 12, in minor units' }),
    renewal_date: t.Union([day, t.Null()], {
      description: 'The earliest end of a contract that counts today; when renewing is false, the last day of service',
    }),
    renewing: t.Union([t.Boolean(), t.Null()], {
      description: 'false when notice was given on the contract ending on renewal_date (service ends then); null without a renewal_date',
    }),
    churn_risk: nullable(enumOf(RISK_BANDS)),
    metadata,
    created_at: instant,
    updated_at: instant,
    deleted_at: nullable(instant),
  },
  { additionalProperties: false },
);
