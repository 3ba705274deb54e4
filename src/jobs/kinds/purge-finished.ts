// Finished jobs are kept for a while to be looked at (`revintel jobs list`), then forgotten: done
// ones after 7 days, dead ones after 30 (time enough to notice and retry them).
import { t } from 'elysia';
import { queryText } from '../../db/client.ts';
import { defineJobKind } from '../kind.ts';

export const purgeFinishedJobs = defineJobKind({
  kind: 'jobs.purge-finished',
  payload: t.Object({}),
  schedule: { dailyAt: '03:30' },
  retry: { maxAttempts: 3 },
  perform: async (db) => {
    const rows = await queryText<{ state: string }>(
      db,
      `delete from jobs where (state = 'done' and finished_at < now() - interval '7 days') or (state = 'dead' and finished_at < now() - interval '30 days') returning state`,
      [],
    );
    return { done: rows.filter((r) => r.state === 'done').length, dead: rows.filter((r) => r.state === 'dead').length };
  },
});
