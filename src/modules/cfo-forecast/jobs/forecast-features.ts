// Brings an organisation's stored forecast features up to date (stored-features.ts): asked for by
// the forecast reads that found them out of date or customers marked (debounced), and for every
// organisation with stored features just after midnight UTC, when every customer's features move
// with the day (their windows, the days to renewal).
import { Type as t } from '@sinclair/typebox';
import { queryText } from '../../../db/client.ts';
import { utcToday } from '../../../lib/today.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';
import { enqueueJob } from '../../../queue/job-queue.ts';
import { refreshStoredFeatures } from '../stored-features.ts';

export const forecastFeaturesJob = defineJobKind({
  kind: 'cfo.forecast-features',
  payload: t.Object({ graceDays: t.Integer({ minimum: 0 }) }),
  retry: { maxAttempts: 5 },
  perform: async (db, payload, job) => {
    if (!job.orgId) return { skipped: 'no organisation' };
    return { done: await refreshStoredFeatures(db, { orgId: job.orgId, today: utcToday(), graceDays: payload.graceDays }) };
  },
});

export const forecastFeaturesDailyJob = defineJobKind({
  kind: 'cfo.forecast-features-daily',
  payload: t.Object({}),
  schedule: { dailyAt: '00:10' },
  retry: { maxAttempts: 3 },
  perform: async (db) => {
    const orgs = await queryText<{ org_id: string; grace_days: number }>(
      db,
      'select org_id, grace_days from cfo_features_state order by org_id',
      [],
    );
    for (const { org_id: orgId, grace_days: graceDays } of orgs)
      await enqueueJob(db, forecastFeaturesJob, { graceDays }, { orgId, dedupeKey: 'cfo.forecast-features' });
    return { organisations: orgs.length };
  },
});
