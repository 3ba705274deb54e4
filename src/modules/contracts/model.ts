import { t } from 'elysia';
import { BILLING_INTERVALS, CONTRACT_STATUSES } from '../../db/schema/index.ts';
import { count, currency, day, enumOf, externalId, instant, label, metadata, money, nullable } from '../../lib/record-fields.ts';

export const ListContractsQuery = t.Object({
  customer_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  currency: t.Optional(currency),
  status: t.Optional(t.Union(CONTRACT_STATUSES.map((s) => t.Literal(s)))),
  ending_before: t.Optional(day),
  ending_after: t.Optional(day),
  updated_since: t.Optional(instant),
  include_deleted: t.Optional(t.BooleanString()),
  limit: t.Optional(t.String()),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
});
export type ListContractsQuery = typeof ListContractsQuery.static;

export const ContractParams = t.Object({ id: t.String({ minLength: 1, maxLength: 300 }) });

/** A contract's writable fields (docs/arr-data.md). Its customer is named by `customer_id` or
 * `customer_external_id`; `currency` defaults to the customer's and may not differ from it. */
const contractFields = {
  external_id: t.Optional(nullable(externalId)),
  customer_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  customer_external_id: t.Optional(externalId),
  name: label(),
  status: t.Optional(enumOf(CONTRACT_STATUSES)),
  start_date: day,
  end_date: t.Optional(nullable(day)),
  auto_renew: t.Optional(t.Boolean()),
  billing_interval: enumOf(BILLING_INTERVALS),
  amount: money,
  currency: t.Optional(currency),
  seats: t.Optional(nullable(count(2_147_483_647))),
  /** The day the customer gave notice (when it takes effect is end_date); today's when the status
   * becomes cancelled without one. Only a cancelled or ended contract has one. */
  cancelled_at: t.Optional(nullable(day)),
  metadata: t.Optional(metadata),
};

export const ContractCreate = t.Object(contractFields, { additionalProperties: false });
export type ContractCreate = typeof ContractCreate.static;
export const ContractPatch = t.Partial(t.Object(contractFields, { additionalProperties: false }));
export type ContractPatch = typeof ContractPatch.static;

/** A contract as the API shows it (presentContract), with its annualised value. The `data` of GET,
 * POST, PATCH and DELETE. */
export const Contract = t.Object(
  {
    id: t.String(),
    external_id: nullable(t.String()),
    customer_id: t.String(),
    name: t.String(),
    status: enumOf(CONTRACT_STATUSES),
    start_date: day,
    end_date: nullable(day),
    auto_renew: t.Boolean(),
    billing_interval: enumOf(BILLING_INTERVALS),
    amount: t.Integer(),
    currency,
    seats: nullable(t.Integer()),
    cancelled_at: nullable(day),
    arr: t.Integer({ description: 'amount annualised by billing_interval, in minor units' }),
    counts_today: t.Boolean({
      description:
        "Whether its arr counts in the customer's today: started, not a draft, and not past its end_date (a cancelled contract counts until then)",
    }),
    metadata,
    created_at: instant,
    updated_at: instant,
    deleted_at: nullable(instant),
  },
  { additionalProperties: false },
);
