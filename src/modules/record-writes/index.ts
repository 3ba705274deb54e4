// Writes to the ARR records (README "Writing"), beyond the customer's read-only interface, in the
// same envelope:
//   POST   /api/customers|contracts|invoices       create, or update the record with this external_id
//                                                  (201 created, 200 updated or unchanged);
//                                                  Idempotency-Key replays the first answer for 24 h
//   PATCH  /api/customers|contracts|invoices/:id   change some fields (null clears a nullable one)
//   DELETE /api/customers|contracts|invoices/:id   soft delete; answers the tombstone
// `:id` is an id or `ext:<external_id>`, as for reads. Each request is one transaction.
//
// The three record types share these routes' shape; what differs (fields, references, rules) is in
// each type's model and service. One Elysia instance for all three, because the body parser is a
// named plugin that Elysia would install only once.
import { Elysia, type TSchema } from 'elysia';
import type { Database, Db } from '../../db/client.ts';
import type { PatchOutcome, RowOutcome } from '../../db/upsert.ts';
import type { Config } from '../../config.ts';
import { ok } from '../../lib/envelope.ts';
import { notFound } from '../../lib/errors.ts';
import { utcToday } from '../../lib/today.ts';
import { bodyPlugin } from '../../plugins/body.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { answerOnce, idempotencyKeyOf, requestFingerprint } from '../idempotency/service.ts';
import { CustomerCreate, CustomerParams, CustomerPatch } from '../customers/model.ts';
import { deleteCustomer, getCustomer, patchCustomer, presentCustomer, writeCustomers } from '../customers/service.ts';
import { ContractCreate, ContractParams, ContractPatch } from '../contracts/model.ts';
import { deleteContract, getContract, patchContract, presentContract, writeContracts } from '../contracts/service.ts';
import { InvoiceCreate, InvoiceParams, InvoicePatch } from '../invoices/model.ts';
import { deleteInvoice, getInvoice, patchInvoice, presentInvoice, writeInvoices } from '../invoices/service.ts';

/** What the routes need to know of one record type. */
interface RecordKind<Input> {
  /** As in messages: "Customer cus_… not found". */
  noun: string;
  path: string;
  create: TSchema;
  patch: TSchema;
  params: TSchema;
  write: (db: Db, orgId: string, rows: { index: number; input: Input }[]) => Promise<RowOutcome[]>;
  update: (db: Db, orgId: string, ref: string, patch: Input) => Promise<PatchOutcome>;
  remove: (db: Db, orgId: string, ref: string) => Promise<string | null>;
  /** The record as the API shows it (deleted ones too: a DELETE answers the tombstone). */
  show: (db: Db, orgId: string, id: string) => Promise<unknown>;
}

const KINDS = [
  {
    noun: 'Customer',
    path: '/api/customers',
    create: CustomerCreate,
    patch: CustomerPatch,
    params: CustomerParams,
    write: writeCustomers,
    update: patchCustomer,
    remove: deleteCustomer,
    show: async (db, orgId, id) => presentCustomer(await getCustomer(db, orgId, id, utcToday(), { includeDeleted: true })),
  } satisfies RecordKind<CustomerPatch>,
  {
    noun: 'Contract',
    path: '/api/contracts',
    create: ContractCreate,
    patch: ContractPatch,
    params: ContractParams,
    write: writeContracts,
    update: patchContract,
    remove: deleteContract,
    show: async (db, orgId, id) => presentContract(await getContract(db, orgId, id, { includeDeleted: true })),
  } satisfies RecordKind<ContractPatch>,
  {
    noun: 'Invoice',
    path: '/api/invoices',
    create: InvoiceCreate,
    patch: InvoicePatch,
    params: InvoiceParams,
    write: writeInvoices,
    update: patchInvoice,
    remove: deleteInvoice,
    show: async (db, orgId, id) => presentInvoice(await getInvoice(db, orgId, id, utcToday(), { includeDeleted: true })),
  } satisfies RecordKind<InvoicePatch>,
] as RecordKind<unknown>[];

export function recordWritesModule(deps: { database: Database; states: RequestStates; config: Config }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  const app = new Elysia({ name: 'revintel/record-writes' }).use(bodyPlugin(deps.config));
  for (const kind of KINDS) {
    app
      .post(
        kind.path,
        async ({ request, body, set }) => {
          const orgId = principalOf(request).org.id;
          const answer = await answerOnce(
            db,
            { orgId, key: idempotencyKeyOf(request), fingerprint: requestFingerprint('POST', kind.path, body) },
            async (tx) => {
              const [outcome] = await kind.write(tx, orgId, [{ index: 0, input: body }]);
              if (outcome!.outcome === 'rejected') throw outcome!.error;
              return { status: outcome!.outcome === 'created' ? 201 : 200, body: ok(await kind.show(tx, orgId, outcome!.id)) };
            },
          );
          set.status = answer.status;
          if (answer.replayed) set.headers['idempotent-replayed'] = 'true';
          return answer.body;
        },
        { body: kind.create },
      )
      .patch(
        `${kind.path}/:id`,
        async ({ request, params, body }) => {
          const orgId = principalOf(request).org.id;
          const ref = (params as { id: string }).id;
          return db.transaction(async (txn) => {
            const tx = txn as unknown as Db;
            const outcome = await kind.update(tx, orgId, ref, body);
            if (outcome.outcome === 'not_found') throw notFound(`${kind.noun} ${ref}`);
            return ok(await kind.show(tx, orgId, outcome.id));
          });
        },
        { body: kind.patch, params: kind.params },
      )
      .delete(
        `${kind.path}/:id`,
        async ({ request, params }) => {
          const orgId = principalOf(request).org.id;
          const ref = (params as { id: string }).id;
          return db.transaction(async (txn) => {
            const tx = txn as unknown as Db;
            const id = await kind.remove(tx, orgId, ref);
            if (!id) throw notFound(`${kind.noun} ${ref}`);
            return ok(await kind.show(tx, orgId, id));
          });
        },
        { params: kind.params },
      );
  }
  return app;
}
