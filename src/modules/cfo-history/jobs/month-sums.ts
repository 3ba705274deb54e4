// Brings an organisation's stored month sums up to date (stored-sums.ts): asked for by the history
// reads that found them out of date or customers marked (debounced, so a burst of writes makes one
// fold), and for every organisation with stored sums just after midnight UTC, when the month under
// way closes on a new day and every share must be made again.
import { Type as t } from '@sinclair/typebox';
import { queryText } from '../../../db/client.ts';
import { utcToday } from '../../../lib/today.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';
import { enqueueJob } from '../../../queue/job-queue.ts';
import { refreshStoredSums } from '../stored-sums.ts';

export const monthSumsJob = defineJobKind({
  kind: 'cfo.month-sums',
  payload: t.Object({}),
  retry: { maxAttempts: 5 },
  perform: async (db, _payload, job) => {
    if (!job.orgId) return { skipped: 'no organisation' };
    return { done: await refreshStoredSums(db, { orgId: job.orgId, today: utcToday() }) };
  },
});

export const monthSumsDailyJob = defineJobKind({
  kind: 'cfo.month-sums-daily',
  payload: t.Object({}),
  schedule: { dailyAt: '00:05' },
  retry: { maxAttempts: 3 },
  perform: async (db) => {
    const orgs = await queryText<{ org_id: string }>(db, 'select org_id from cfo_sums_state order by org_id', []);
    for (const { org_id: orgId } of orgs) await enqueueJob(db, monthSumsJob, {}, { orgId, dedupeKey: 'cfo.month-sums' });
    return { organisations: orgs.length };
  },
});
