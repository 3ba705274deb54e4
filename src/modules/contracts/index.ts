// GET /api/contracts and GET /api/contracts/:id: the caller's organisation's contracts, newest
// first, each with its annualised ARR.
// POST, PATCH and DELETE of /api/contracts are the record writes every ARR type shares
// (modules/records/writes.ts), declared here with what is contract-specific.
import { Elysia, t } from 'elysia';
import { ok } from '../../lib/envelope.ts';
import { utcToday } from '../../lib/today.ts';
import { listResponse } from '../../lib/list-response.ts';
import type { ListCache } from '../../lib/list-cache.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { recordWriteDeclarations, recordWriteRoutes, type RecordWrites, type RecordWriteDeps } from '../records/writes.ts';
import { Contract, ContractCreate, ContractParams, ContractPatch, ListContractsQuery } from './model.ts';
import { deleteContract, getContract, listContracts, patchContract, presentContract, writeContracts } from './service.ts';

/** POST, PATCH and DELETE of contracts (modules/records/writes.ts). */
const CONTRACT_WRITES: RecordWrites<typeof ContractCreate, typeof ContractPatch> = {
  noun: 'Contract',
  path: '/api/contracts',
  create: ContractCreate,
  patch: ContractPatch,
  params: ContractParams,
  record: Contract,
  write: writeContracts,
  update: patchContract,
  remove: deleteContract,
  show: async (db, orgId, id) => presentContract(await getContract(db, orgId, id, utcToday(), { includeDeleted: true })),
};

/** The contract routes: what each needs of a caller, and what it answers. */
export const CONTRACT_ROUTES = {
  list: {
    method: 'GET',
    path: CONTRACT_WRITES.path,
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: t.Array(Contract),
    summary: "The organisation's contracts, newest first",
  },
  get: {
    method: 'GET',
    path: `${CONTRACT_WRITES.path}/:id`,
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: Contract,
    summary: 'A contract, by id or ext:<external_id>',
  },
  ...recordWriteDeclarations(CONTRACT_WRITES),
} as const satisfies Record<string, RouteDeclaration>;

export function contractsModule(deps: RecordWriteDeps & { listCache: ListCache }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/contracts' })
    .get(
      CONTRACT_ROUTES.list.path,
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
              today: utcToday(),
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
    .get(
      CONTRACT_ROUTES.get.path,
      async ({ request, params }) => ok(presentContract(await getContract(db, principalOf(request).org.id, params.id, utcToday()))),
      {
        params: ContractParams,
        record: Contract,
      },
    )
    .use(recordWriteRoutes(CONTRACT_WRITES, deps));
}
