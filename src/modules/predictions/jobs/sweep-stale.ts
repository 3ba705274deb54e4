// Record writes mark customers stale in the database itself (migration 0019), wherever they come
// from; every 15 s this asks for the debounced recompute of each organisation with marks (a no-op
// where one is queued already). Tickets ask for it directly (predictions/stale.ts): they are the
// signal that must show within seconds.
//
// The organisations come a batch per unit, each found by one probe of the marks' primary key
// (org_id, customer_id): `select distinct org_id` read every mark, and an import leaves one per
// customer it wrote (80,000 marks: 430 ms holding the embedded database, every 15 s).
import { Type as t } from '@sinclair/typebox';
import { queryText, type Db } from '../../../db/client.ts';
import { BatchSize, inBatches } from '../../../queue/batches.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';
import { markDebounced } from '../../../queue/job-queue.ts';
import { recomputeStaleJob } from './recompute-stale.ts';
import type { Settings } from '../../../settings.ts';

/** Up to $2 organisations with marks after $1, in order: a skip scan, each step the first
 * organisation after the last one (an index probe), however many marks each has. */
const ORGS_WITH_MARKS = `
  with recursive orgs(org_id) as (
    (select org_id from risk_input_changes where org_id > $1 order by org_id limit 1)
    union all
    select (select r.org_id from risk_input_changes r where r.org_id > orgs.org_id order by r.org_id limit 1) from orgs where orgs.org_id is not null
  )
  select org_id from orgs where org_id is not null limit $2`;

const units = {
  /** Asks for the recompute of up to `limit` organisations with marks after `after`. */
  ask: async (db: Db, args: { after: string; limit: number }, settings: Settings) => {
    const orgs = await queryText<{ org_id: string }>(db, ORGS_WITH_MARKS, [args.after, args.limit]);
    let asked = 0;
    for (const { org_id: orgId } of orgs)
      if ((await markDebounced(db, recomputeStaleJob, 'stale', settings.predictions.debounceSeconds, { orgId })).created) asked++;
    return { organisations: orgs.length, asked, last: orgs.at(-1)?.org_id ?? null };
  },
};

export const sweepStaleJob = defineJobKind({
  kind: 'predictions.sweep-stale',
  payload: t.Object({ batchSize: BatchSize }),
  schedule: { everySeconds: 15 },
  retry: { maxAttempts: 3 },
  units,
  handle: async (payload, ctx) => {
    let after = '';
    let asked = 0;
    const { total, batches } = await inBatches(async (limit) => {
      const batch = await ctx.run('ask', { after, limit });
      asked += batch.asked;
      after = batch.last ?? after;
      return batch.organisations;
    }, payload.batchSize);
    return { organisations: total, asked, batches };
  },
});
