// Billing connectors over the API (docs/billing.md "Connecting"): an admin signed in to the console
// lists, adds, changes and removes them and starts a backfill. Never with an API key (`who:
// 'admin-session'`): a leaked key must not point the organisation's ARR data at a billing account
// of its choosing. Secrets typed in are sealed here under SECRET_KEY, bound to the connector, and
// never shown again.
import { transaction } from '../../db/transaction.ts';
import { Elysia, t } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database, Db } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { sealSecret } from '../../lib/secret-box.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import { jsonBody } from '../../plugins/body.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { actorOf } from '../keys/service.ts';
import {
  connectorStatus,
  createBillingConnector,
  deleteBillingConnector,
  findBillingConnector,
  listBillingConnectors,
  newBillingConnectorId,
  presentBillingConnector,
  updateBillingConnector,
} from './connectors.ts';
import {
  BillingConnectorCreate,
  BillingConnectorParams,
  BillingConnectorPatch,
  BillingConnectorStatusView,
  BillingConnectorView,
  BillingEventCounts,
  BillingEventParams,
  BillingReplayView,
  BillingSyncView,
} from './model.ts';
import { billingConnectorStatus, replayDeadEvent } from './status.ts';
import { queueBillingSync, syncSettingsOf } from './sync-job.ts';
import { loadSync, presentSync } from './sync.ts';

const admins = { auth: 'key', counted: 'organisation', who: 'admin-session', tag: 'billing' } as const;

const ConnectorWithStatus = t.Object({
  connector: BillingConnectorView,
  events: BillingEventCounts,
  last_sync: t.Union([BillingSyncView, t.Null()]),
});

export const BILLING_ROUTES = {
  list: {
    ...admins,
    body: 'none',
    method: 'GET',
    path: '/api/billing/connectors',
    response: t.Array(BillingConnectorView),
    summary: "The organisation's billing connectors (Stripe, Chargebee) and their webhook URLs (admins)",
  },
  create: {
    ...admins,
    body: 'api',
    method: 'POST',
    path: '/api/billing/connectors',
    response: BillingConnectorView,
    summary: 'Add a billing connector (201); its secrets are sealed and never shown again (admins)',
  },
  show: {
    ...admins,
    body: 'none',
    method: 'GET',
    path: '/api/billing/connectors/:id',
    response: ConnectorWithStatus,
    summary: 'A billing connector, its events by state and its last backfill (admins)',
  },
  change: {
    ...admins,
    body: 'api',
    method: 'PATCH',
    path: '/api/billing/connectors/:id',
    response: BillingConnectorView,
    summary:
      'Rename a billing connector, change its mode or its secrets (a new webhook secret keeps the old one valid for grace_seconds) (admins)',
  },
  remove: {
    ...admins,
    body: 'none',
    method: 'DELETE',
    path: '/api/billing/connectors/:id',
    response: BillingConnectorView,
    summary: 'Remove a billing connector and its stored events; the records it wrote stay (admins)',
  },
  sync: {
    ...admins,
    body: 'none',
    method: 'POST',
    path: '/api/billing/connectors/:id/sync',
    response: BillingSyncView,
    summary: 'Start a backfill of customers, subscriptions and invoices (202), or answer the one running (admins)',
  },
  status: {
    ...admins,
    body: 'none',
    method: 'GET',
    path: '/api/billing/connectors/:id/status',
    response: BillingConnectorStatusView,
    summary:
      "A billing connector's status: events by state, the last one received, the lag of the oldest pending, the last backfill's outcome, its dead events (admins)",
  },
  replay: {
    ...admins,
    body: 'none',
    method: 'POST',
    path: '/api/billing/connectors/:id/events/:event_id/replay',
    response: BillingReplayView,
    summary:
      "Replay a dead billing event (by its bev_ id or the platform's event id) with the other dead events of its object: set pending again and applied by the job (202; 409 when not dead) (admins)",
    errors: [409],
  },
} as const satisfies Record<string, RouteDeclaration>;

