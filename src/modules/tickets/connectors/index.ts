// Connectors over the API (docs/tickets.md "Connecting a platform"): list them with their webhook URLs,
// create one, set or rotate its webhook secret, and follow what arrived through it — the ticket
// events with their status, and dead letters sent back to the queue. A secret typed in is sealed
// here under SECRET_KEY, bound to its connector, and never shown again; a generated one is shown
// in this answer only. Every query is scoped to the caller's organisation.
import { transaction } from '../../../db/transaction.ts';
import { Elysia, t } from 'elysia';
import { and, eq } from 'drizzle-orm';
import { connectors } from '../../../db/schema/index.ts';
import type { Config } from '../../../config.ts';
import type { Database, Db } from '../../../db/client.ts';
import { ok } from '../../../lib/envelope.ts';
import { AppError, notFound } from '../../../lib/errors.ts';
import { newConnectorId, randomBase62 } from '../../../lib/ids.ts';
import { listResponse } from '../../../lib/list-response.ts';
import { decodeCursor } from '../../../lib/pagination.ts';
import { bodyLimit, optional, type RouteDeclaration } from '../../../lib/routes.ts';
import { sealSecret } from '../../../lib/secret-box.ts';
import { requestBody } from '../../../lib/validation.ts';
import { principalAccessor } from '../../../plugins/auth.ts';
import { jsonBody, readJsonBody } from '../../../plugins/body.ts';
import type { RequestStates } from '../../../plugins/request-state.ts';
import { recordAudit } from '../../audit/service.ts';
import { actorOf } from '../../keys/service.ts';
import { listOrgEvents, replayEvents, showEvent } from '../queue/service.ts';
import {
  ConnectorCreate,
  ConnectorParams,
  ConnectorView,
  EventParams,
  ListEventsQuery,
  SecretBody,
  SecretSet,
  TicketEvent,
} from './model.ts';
import { createConnector, DEFAULT_ROTATION_GRACE_SECONDS, listConnectors, presentConnector, rotateConnectorSecret } from './service.ts';

const read = { auth: 'key', counted: 'organisation', body: 'none' } as const;
const write = { auth: 'key', counted: 'organisation', body: 'api' } as const;

export const CONNECTOR_ROUTES = {
  list: {
    ...read,
    method: 'GET',
    path: '/api/connectors',
    response: t.Array(ConnectorView),
    summary: "The organisation's connectors and their webhook URLs",
  },
  create: {
    ...write,
    method: 'POST',
    path: '/api/connectors',
    response: ConnectorView,
    summary: 'Add a connector (201): a support platform that posts tickets to its webhook URL',
  },
  // Secrets are set by people: an admin signed in to the console (a leaked key must not be able
  // to point a connector's signature at a secret of its choosing).
  secret: {
    ...write,
    who: 'admin-session',
    method: 'POST',
    path: '/api/connectors/:id/secret',
    checkedBody: optional(SecretBody),
    response: SecretSet,
    summary: 'Set or rotate the webhook secret (the previous one stays valid for grace_seconds); a generated secret is answered once',
  },
  events: {
    ...read,
    method: 'GET',
    path: '/api/ticket-events',
    response: t.Array(TicketEvent),
    summary: 'Ticket events (webhook deliveries and imported tickets) newest first (filters connector_id, status)',
  },
  replay: {
    ...write,
    method: 'POST',
    path: '/api/ticket-events/:id/replay',
    response: TicketEvent,
    summary: 'Send a dead (or waiting) event back to the queue, due now',
  },
} as const satisfies Record<string, RouteDeclaration>;

