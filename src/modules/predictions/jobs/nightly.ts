// Every night (PREDICTION_NIGHTLY_AT, UTC) every organisation with customers is retrained, judged
// and rescored: days pass (a renewal comes within the horizon, an invoice falls past due, labels
// become known) without any input changing. Fires once across all processes; each organisation's
// retrain is its own job (a queued one absorbs this one), and each retrain ends in a rescore.
import { Type as t } from '@sinclair/typebox';
import { queryText } from '../../../db/client.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';
import { enqueueJob } from '../../../queue/job-queue.ts';
import { trainJob } from './train.ts';

export const nightlyJob = defineJobKind({
  kind: 'predictions.nightly',
  payload: t.Object({}),
  // Read when the job loop starts, from the loop's settings.
  schedule: (settings) => ({ dailyAt: settings.predictions.nightlyAt }),
  retry: { maxAttempts: 3 },
  perform: async (db) => {
    // By organisation, a probe of its customers each: `select distinct org_id from customers` read
    // every customer of every tenant in one unit.
    const orgs = await queryText<{ org_id: string }>(
      db,
      `select o.id as org_id from organisations o where exists (select 1 from customers c where c.org_id = o.id and c.deleted_at is null) order by o.id`,
      [],
    );
    for (const { org_id: orgId } of orgs) await enqueueJob(db, trainJob, {}, { orgId, dedupeKey: 'train' });
    return { organisations: orgs.length };
  },
});
