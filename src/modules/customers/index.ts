// GET /api/customers and GET /api/customers/:id (interface spec §4): the caller's organisation's
// customers, with their derived values as of today (UTC).
import { Elysia } from 'elysia';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageOf } from '../../lib/pagination.ts';
import { parseLimit, refuseUnknownParams } from '../../lib/query.ts';
import { authPlugin } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { CustomerParams, ListCustomersQuery } from './model.ts';
import { getCustomer, listCustomers, presentCustomer } from './service.ts';

/** The day derived values are computed for: today in UTC. */
export const utcToday = () => new Date().toISOString().slice(0, 10);

export function customersModule(deps: { database: Database; states: RequestStates }) {
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/customers' })
    .use(authPlugin(deps.states))
    .get(
      '/api/customers',
      async ({ principal, query, request, set }) => {
        refuseUnknownParams(request.url, Object.keys(ListCustomersQuery.properties));
        const sort = query.sort ?? 'created_at';
        const limit = parseLimit(query.limit, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
        const rows = await listCustomers(db, {
          orgId: principal.org.id,
          today: utcToday(),
          sort,
          limit,
          cursor: query.cursor,
          filters: {
            status: query.status,
            segment: query.segment,
            csmEmail: query.csm_email,
            q: query.q,
            updatedSince: query.updated_since,
            renewingBefore: query.renewing_before,
            includeDeleted: query.include_deleted,
          },
        });
        const page = pageOf(
          rows,
          limit,
          sort,
          (row) => ({ value: typeof row.sort_value === 'bigint' ? String(row.sort_value) : row.sort_value, id: row.id }),
          presentCustomer,
          request.url,
        );
        if (page.link) set.headers.link = page.link;
        return ok(page.data, page.meta);
      },
      { auth: true, query: ListCustomersQuery },
    )
    .get(
      '/api/customers/:id',
      async ({ principal, params }) => ok(presentCustomer(await getCustomer(db, principal.org.id, params.id, utcToday()))),
      { auth: true, params: CustomerParams },
    );
}
