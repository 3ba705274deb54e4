// `billing.sync`: a backfill run by the worker (sync.ts), started by POST
// /api/billing/connectors/:id/sync. The job carries the API bases and the rate, which the server
// that queued it was configured with; the API key stays sealed in the database and is opened here
// with SECRET_KEY. A worker that dies mid-way runs the job again: it resumes from the last page stored.
import { Type as t } from '@sinclair/typebox';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import { defineJobKind, enqueueJob } from './queue.ts';
import { presentSync, runBackfill, startSync, syncUnits, type SyncSettings } from './sync.ts';

export const syncSettingsOf = (config: Pick<Config, 'stripeApiBase' | 'chargebeeApiBase' | 'billingMaxRps'>): SyncSettings => ({
  stripeApiBase: config.stripeApiBase,
  chargebeeApiBase: config.chargebeeApiBase,
  maxRps: config.billingMaxRps,
});

export const billingSyncJob = defineJobKind({
  kind: 'billing.sync',
  payload: t.Object({
    syncId: t.String({ minLength: 1, maxLength: 100 }),
    stripeApiBase: t.String({ minLength: 1, maxLength: 500 }),
    chargebeeApiBase: t.String({ minLength: 1, maxLength: 500 }),
    maxRps: t.Number({ minimum: 1, maximum: 100 }),
    pageSize: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
  }),
  retry: { maxAttempts: 3 },
  units: syncUnits,
  handle: async (payload, ctx) => {
    const sync = await runBackfill({
      syncId: payload.syncId,
      settings: payload,
      // The worker thread is given SECRET_KEY with the actions' settings.
      secretKey: ctx.settings.actions.secretKey,
      run: (unit, args) => ctx.run(unit, args as never) as never,
    });
    return presentSync(sync);
  },
});

/** Starts (or resumes) the connector's sync and queues the job that runs it, in `db`'s transaction. */
export async function queueBillingSync(db: Db, args: { connectorId: string; orgId: string; settings: SyncSettings }) {
  const { sync, resumed } = await startSync(db, { connectorId: args.connectorId, orgId: args.orgId });
  const job = await enqueueJob(db, billingSyncJob, { syncId: sync.id, ...args.settings }, { orgId: sync.orgId, dedupeKey: sync.id });
  return { sync, resumed, jobId: job.id };
}
