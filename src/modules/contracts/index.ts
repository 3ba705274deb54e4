// GET /api/contracts and GET /api/contracts/:id: the caller's organisation's contracts, newest
// first, each with its annualised ARR.
import { Elysia } from 'elysia';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { listResponse } from '../../lib/list-response.ts';
import type { ListCache } from '../../lib/list-cache.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { ContractParams, ListContractsQuery } from './model.ts';
import { getContract, listContracts, presentContract } from './service.ts';

export function contractsModule(deps: { database: Database; states: RequestStates; listCache: ListCache }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/contracts' })
    .get(
      '/api/contracts',
      ({ query, request, set }) => {
        const principal = principalOf(request);
        return listResponse({
          cached: { cache: deps.listCache, db, orgId: principal.org.id },
          request,
          set,
          known: Object.keys(ListContractsQuery.properties),
          limit: query.limit,
          sort: 'created_at',
          fetch: (limit) =>
            listContracts(db, {
              orgId: principal.org.id,
              limit,
              cursor: query.cursor,
              filters: {
                customerId: query.customer_id,
                status: query.status,
                currency: query.currency,
                endingBefore: query.ending_before,
                endingAfter: query.ending_after,
                updatedSince: query.updated_since,
                includeDeleted: query.include_deleted,
              },
            }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentContract,
        });
      },
      { query: ListContractsQuery },
    )
    .get('/api/contracts/:id', async ({ request, params }) => ok(presentContract(await getContract(db, principalOf(request).org.id, params.id))), {
      params: ContractParams,
    });
}