export function billingModule(deps: {
  database: Database;
  states: RequestStates;
  config: Config;
  /** After a commit that queued jobs: the job loop looks at once. */
  wakeJobs?: () => void;
  /** After a change to a connector's secrets, mode or existence: the webhook's cache forgets it. */
  connectorsChanged?: () => void;
}) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  const inTransaction = <T>(work: (tx: Db) => Promise<T>) => transaction(db, work);
  const present = (row: Parameters<typeof presentBillingConnector>[0]) => presentBillingConnector(row, deps.config.publicUrl);
  const sealingKey = () => {
    if (!deps.config.secretKey)
      throw new AppError('not_configured', 'SECRET_KEY is not set on this server: billing secrets cannot be stored');
    return deps.config.secretKey;
  };

  return new Elysia({ name: 'revintel/billing' })
    .get(BILLING_ROUTES.list.path, async ({ request }) =>
      ok((await listBillingConnectors(db, { orgId: principalOf(request).org.id })).map(present)),
    )
    .post(
      BILLING_ROUTES.create.path,
      async ({ request, body, set }) => {
        const principal = principalOf(request);
        const input = body;
        const id = newBillingConnectorId();
        const seal = (secret: string | undefined) => (secret === undefined ? null : sealSecret(secret, sealingKey(), id));
        const row = await inTransaction((tx) =>
          createBillingConnector(tx, {
            id,
            org: principal.org.id,
            name: input.name,
            platform: input.platform,
            mode: input.mode,
            site: input.site ?? null,
            webhookSecretSealed: seal(input.webhook_secret),
            apiKeySealed: seal(input.api_key),
            basicAuthSealed: seal(input.basic_auth),
            actor: actorOf(principal),
          }),
        );
        deps.connectorsChanged?.(); // an id asked for before it existed is remembered as unknown
        set.status = 201;
        return ok(present(row));
      },
      { body: BillingConnectorCreate, parse: jsonBody(BILLING_ROUTES.create, deps.config) },
    )
    .get(
      BILLING_ROUTES.show.path,
      async ({ request, params }) => {
        const orgId = principalOf(request).org.id;
        const row = await findBillingConnector(db, params.id, { orgId });
        const status = await connectorStatus(db, row.id);
        const sync = status.lastSyncId ? (await loadSync(db, { syncId: status.lastSyncId }))?.sync : null;
        return ok({ connector: present(row), events: status.events, last_sync: sync ? presentSync(sync) : null });
      },
      { params: BillingConnectorParams },
    )
    .patch(
      BILLING_ROUTES.change.path,
      async ({ request, params, body }) => {
        const principal = principalOf(request);
        const input = body;
        const row = await inTransaction(async (tx) => {
          const current = await findBillingConnector(tx, params.id, { orgId: principal.org.id });
          const seal = (secret: string | undefined) => (secret === undefined ? undefined : sealSecret(secret, sealingKey(), current.id));
          return updateBillingConnector(tx, {
            connector: current.id,
            orgId: principal.org.id,
            name: input.name,
            mode: input.mode,
            webhookSecretSealed: seal(input.webhook_secret),
            graceSeconds: input.grace_seconds,
            apiKeySealed: seal(input.api_key),
            basicAuthSealed: seal(input.basic_auth),
            actor: actorOf(principal),
          });
        });
        deps.connectorsChanged?.();
        return ok(present(row));
      },
      { body: BillingConnectorPatch, params: BillingConnectorParams, parse: jsonBody(BILLING_ROUTES.change, deps.config) },
    )
    .delete(
      BILLING_ROUTES.remove.path,
      async ({ request, params }) => {
        const principal = principalOf(request);
        const row = await inTransaction((tx) =>
          deleteBillingConnector(tx, { connector: params.id, orgId: principal.org.id, actor: actorOf(principal) }),
        );
        deps.connectorsChanged?.();
        return ok(present(row));
      },
      { params: BillingConnectorParams },
    )
    .post(
      BILLING_ROUTES.sync.path,
      async ({ request, params, set }) => {
        const orgId = principalOf(request).org.id;
        const queued = await inTransaction(async (tx) => {
          const connector = await findBillingConnector(tx, params.id, { orgId });
          if (!connector.apiKeySealed)
            throw new AppError('unprocessable', `billing connector ${connector.name} has no API key: a backfill reads with one`);
          return queueBillingSync(tx, { connectorId: connector.id, orgId, settings: syncSettingsOf(deps.config) });
        });
        deps.wakeJobs?.();
        set.status = 202;
        return ok(presentSync(queued.sync, queued.jobId));
      },
      { params: BillingConnectorParams },
    )
    .get(
      BILLING_ROUTES.status.path,
      async ({ request, params }) => {
        const row = await findBillingConnector(db, params.id, { orgId: principalOf(request).org.id });
        return ok(await billingConnectorStatus(db, row, deps.config.publicUrl));
      },
      { params: BillingConnectorParams },
    )
    .post(
      BILLING_ROUTES.replay.path,
      async ({ request, params, set }) => {
        const principal = principalOf(request);
        const replayed = await inTransaction((tx) =>
          replayDeadEvent(tx, { connector: params.id, orgId: principal.org.id, eventRef: params.event_id, actor: actorOf(principal) }),
        );
        deps.wakeJobs?.();
        set.status = 202;
        return ok(replayed);
      },
      { params: BillingEventParams },
    );
}
