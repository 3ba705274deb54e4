// GET /api/invoices and GET /api/invoices/:id: the caller's organisation's invoices, newest first,
// each with how many days it is past due today (UTC).
import { Elysia } from 'elysia';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { listResponse } from '../../lib/list-response.ts';
import type { ListCache } from '../../lib/list-cache.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { utcToday } from '../../lib/today.ts';
import { InvoiceParams, ListInvoicesQuery } from './model.ts';
import { getInvoice, listInvoices, presentInvoice } from './service.ts';

export function invoicesModule(deps: { database: Database; states: RequestStates; listCache: ListCache }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/invoices' })
    .get(
      '/api/invoices',
      ({ query, request, set }) => {
        const principal = principalOf(request);
        return listResponse({
          cached: { cache: deps.listCache, db, orgId: principal.org.id },
          request,
          set,
          known: Object.keys(ListInvoicesQuery.properties),
          limit: query.limit,
          sort: 'created_at',
          fetch: (limit) =>
            listInvoices(db, {
              orgId: principal.org.id,
              today: utcToday(),
              limit,
              cursor: query.cursor,
              filters: {
                customerId: query.customer_id,
                contractId: query.contract_id,
                status: query.status,
                currency: query.currency,
                overdue: query.overdue,
                issuedAfter: query.issued_after,
                issuedBefore: query.issued_before,
                updatedSince: query.updated_since,
                includeDeleted: query.include_deleted,
              },
            }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentInvoice,
        });
      },
      { query: ListInvoicesQuery },
    )
    .get('/api/invoices/:id', async ({ request, params }) => ok(presentInvoice(await getInvoice(db, principalOf(request).org.id, params.id, utcToday()))), {
      params: InvoiceParams,
    });
}
