import { t } from 'elysia';
import { CONTRACT_STATUSES } from '../../db/schema/index.ts';

export const ListContractsQuery = t.Object({
  customer_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  status: t.Optional(t.Union(CONTRACT_STATUSES.map((s) => t.Literal(s)))),
  ending_before: t.Optional(t.String({ format: 'date' })),
  ending_after: t.Optional(t.String({ format: 'date' })),
  updated_since: t.Optional(t.String({ format: 'date-time' })),
  include_deleted: t.Optional(t.BooleanString()),
  limit: t.Optional(t.String()),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
});
export type ListContractsQuery = typeof ListContractsQuery.static;

export const ContractParams = t.Object({ id: t.String({ minLength: 1, maxLength: 300 }) });
