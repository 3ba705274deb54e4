// Finished jobs are kept for a while to be looked at (`revintel jobs list`), then forgotten: done
// ones after 7 days, dead ones after 30 (time enough to notice and retry them). A batch per unit
// (queue/batches.ts): a day of a busy queue is tens of thousands of rows.
import { Type as t } from '@sinclair/typebox';
import { queryText, type Db } from '../../db/client.ts';
import { BatchSize, inBatches } from '../batches.ts';
import { defineJobKind } from '../job-kind.ts';

const PURGE = `
  delete from jobs where id in (
    select id from jobs
    where state in ('done', 'dead') and finished_at < now() - interval '7 days'
      and (state = 'done' or finished_at < now() - interval '30 days')
    limit $1)
  returning state`;

const units = {
  /** Up to `limit` jobs due to be forgotten, forgotten. */
  purge: async (db: Db, args: { limit: number }) => {
    const rows = await queryText<{ state: string }>(db, PURGE, [args.limit]);
    return { done: rows.filter((r) => r.state === 'done').length, dead: rows.filter((r) => r.state === 'dead').length };
  },
};

export const purgeFinishedJobs = defineJobKind({
  kind: 'jobs.purge-finished',
  payload: t.Object({ batchSize: BatchSize }),
  schedule: { dailyAt: '03:30' },
  retry: { maxAttempts: 3 },
  units,
  handle: async (payload, ctx) => {
    const purged = { done: 0, dead: 0 };
    const { batches } = await inBatches(async (limit) => {
      const batch = await ctx.run('purge', { limit });
      purged.done += batch.done;
      purged.dead += batch.dead;
      return batch.done + batch.dead;
    }, payload.batchSize);
    return { ...purged, batches };
  },
});
