// Brings an organisation's stored month sums up to date (stored-sums.ts): asked for by the history
// reads that found them out of date or customers marked (debounced, so a burst of writes makes one
// fold), and for every organisation with stored sums just after midnight UTC, when the month under
// way closes on a new day and every share must be made again. It runs in parts, each a unit of its
// own (one transaction, a bounded number of customers sized to stay near 50 ms): on the embedded
// database a transaction holds every request of every tenant, and the rebuild at 100,000 customers
// took 16 s as one. Between parts the reads stay exact (live while the marks are many).
import { Type as t } from '@sinclair/typebox';
import { queryText, type Db } from '../../../db/client.ts';
import { timed } from '../../../db/units-of-work.ts';
import { utcToday } from '../../../lib/today.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';
import { enqueueJob } from '../../../queue/job-queue.ts';
import { refreshSizedByTime } from '../refresh-parts.ts';
import { MARK_PART_MAX, refreshSumsPart, SUMS_PART_MAX, type SumsPartArgs } from '../stored-sums.ts';

const PART_SIZING = { targetMs: 50, min: 5, max: SUMS_PART_MAX };

const sumsUnits = {
  'sums-part': timed((db: Db, args: SumsPartArgs) => refreshSumsPart(db, args)),
};

export const monthSumsJob = defineJobKind({
  kind: 'cfo.month-sums',
  // `partSize`: customers a fold at most, `markSize` a marking part (tests, benches); absent: the
  // folds sized by time up to SUMS_PART_MAX, the marking parts MARK_PART_MAX.
  payload: t.Object({
    partSize: t.Optional(t.Integer({ minimum: 1, maximum: 10_000 })),
    markSize: t.Optional(t.Integer({ minimum: 1, maximum: 100_000 })),
  }),
  retry: { maxAttempts: 5 },
  units: sumsUnits,
  handle: async (payload, ctx) => {
    const orgId = ctx.job.orgId;
    if (!orgId) return { skipped: 'no organisation' };
    const today = utcToday();
    const markLimit = payload.markSize ?? MARK_PART_MAX;
    return refreshSizedByTime(PART_SIZING, payload.partSize, (limit, after) =>
      ctx.run('sums-part', { orgId, today, limit, markLimit, after }),
    );
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
