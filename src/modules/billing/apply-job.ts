// `billing.apply`: a connector's pending billing events applied to the records (apply.ts), queued in
// the transaction that stored the events (at most one queued per connector). The worker runs it in
// parts, each its own transaction sized to a few tens of milliseconds (applyInParts), so a webhook's
// acknowledgement never waits long behind applying on the embedded database, and while the
// connector's webhooks arrive the parts wait (up to half a minute a run). A run that ends with
// events left pending (they failed) looks again in half a minute, until they are dead.
import { Type as t } from '@sinclair/typebox';
import { queryText, type Db } from '../../db/client.ts';
import { timed } from '../../db/units-of-work.ts';
import type { Settings } from '../../settings.ts';
import { type ApplyCursor, applyInParts, applyPendingEvents, webhookIngestBusy } from './apply.ts';
import { defineJobKind, enqueueJob, type JobInStatement, jobsQueuedInStatement, PermanentJobError } from './queue.ts';

const RETRY_FAILED_AFTER_SECONDS = 30;
const OTHER_RUN_RETRY_SECONDS = 1;

const ApplyPayload = t.Object({
  connectorId: t.String({ minLength: 1, maxLength: 100 }),
  // The server that queued it says where Stripe's API is, for re-reading ties (apply.ts).
  stripeApiBase: t.Optional(t.String({ minLength: 1, maxLength: 500 })),
  // Events a part at most (tests); absent: sized by time.
  partSize: t.Optional(t.Integer({ minimum: 1, maximum: 500 })),
});

export interface ApplyPartArgs {
  connectorId: string;
  stripeApiBase?: string;
  limit: number;
  after: ApplyCursor | null;
  freshOnly?: boolean;
}

/** One part of a pass, in its own transaction, timed in the database (db/units-of-work.ts). */
export const applyPart = timed((db: Db, args: ApplyPartArgs, settings: Settings) =>
  applyPendingEvents(db, args.connectorId, {
    limit: args.limit,
    after: args.after,
    freshOnly: args.freshOnly,
    stripeApiBase: args.stripeApiBase,
    secretKey: settings.actions.secretKey,
  }),
);

export const billingApplyJob = defineJobKind({
  kind: 'billing.apply',
  payload: ApplyPayload,
  retry: { maxAttempts: 5 },
  units: {
    'apply-part': applyPart,
    'ingest-busy': async (db: Db, args: { connectorId: string }) => ({ busy: await webhookIngestBusy(db, args.connectorId) }),
    'others-running': async (db: Db, args: { connectorId: string; jobId: string }) => {
      const [row] = await queryText<{ n: number }>(
        db,
        `select count(*)::int as n from jobs where kind = 'billing.apply' and state = 'running' and dedupe_key = $1 and id <> $2`,
        [args.connectorId, args.jobId],
      );
      return { others: row?.n ?? 0 };
    },
    'retry-later': async (
      db: Db,
      args: { connectorId: string; orgId: string; stripeApiBase?: string; delaySeconds: number },
    ): Promise<{ queued: true }> => {
      const job = await queueBillingApply(db, { id: args.connectorId, orgId: args.orgId }, args.stripeApiBase, args.delaySeconds);
      // A twin queued by a delivery meanwhile is due now: it waits as long too. Otherwise, while one
      // run went on, the twin was taken at once, found it running, was queued again as the next
      // delivery's twin… a job every few milliseconds, each four transactions on the database the
      // deliveries were waiting for.
      if (!job.created)
        await queryText(
          db,
          `update jobs set run_at = greatest(run_at, now() + make_interval(secs => $2)) where id = $1 and state = 'queued'`,
          [job.id, args.delaySeconds],
        );
      return { queued: true };
    },
  },
  handle: async (payload, ctx) => {
    const { connectorId, stripeApiBase } = payload;
    const orgId = ctx.job.orgId;
    if (!orgId) throw new PermanentJobError('billing.apply is queued for an organisation');
    // One run per connector at a time: a run's passes go on until nothing is pending, so events
    // stored meanwhile are its own, and two runs would share the database's time between them
    // (and wait for each other's parts). The job queued meanwhile looks again in a second, in case
    // the running one is already ending.
    if ((await ctx.run('others-running', { connectorId, jobId: ctx.job.id })).others > 0) {
      await ctx.run('retry-later', { connectorId, orgId, stripeApiBase, delaySeconds: OTHER_RUN_RETRY_SECONDS });
      return { applied: 0, failed: 0, dead: 0, remaining: 0, parts: 0, passes: 0, deferredMs: 0, waitedForAnotherRun: true };
    }
    const totals = await applyInParts((part) => ctx.run('apply-part', { connectorId, stripeApiBase, ...part }), {
      limit: payload.partSize,
      ingestBusy: async () => (await ctx.run('ingest-busy', { connectorId })).busy,
    });
    if (totals.remaining > 0) await ctx.run('retry-later', { connectorId, orgId, stripeApiBase, delaySeconds: RETRY_FAILED_AFTER_SECONDS });
    return { ...totals, waitedForAnotherRun: false };
  },
});

/** The connector's apply run as a job: keyed by the connector, so one is queued at a time. */
export const billingApplyOf = (connector: { id: string; orgId: string }, stripeApiBase?: string): JobInStatement<typeof ApplyPayload> => ({
  payload: { connectorId: connector.id, ...(stripeApiBase ? { stripeApiBase } : {}) },
  orgId: connector.orgId,
  dedupeKey: connector.id,
});

/** Queues the connector's apply run (one queued at a time), in `db`'s transaction. */
export function queueBillingApply(
  db: Db,
  connector: { id: string; orgId: string },
  stripeApiBase?: string,
  delaySeconds = 0,
): Promise<{ id: string; created: boolean }> {
  const { payload, orgId, dedupeKey } = billingApplyOf(connector, stripeApiBase);
  return enqueueJob(db, billingApplyJob, payload, { orgId, dedupeKey, delaySeconds });
}

/** The part of a statement that queues the apply runs of the connectors whose key satisfies
 * `only` (jobsQueuedInStatement; the key is the connector's id), from parameter `firstParam` on. */
export const billingApplyInStatement = (options: { firstParam: number; only: string }) => jobsQueuedInStatement(billingApplyJob, options);
