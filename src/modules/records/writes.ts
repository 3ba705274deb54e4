// The write routes every ARR record type has, beyond the customer's read-only interface, in the same
// envelope (docs/arr-data.md "Writing"):
//   POST   <path>       create, or update the record with this external_id (201 created, 200
//                       updated or unchanged); Idempotency-Key replays the first answer for 24 h
//   PATCH  <path>/:id   change some fields (null clears a nullable one)
//   DELETE <path>/:id   soft delete; answers the tombstone
// `:id` is an id or `ext:<external_id>`, as for reads. Each request is one transaction. A record
// type's module declares what differs (its fields, service and wording) and mounts these routes;
// their declarations (recordWriteDeclarations) are made from the same description.
import type { Static, TObject, TSchema, TString } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database, Db } from '../../db/client.ts';
import { transaction } from '../../db/transaction.ts';
import type { PatchOutcome, RowOutcome } from '../../db/upsert.ts';
import { ok } from '../../lib/envelope.ts';
import { notFound } from '../../lib/errors.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { jsonBody } from '../../plugins/body.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { answerOnce, idempotencyKeyOf, requestFingerprint } from '../idempotency/service.ts';

/** What the write routes need to know of one record type. */
export interface RecordWrites<Create extends TSchema, Patch extends TSchema> {
  /** As in messages: "Customer cus_… not found". */
  noun: string;
  path: string;
  create: Create;
  patch: Patch;
  /** `:id`: an id or `ext:<external_id>`. */
  params: TObject<{ id: TString }>;
  /** The record as the API shows it: every write answers it. */
  record: TSchema;
  write: (db: Db, orgId: string, rows: { index: number; input: Static<Create> }[]) => Promise<RowOutcome[]>;
  update: (db: Db, orgId: string, ref: string, patch: Static<Patch>) => Promise<PatchOutcome>;
  remove: (db: Db, orgId: string, ref: string) => Promise<string | null>;
  /** The record as the API shows it (deleted ones too: a DELETE answers the tombstone). */
  show: (db: Db, orgId: string, id: string) => Promise<unknown>;
}

export interface RecordWriteDeps {
  database: Database;
  states: RequestStates;
  config: Config;
}

/** The write routes of one record type: key-authenticated, counted on the organisation, JSON
 * bodies within the API limit. DELETE reads (and ignores) a body too, as it always has. */
export function recordWriteDeclarations(kind: Pick<RecordWrites<TSchema, TSchema>, 'noun' | 'path' | 'record'>) {
  const write = { auth: 'key', counted: 'organisation', body: 'api', response: kind.record } as const;
  const noun = kind.noun.toLowerCase();
  return {
    create: { ...write, method: 'POST', path: kind.path, summary: `Create a ${noun}, or update the one with this external_id` },
    change: { ...write, method: 'PATCH', path: `${kind.path}/:id`, summary: `Change some fields of a ${noun}` },
    remove: { ...write, method: 'DELETE', path: `${kind.path}/:id`, summary: `Delete a ${noun} (soft); answers the tombstone` },
  } as const satisfies Record<string, RouteDeclaration>;
}

/** POST, PATCH and DELETE for one record type, each with the JSON body parser as its own parse
 * hook (one on the module's GETs would cost every read). */
export function recordWriteRoutes<Create extends TSchema, Patch extends TSchema>(kind: RecordWrites<Create, Patch>, deps: RecordWriteDeps) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  const routes = recordWriteDeclarations(kind);
  return new Elysia({ name: `revintel/writes${kind.path}` })
    .post(
      routes.create.path,
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
      { body: kind.create, parse: jsonBody(routes.create, deps.config) },
    )
    .patch(
      routes.change.path,
      async ({ request, params, body }) => {
        const orgId = principalOf(request).org.id;
        const ref = params.id;
        return transaction(db, async (tx) => {
          const outcome = await kind.update(tx, orgId, ref, body);
          if (outcome.outcome === 'not_found') throw notFound(`${kind.noun} ${ref}`);
          return ok(await kind.show(tx, orgId, outcome.id));
        });
      },
      { body: kind.patch, params: kind.params, parse: jsonBody(routes.change, deps.config) },
    )
    .delete(
      routes.remove.path,
      async ({ request, params }) => {
        const orgId = principalOf(request).org.id;
        const ref = params.id;
        return transaction(db, async (tx) => {
          const id = await kind.remove(tx, orgId, ref);
          if (!id) throw notFound(`${kind.noun} ${ref}`);
          return ok(await kind.show(tx, orgId, id));
        });
      },
      { params: kind.params, parse: jsonBody(routes.remove, deps.config) },
    );
}
