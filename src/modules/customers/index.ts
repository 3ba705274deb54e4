// GET /api/customers and GET /api/customers/:id (docs/arr-data.md "Reading"): the caller's organisation's
// customers, with their derived values as of today (UTC).
// POST, PATCH and DELETE of /api/customers are the record writes every ARR type shares
// (modules/records/writes.ts), declared here with what is customer-specific.
import { Elysia, t } from 'elysia';
import { ok } from '../../lib/envelope.ts';
import { listResponse } from '../../lib/list-response.ts';
import type { ListCache } from '../../lib/list-cache.ts';
import { utcToday } from '../../lib/today.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { recordWriteDeclarations, recordWriteRoutes, type RecordWrites, type RecordWriteDeps } from '../records/writes.ts';
import { Customer, CustomerCreate, CustomerParams, CustomerPatch, ListCustomersQuery } from './model.ts';
import { deleteCustomer, getCustomer, listCustomers, patchCustomer, presentCustomer, writeCustomers } from './service.ts';

/** POST, PATCH and DELETE of customers (modules/records/writes.ts). */
const CUSTOMER_WRITES: RecordWrites<typeof CustomerCreate, typeof CustomerPatch> = {
  noun: 'Customer',
  path: '/api/customers',
  create: CustomerCreate,
  patch: CustomerPatch,
  params: CustomerParams,
  record: Customer,
  write: writeCustomers,
  update: patchCustomer,
  remove: deleteCustomer,
  show: async (db, orgId, id) => presentCustomer(await getCustomer(db, orgId, id, utcToday(), { includeDeleted: true })),
};

/** The customer routes: what each needs of a caller, and what it answers. */
export const CUSTOMER_ROUTES = {
  list: {
    method: 'GET',
    path: CUSTOMER_WRITES.path,
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: t.Array(Customer),
    summary: "The organisation's customers, with their derived values",
  },
  get: {
    method: 'GET',
    path: `${CUSTOMER_WRITES.path}/:id`,
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: Customer,
    summary: 'A customer, by id or ext:<external_id>',
  },
  ...recordWriteDeclarations(CUSTOMER_WRITES),
} as const satisfies Record<string, RouteDeclaration>;

export function customersModule(deps: RecordWriteDeps & { listCache: ListCache }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/customers' })
    .get(
      CUSTOMER_ROUTES.list.path,
      ({ query, request, set }) => {
        const principal = principalOf(request);
        const sort = query.sort ?? 'created_at';
        return listResponse({
          cached: { cache: deps.listCache, db, orgId: principal.org.id },
          request,
          set,
          known: Object.keys(ListCustomersQuery.properties),
          limit: query.limit,
          sort,
          fetch: (limit) =>
            listCustomers(db, {
              orgId: principal.org.id,
              today: utcToday(),
              sort,
              limit,
              cursor: query.cursor,
              filters: {
                status: query.status,
                segment: query.segment,
                currency: query.currency,
                csmEmail: query.csm_email,
                q: query.q,
                updatedSince: query.updated_since,
                renewingBefore: query.renewing_before,
                includeDeleted: query.include_deleted,
              },
            }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentCustomer,
        });
      },
      { query: ListCustomersQuery },
    )
    .get(
      CUSTOMER_ROUTES.get.path,
      async ({ request, params }) => ok(presentCustomer(await getCustomer(db, principalOf(request).org.id, params.id, utcToday()))),
      { params: CustomerParams },
    )
    .use(recordWriteRoutes(CUSTOMER_WRITES, deps));
}
