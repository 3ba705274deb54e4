// GET /api/contracts and GET /api/contracts/:id: the caller's organisation's contracts, newest
// first, each with its annualised ARR.
import { Elysia } from 'elysia';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { listResponse } from '../../lib/list-response.ts';
import { authPlugin } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { ContractParams, ListContractsQuery } from './model.ts';
import { getContract, listContracts, presentContract } from './service.ts';

export function contractsModule(deps: { database: Database; states: RequestStates }) {
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/contracts' })
    .use(authPlugin(deps.states))
    .get(
      '/api/contracts',
      ({ principal, query, request, set }) =>
        listResponse({
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
                endingBefore: query.ending_before,
                endingAfter: query.ending_after,
                updatedSince: query.updated_since,
                includeDeleted: query.include_deleted,
              },
            }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentContract,
        }),
      { auth: true, query: ListContractsQuery },
    )
    .get('/api/contracts/:id', async ({ principal, params }) => ok(presentContract(await getContract(db, principal.org.id, params.id))), {
      auth: true,
      params: ContractParams,
    });
}
