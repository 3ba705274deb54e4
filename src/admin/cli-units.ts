// What the CLI can ask for: the operator's commands as units of work. From a terminal on
// PostgreSQL they run on the CLI's own connection; on the embedded database while `serve` runs,
// they travel over the server's admin socket and the server runs each one whole (db/units-of-work.ts).
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../db/client.ts';
import { knownMigrations } from '../db/migrate.ts';
import { startBackup, stopBackup, type BackupSession } from '../db/backup.ts';
import { timed, type UnitRegistry } from '../db/units-of-work.ts';
import type { Plan } from '../db/schema/index.ts';
import { createOrg, listOrgs, updateOrg, type CreateOrgInput, type UpdateOrgInput } from '../modules/orgs/service.ts';
import { createKey, listKeys, revokeKey, type RevokeKeyInput } from '../modules/keys/service.ts';
import { createUser, issueLink, listUsers, presentUser, updateUser, type CreateUserInput } from '../modules/users/service.ts';
import { demoTruthPage, demoUnits, loadDemo, type DemoInput } from '../modules/demo/service.ts';
import { finishImport, importBatch, importTarget } from '../modules/imports/service.ts';
import {
  createConnector,
  findConnector,
  listConnectors,
  rotateConnectorSecret,
  updateConnector,
  type CreateConnectorInput,
  type RotateSecretInput,
  type UpdateConnectorInput,
} from '../modules/tickets/connectors/service.ts';
import { listEvents, replayEvents, showEvent, type ListEventsFilter } from '../modules/tickets/queue/service.ts';
import { findOrg } from '../modules/orgs/service.ts';
import { recordAudit } from '../modules/audit/service.ts';
import { notFound } from '../lib/errors.ts';
import type { JobState } from '../db/schema/index.ts';
import { listJobs, retryDeadJobs, showJob } from '../queue/job-queue.ts';
import { getPrediction, listPredictions, predictionsMeta, presentPrediction, presentPredictionItem } from '../modules/predictions/read.ts';
import type { Settings } from '../settings.ts';
import { backtestUnits, getBacktest, requestBacktest, type BacktestRequest } from '../modules/predictions/backtests.ts';
import { historyUnits } from '../modules/predictions/history.ts';
import { backtestJob } from '../modules/predictions/jobs/backtest.ts';
import { requestRecompute } from '../modules/predictions/requests.ts';
import { requestReanalysis } from '../modules/tickets/reanalysis.ts';
import { scoreChunk, type ChunkArgs } from '../modules/predictions/service.ts';
import type { RiskBand } from '../db/schema/index.ts';
import { endpointAdminUnits } from '../modules/agent-actions/endpoints.ts';
import { chatAdminUnits } from '../modules/chat/installations.ts';
import { cfoAdminUnits } from '../modules/cfo-history/admin.ts';
import { cfoForecastAdminUnits } from '../modules/cfo-forecast/admin.ts';
import { billingAdminUnits } from '../modules/billing/admin.ts';

/** A unit's transaction as a backup's session: `attempt` is a savepoint (a nested transaction). */
const backupSession = (db: Db): BackupSession => ({
  query: async (text) => rowsOf(await db.execute(sql.raw(text))),
  attempt: (work) => db.transaction(() => work()),
});

