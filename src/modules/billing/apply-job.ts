// `billing.apply`: a connector's pending billing events applied to the records (apply.ts), in the
// job's own transaction, queued in the transaction that stored the events (at most one queued per
// connector). More than one run's worth queues the next run at once; a failure leaves the events
// pending and looks again in half a minute, until they are dead.
import { Type as t } from '@sinclair/typebox';
import type { Db } from '../../db/client.ts';
import { applyPendingEvents } from './apply.ts';
import { defineJobKind, enqueueJob } from './queue.ts';

const RETRY_FAILED_AFTER_SECONDS = 30;

export const billingApplyJob = defineJobKind({
  kind: 'billing.apply',
  // The server that queued it says where Stripe's API is, for re-reading ties (apply.ts).
  payload: t.Object({
    connectorId: t.String({ minLength: 1, maxLength: 100 }),
    stripeApiBase: t.Optional(t.String({ minLength: 1, maxLength: 500 })),
  }),
  retry: { maxAttempts: 5 },
  perform: async (db, payload, job, settings) => {
    const report = await applyPendingEvents(db, payload.connectorId, {
      stripeApiBase: payload.stripeApiBase,
      secretKey: settings.actions.secretKey,
    });
    if (report.remaining > 0) {
      await enqueueJob(db, billingApplyJob, payload, {
        orgId: job.orgId,
        dedupeKey: payload.connectorId,
        delaySeconds: report.failed > 0 && report.applied === 0 ? RETRY_FAILED_AFTER_SECONDS : 0,
      });
    }
    return report;
  },
});

/** Queues the connector's apply run (one queued at a time), in `db`'s transaction. */
export const queueBillingApply = (db: Db, connector: { id: string; orgId: string }, stripeApiBase?: string) =>
  enqueueJob(
    db,
    billingApplyJob,
    { connectorId: connector.id, ...(stripeApiBase ? { stripeApiBase } : {}) },
    { orgId: connector.orgId, dedupeKey: connector.id },
  );
