// Brings an organisation's stored forecast features up to date (stored-features.ts): asked for by
// the forecast reads that found them out of date or customers marked (debounced), and for every
// organisation with stored features just after midnight UTC, when every customer's features move
// with the day (their windows, the days to renewal). In parts, each a unit of its own sized to
// stay near 50 ms (as jobs/month-sums.ts): the rebuild at 100,000 customers took 5 s as one
// transaction, all of it holding the embedded database.
import { Type as t } from '@sinclair/typebox';
import { queryText, type Db } from '../../../db/client.ts';
import { timed } from '../../../db/units-of-work.ts';
import { refreshSizedByTime } from '../../cfo-history/refresh-parts.ts';
import { utcToday } from '../../../lib/today.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';
import { enqueueJob } from '../../../queue/job-queue.ts';
import { FEATURES_PART_MAX, type FeaturesPartArgs, MARK_FEATURES_PART_MAX, refreshFeaturesPart } from '../stored-features.ts';

const PART_SIZING = { targetMs: 50, min: 5, max: FEATURES_PART_MAX };

const featuresUnits = {
  'features-part': timed((db: Db, args: FeaturesPartArgs) => refreshFeaturesPart(db, args)),
};

export const forecastFeaturesJob = defineJobKind({
  kind: 'cfo.forecast-features',
  // `partSize`: customers a part at most, `markSize` a marking part (tests, benches); absent: the
  // parts sized by time up to FEATURES_PART_MAX, the marking parts MARK_FEATURES_PART_MAX.
  payload: t.Object({
    graceDays: t.Integer({ minimum: 0 }),
    partSize: t.Optional(t.Integer({ minimum: 1, maximum: 10_000 })),
    markSize: t.Optional(t.Integer({ minimum: 1, maximum: 100_000 })),
  }),
  retry: { maxAttempts: 5 },
  units: featuresUnits,
  handle: async (payload, ctx) => {
    const orgId = ctx.job.orgId;
    if (!orgId) return { skipped: 'no organisation' };
    const today = utcToday();
    const { graceDays } = payload;
    const markLimit = payload.markSize ?? MARK_FEATURES_PART_MAX;
    return refreshSizedByTime(PART_SIZING, payload.partSize, (limit, after) =>
      ctx.run('features-part', { orgId, today, graceDays, limit, markLimit, after }),
    );
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
