import { t } from 'elysia';
import { CUSTOMER_STATUSES } from '../../db/schema/index.ts';

export const CUSTOMER_SORTS = ['created_at', 'name', 'arr'] as const;
export type CustomerSort = (typeof CUSTOMER_SORTS)[number];

/** Every parameter GET /api/customers understands; anything else is a 400 naming it. */
export const ListCustomersQuery = t.Object(
  {
    status: t.Optional(t.Union(CUSTOMER_STATUSES.map((s) => t.Literal(s)))),
    segment: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    csm_email: t.Optional(t.String({ minLength: 3, maxLength: 320 })),
    q: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    updated_since: t.Optional(t.String({ format: 'date-time' })),
    renewing_before: t.Optional(t.String({ format: 'date' })),
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
