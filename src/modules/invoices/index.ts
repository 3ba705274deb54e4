// GET /api/invoices and GET /api/invoices/:id: the caller's organisation's invoices, newest first,
// each with how many days it is past due today (UTC).
// POST, PATCH and DELETE of /api/invoices are the record writes every ARR type shares
// (modules/records/writes.ts), declared here with what is invoice-specific.
import { Elysia, t } from 'elysia';
import { ok } from '../../lib/envelope.ts';
import { listResponse } from '../../lib/list-response.ts';
import type { ListCache } from '../../lib/list-cache.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { recordWriteDeclarations, recordWriteRoutes, type RecordWrites, type RecordWriteDeps } from '../records/writes.ts';
import { utcToday } from '../../lib/today.ts';
import { Invoice, InvoiceCreate, InvoiceParams, InvoicePatch, ListInvoicesQuery } from './model.ts';
import { deleteInvoice, getInvoice, listInvoices, patchInvoice, presentInvoice, writeInvoices } from './service.ts';

/** POST, PATCH and DELETE of invoices (modules/records/writes.ts). */
const INVOICE_WRITES: RecordWrites<typeof InvoiceCreate, typeof InvoicePatch> = {
  noun: 'Invoice',
  path: '/api/invoices',
  create: InvoiceCreate,
  patch: InvoicePatch,
  params: InvoiceParams,
  record: Invoice,
  write: writeInvoices,
  update: patchInvoice,
  remove: deleteInvoice,
  show: async (db, orgId, id) => presentInvoice(await getInvoice(db, orgId, id, utcToday(), { includeDeleted: true })),
};

/** The invoice routes: what each needs of a caller, and what it answers. */
export const INVOICE_ROUTES = {
  list: {
    method: 'GET',
    path: INVOICE_WRITES.path,
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: t.Array(Invoice),
    summary: "The organisation's invoices, newest first",
  },
  get: {
    method: 'GET',
    path: `${INVOICE_WRITES.path}/:id`,
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: Invoice,
    summary: 'An invoice, by id or ext:<external_id>',
  },
  ...recordWriteDeclarations(INVOICE_WRITES),
} as const satisfies Record<string, RouteDeclaration>;

export function invoicesModule(deps: RecordWriteDeps & { listCache: ListCache }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/invoices' })
    .get(
      INVOICE_ROUTES.list.path,
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
    .get(
      INVOICE_ROUTES.get.path,
      async ({ request, params }) => ok(presentInvoice(await getInvoice(db, principalOf(request).org.id, params.id, utcToday()))),
      {
        params: InvoiceParams,
        record: Invoice,
      },
    )
    .use(recordWriteRoutes(INVOICE_WRITES, deps));
}