export function connectorsModule(deps: {
  database: Database;
  states: RequestStates;
  config: Pick<Config, 'publicUrl' | 'secretKey' | 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook'>;
  wakeWorker?: (events: number) => void;
  /** This server's webhooks read the new secret at once (other servers within their cache's 2 s). */
  secretsChanged?: () => void;
}) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  const secretBody = requestBody(SecretBody);
  const secretBodyLimit = bodyLimit('api', deps.config);
  const inTransaction = <T>(work: (tx: Db) => Promise<T>) => transaction(db, work);
  const present = (row: Parameters<typeof presentConnector>[0]) => presentConnector(row, deps.config.publicUrl);

  /** The organisation's connector by id: another organisation's is not found, not forbidden. */
  const connectorOf = async (tx: Db, orgId: string, id: string) => {
    const [connector] = await tx
      .select()
      .from(connectors)
      .where(and(eq(connectors.orgId, orgId), eq(connectors.id, id)));
    if (!connector) throw notFound(`Connector ${id}`);
    return connector;
  };
  const sealingKey = () => {
    if (!deps.config.secretKey)
      throw new AppError('not_configured', 'SECRET_KEY is not set on this server: a webhook secret cannot be stored');
    return deps.config.secretKey;
  };

  return new Elysia({ name: 'revintel/connectors' })
    .get(CONNECTOR_ROUTES.list.path, async ({ request }) => {
      const rows = await listConnectors(db, { orgId: principalOf(request).org.id });
      return ok(rows.map(present));
    })
    .post(
      CONNECTOR_ROUTES.create.path,
      async ({ request, body, set }) => {
        const principal = principalOf(request);
        const input = body;
        const row = await inTransaction((tx) =>
          createConnector(tx, {
            id: newConnectorId(),
            org: principal.org.id,
            name: input.name,
            platform: input.platform,
            secretSealed: null,
            tokenHash: null,
            actor: actorOf(principal),
          }),
        );
        set.status = 201;
        return ok(present(row));
      },
      { body: ConnectorCreate, parse: jsonBody(CONNECTOR_ROUTES.create, deps.config) },
    )
    .post(
      CONNECTOR_ROUTES.secret.path,
      async ({ request, params }) => {
        const principal = principalOf(request);
        const input = secretBody((await readJsonBody(request, secretBodyLimit)) ?? {});
        const key = sealingKey();
        const generated = input.secret === undefined ? `whsec_${randomBase62(40)}` : null;
        const row = await inTransaction(async (tx) => {
          const current = await connectorOf(tx, principal.org.id, params.id);
          return rotateConnectorSecret(tx, {
            connector: current.id,
            secretSealed: sealSecret(generated ?? input.secret!, key, current.id),
            graceSeconds: input.grace_seconds ?? DEFAULT_ROTATION_GRACE_SECONDS,
            actor: actorOf(principal),
          });
        });
        deps.secretsChanged?.();
        return ok(generated ? { connector: present(row), secret: generated } : { connector: present(row) });
      },
      { params: ConnectorParams },
    )
    .get(
      CONNECTOR_ROUTES.events.path,
      ({ query, request, set }) =>
        listResponse({
          request,
          set,
          known: Object.keys(ListEventsQuery.properties),
          limit: query.limit,
          sort: 'received_at',
          fetch: (limit) => {
            const after = query.cursor ? decodeCursor(query.cursor, 'received_at', 'timestamp') : undefined;
            return listOrgEvents(db, {
              orgId: principalOf(request).org.id,
              connectorId: query.connector_id,
              status: query.status,
              limit: limit + 1,
              after: after ? { value: String(after.value), id: after.id } : undefined,
            });
          },
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: ({ sort_value: _sort, ...event }) => event,
        }),
      { query: ListEventsQuery },
    )
    .post(
      CONNECTOR_ROUTES.replay.path,
      async ({ request, params }) => {
        const principal = principalOf(request);
        const orgId = principal.org.id;
        const event = await inTransaction(async (tx) => {
          const result = await replayEvents(tx, { ids: [params.id], orgId });
          const refused = result.refused[0];
          if (refused?.status === 'not found') throw notFound(`Event ${params.id}`);
          if (refused) throw new AppError('conflict', `Event ${params.id} is ${refused.status}: only dead or waiting events are replayed`);
          await recordAudit(tx, {
            orgId,
            actor: actorOf(principal),
            action: 'event.replayed',
            targetType: 'ticket_event',
            targetId: params.id,
          });
          const { body: _body, headers: _headers, ...summary } = (await showEvent(tx, params.id))!;
          return summary;
        });
        deps.wakeWorker?.(1);
        return ok(event);
      },
      { params: EventParams },
    );
}
