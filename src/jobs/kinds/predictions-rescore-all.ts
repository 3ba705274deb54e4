// Every night, every organisation with customers is rescored: days pass (a renewal comes within the
// horizon, an invoice falls past due) without any input changing. Fires once across all processes.
import { t } from 'elysia';
import { queryText } from '../../db/client.ts';
import { defineJobKind } from '../kind.ts';
import { enqueueJob } from '../queue.ts';
import { recomputePredictionsJob } from './predictions-recompute.ts';

export const rescoreAllJob = defineJobKind({
  kind: 'predictions.rescore-all',
  payload: t.Object({}),
  schedule: { dailyAt: '02:00' },
  retry: { maxAttempts: 3 },
  perform: async (db) => {
    const orgs = await queryText<{ org_id: string }>(db, `select distinct org_id from customers where deleted_at is null`, []);
    // One job per organisation: each commits on its own, and a queued whole recompute absorbs this one.
    for (const { org_id: orgId } of orgs) await enqueueJob(db, recomputePredictionsJob, {}, { orgId, dedupeKey: 'all' });
    return { organisations: orgs.length };
  },
});
