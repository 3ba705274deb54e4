// Reads the ARR history's month sums from the stored ones (stored-sums.ts) when they are as of
// today, and asks the job to bring them up to date when they are not or when customers are marked.
import { sql } from 'drizzle-orm';
import { queryRows } from '../../db/client.ts';
import { markDebounced } from '../../queue/job-queue.ts';
import { monthSums, parseSums, type SumsReader } from './history.ts';
import { monthSumsJob } from './jobs/month-sums.ts';
import { storedSumsSql } from './stored-sums.ts';

/** Beyond this many marked customers a read answers from the live query (kept per data version)
 * until the job has folded them in: at 100,000 demo customers a read with 10 marked took 45 ms,
 * with 1,000 about 550 ms, the live query about 2 s (bench:cfo, docs/cfo.md). */
export const MAX_MARKED_PER_READ = 1_000;

/** How long after a read that found marks the fold runs: a burst of writes makes one fold. */
export const FOLD_DEBOUNCE_S = 5;

/**
 * A SumsReader over the stored sums: exact whenever they are as of today (with the marked
 * customers recomputed), else `fallback`'s answer, asking the job to bring them up to date.
 */
export function storedSums(fallback: SumsReader = monthSums): SumsReader {
  return async (db, input) => {
    const [state] = await queryRows<{ as_of: string }>(
      db,
      sql`select as_of::text as as_of from cfo_sums_state where org_id = ${input.orgId}`,
    );
    if (!state || state.as_of !== input.today) {
      await markDebounced(db, monthSumsJob, 'cfo.month-sums', 0, { orgId: input.orgId });
      return fallback(db, input);
    }
    const marked = (
      await queryRows<{ customer_id: string }>(
        db,
        sql`select customer_id from cfo_sums_changes where org_id = ${input.orgId} limit ${MAX_MARKED_PER_READ + 1}`,
      )
    ).map((r) => r.customer_id);
    if (marked.length > 0) await markDebounced(db, monthSumsJob, 'cfo.month-sums', FOLD_DEBOUNCE_S, { orgId: input.orgId });
    if (marked.length > MAX_MARKED_PER_READ) return fallback(db, input);
    return parseSums(await queryRows<Record<string, unknown>>(db, storedSumsSql(input, marked)));
  };
}