export const adminUnits = {
  'orgs.create': (db: Db, input: CreateOrgInput & { plan: Plan }) => createOrg(db, input),
  'orgs.list': (db: Db, _args: Record<string, never>) => listOrgs(db),
  'orgs.update': (db: Db, input: UpdateOrgInput) => updateOrg(db, input),
  'keys.create': (db: Db, input: { org: string; name: string; expiresAt: string | null; actor: string }) =>
    createKey(db, { ...input, expiresAt: input.expiresAt ? new Date(input.expiresAt) : null }),
  'keys.list': (db: Db, filter: { org?: string }) => listKeys(db, filter),
  'keys.revoke': (db: Db, input: RevokeKeyInput) => revokeKey(db, input),
  /** Console users: the sign-in link's token travels back once (its hash alone is stored). */
  // Users cross the socket as presented (never a password's hash).
  'users.create': async (db: Db, input: CreateUserInput) => {
    const { user, link } = await createUser(db, input);
    return { user: { ...presentUser(user), org_id: user.orgId }, token: link.token, link_expires_at: link.expiresAt.toISOString() };
  },
  'users.list': async (db: Db, filter: { org?: string }) =>
    (await listUsers(db, filter)).map((user) => ({ ...presentUser(user), org_id: user.orgId })),
  'users.disable': async (db: Db, input: { userId: string; actor: string }) => {
    const user = await updateUser(db, { userId: input.userId, disabled: true, actor: input.actor });
    return { ...presentUser(user), org_id: user.orgId };
  },
  'users.link': async (db: Db, input: { userId: string; actor: string }) => {
    const { user, link } = await issueLink(db, input);
    return { user: { ...presentUser(user), org_id: user.orgId }, token: link.token, link_expires_at: link.expiresAt.toISOString() };
  },
  /** Creates or refreshes the demo organisation: its ARR data is replaced, row for row the same for
   * the same seed and day, and a new key is made for it. One transaction: all or nothing (the
   * command's own database; through a running server, the demo.* units a step each). */
  'demo.load': (db: Db, input: DemoInput, settings: Settings) => loadDemo(db, input, settings.actions),
  ...demoUnits,
  /** `revintel backup`: the owner of the database marks the start and the end of an online backup;
   * the command copies the files between the two (db/backup.ts). */
  'backup.start': (db: Db, input: { pid: number }) => startBackup(backupSession(db), input.pid),
  'backup.stop': (db: Db, _input: Record<string, never>) => stopBackup(backupSession(db)),
  /** A page of the demo organisation's hidden truth (`revintel demo --truth`). */
  'demo.truth': (db: Db, input: Parameters<typeof demoTruthPage>[1]) => demoTruthPage(db, input),
  /** `revintel import`: the target organisation, then each batch of rows in its own transaction
   * (a crash keeps every committed batch), then fresh statistics. */
  'import.target': (db: Db, input: { org?: string }) => importTarget(db, input),
  'import.batch': timed((db: Db, input: Parameters<typeof importBatch>[1]) => importBatch(db, input)),
  'import.finish': (db: Db, input: Parameters<typeof finishImport>[1]) => finishImport(db, input),
  // Connector secrets arrive sealed by the CLI (cli/connectors.ts): no plaintext on the socket.
  'connectors.create': (db: Db, input: CreateConnectorInput) => createConnector(db, input),
  'connectors.list': (db: Db, filter: { org?: string }) => listConnectors(db, filter),
  'connectors.find': (db: Db, input: { connector: string; org?: string }) => findConnector(db, input.connector, input.org),
  'connectors.update': (db: Db, input: UpdateConnectorInput) => updateConnector(db, input),
  'connectors.rotate-secret': (db: Db, input: RotateSecretInput) => rotateConnectorSecret(db, input),
  'events.list': async (db: Db, filter: Omit<ListEventsFilter, 'orgId' | 'connectorId'> & { org?: string; connector?: string }) => {
    const orgId = filter.org ? (await findOrg(db, filter.org)).id : undefined;
    const connectorId = filter.connector ? (await findConnector(db, filter.connector, filter.org)).id : undefined;
    return listEvents(db, { orgId, connectorId, status: filter.status, limit: filter.limit });
  },
  'events.show': async (db: Db, input: { id: string }) => {
    const event = await showEvent(db, input.id);
    if (!event) throw notFound(`Event ${input.id}`);
    return event;
  },
  /** Dead events back to the queue (one by one, or every dead event of an org), audited. */
  'events.replay': async (db: Db, input: { ids?: string[]; allDead?: boolean; org?: string; actor: string }) => {
    const orgId = input.org ? (await findOrg(db, input.org)).id : undefined;
    const result = await replayEvents(db, input.ids ? { ids: input.ids } : { allDead: { orgId } });
    for (const id of result.replayed) {
      const event = await showEvent(db, id);
      await recordAudit(db, {
        orgId: event?.org_id ?? null,
        actor: input.actor,
        action: 'event.replayed',
        targetType: 'ticket_event',
        targetId: id,
      });
    }
    return result;
  },
  'jobs.list': async (db: Db, filter: { state?: JobState; kind?: string; org?: string; limit?: number }) => {
    const orgId = filter.org ? (await findOrg(db, filter.org)).id : undefined;
    return listJobs(db, { state: filter.state, kind: filter.kind, orgId, limit: filter.limit });
  },
  'jobs.show': async (db: Db, input: { id: string }) => {
    const job = await showJob(db, input.id);
    if (!job) throw notFound(`Job ${input.id}`);
    return job;
  },
  /** Dead jobs back to the queue with fresh attempts (by id, or every dead job of a kind), audited. */
  'jobs.retry': async (db: Db, input: { ids?: string[]; allDead?: boolean; kind?: string; actor: string }) => {
    const result = await retryDeadJobs(db, input.ids ? { ids: input.ids, now: new Date() } : { kind: input.kind, now: new Date() });
    for (const id of result.retried) {
      const job = await showJob(db, id);
      await recordAudit(db, {
        orgId: job?.org_id ?? null,
        actor: input.actor,
        action: 'job.retried',
        targetType: 'job',
        targetId: id,
        details: { kind: job?.kind },
      });
    }
    return result;
  },
  /** An organisation's churn predictions, riskiest ARR first, with the summary per currency. */
  'predictions.list': async (db: Db, input: { org?: string; risk?: RiskBand[]; limit: number }, settings: Settings) => {
    const org = await importTarget(db, { org: input.org });
    const filters = { risk: input.risk };
    const rows = await listPredictions(db, { orgId: org.id, filters, sort: '-arr_at_risk', limit: input.limit });
    return {
      items: rows.slice(0, input.limit).map(presentPredictionItem),
      meta: await predictionsMeta(db, org.id, filters, settings.predictions.horizonDays),
    };
  },
  'predictions.show': async (db: Db, input: { org?: string; customer: string }) => {
    const org = await importTarget(db, { org: input.org });
    return presentPrediction(await getPrediction(db, org.id, input.customer));
  },
  /** Queues a whole recompute of the organisation, or a retrain that ends in one (one queued at a time). */
  'predictions.recompute': async (db: Db, input: { org?: string; retrain?: boolean }) => {
    const org = await importTarget(db, { org: input.org });
    const job = await requestRecompute(db, { orgId: org.id, retrain: input.retrain });
    return { job_id: job.id, org_id: org.id, queued_already: !job.created };
  },
  /** Queues the re-analysis of the organisation's tickets by this build's intelligence (one queued at a time). */
  'tickets.reanalyze': async (db: Db, input: { org?: string }) => {
    const org = await importTarget(db, { org: input.org });
    const job = await requestReanalysis(db, org.id);
    return { job_id: job.id, org_id: org.id, queued_already: !job.created };
  },
  /** One chunk of a recompute (a command that scores in its own time, as the job's units do). */
  'predictions.score-chunk': timed((db: Db, args: ChunkArgs, settings: Settings) => scoreChunk(db, args, settings)),
  /** Queues a backtest for the running server's fitting thread (`queue`), or opens one the command
   * runs itself (the units below). */
  'predictions.backtest-request': async (
    db: Db,
    input: { org?: string; request: BacktestRequest; today: string; queue: boolean },
    settings: Settings,
  ) => {
    const org = await importTarget(db, { org: input.org });
    return {
      ...(await requestBacktest(
        db,
        input.queue ? backtestJob : null,
        { orgId: org.id, request: input.request, today: input.today, requestedBy: 'cli' },
        settings.predictions,
      )),
      org_id: org.id,
    };
  },
  'predictions.backtest-show': async (db: Db, input: { org?: string; id: string }) =>
    getBacktest(db, (await importTarget(db, { org: input.org })).id, input.id),
  ...historyUnits,
  ...endpointAdminUnits,
  ...chatAdminUnits,
  ...cfoAdminUnits,
  ...cfoForecastAdminUnits,
  ...billingAdminUnits,
  ...backtestUnits,
  /** What the running server has applied (it migrates at start). */
  'migrations.status': async (db: Db, _args: Record<string, never>) => {
    const [row] = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`));
    return { applied: row?.n ?? 0, known: knownMigrations() };
  },
} satisfies UnitRegistry;

export type AdminUnits = typeof adminUnits;

/** Units that change who may call the API or how much, or a webhook's sender: the server forgets
 * cached keys and connectors after them. */
export const CHANGES_ACCESS: ReadonlySet<keyof AdminUnits> = new Set([
  'orgs.update',
  'keys.revoke',
  'connectors.update',
  'connectors.rotate-secret',
  'billing.add',
  'billing.remove-named',
]);

/** Units that queue ticket events: the server's ticket loop looks for them at once. */
export const QUEUES_EVENTS: ReadonlySet<keyof AdminUnits> = new Set(['events.replay']);

/** Units that queue jobs: the server's worker looks for them at once. */
export const QUEUES_JOBS: ReadonlySet<keyof AdminUnits> = new Set([
  'jobs.retry',
  'demo.load',
  'demo.finish',
  'predictions.recompute',
  'predictions.backtest-request',
  'cfo.forecast-backtest-request',
  'outbox.retry',
  'tickets.reanalyze',
]);
