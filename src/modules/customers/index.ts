// GET /api/customers and GET /api/customers/:id (README "Reading"): the caller's organisation's
// customers, with their derived values as of today (UTC).
import { Elysia } from 'elysia';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { listResponse } from '../../lib/list-response.ts';
import type { ListCache } from '../../lib/list-cache.ts';
import { utcToday } from '../../lib/today.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { CustomerParams, ListCustomersQuery } from './model.ts';
import { getCustomer, listCustomers, presentCustomer } from './service.ts';

export function customersModule(deps: { database: Database; states: RequestStates; listCache: ListCache }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/customers' })
    .get(
      '/api/customers',
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
      '/api/customers/:id',
      async ({ request, params }) => ok(presentCustomer(await getCustomer(db, principalOf(request).org.id, params.id, utcToday()))),
      { params: CustomerParams },
    );
}
