// What a request for fresh predictions queues, from the API or the CLI: a rescore of everyone (a
// queued one answers another), of the customers named, or a retrain that ends in a rescore.
import { queryText, type Db } from '../../db/client.ts';
import { recomputePredictionsJob } from './jobs/recompute.ts';
import { trainJob } from './jobs/train.ts';
import { enqueueJob, type Enqueued } from '../../queue/job-queue.ts';
import { AppError } from '../../lib/errors.ts';

/** Customers a queued rescore of some may name; past this it rescores everyone: one job whose
 * payload stays small, however many lists are asked for while it waits. */
export const MERGED_CUSTOMERS_MAX = 10_000;

export function requestRecompute(db: Db, args: { orgId: string; customerIds?: string[]; retrain?: boolean }): Promise<Enqueued> {
  if (args.retrain && args.customerIds)
    throw new AppError('validation_failed', 'Invalid request body: "retrain" rescores every customer; leave out "customer_ids"');
  if (args.retrain) return enqueueJob(db, trainJob, {}, { orgId: args.orgId, dedupeKey: 'train', priority: 5 });
  if (!args.customerIds) return enqueueJob(db, recomputePredictionsJob, {}, { orgId: args.orgId, dedupeKey: 'all', priority: 5 });
  return requestSomeRescored(db, args.orgId, args.customerIds);
}

const QUEUED = `select id, payload from jobs where kind = $1 and org_id = $2 and dedupe_key = $3 and state = 'queued' for update`;

/** A rescore of the customers named joins what is queued already, so asking again and again makes
 * one job, not a pile of them ahead of other organisations' work: a queued rescore of everyone
 * answers it; a queued list takes its ids in (and becomes a rescore of everyone past
 * MERGED_CUSTOMERS_MAX); else a new list is queued. A job already running does not count: what is
 * asked for meanwhile runs after it. */
async function requestSomeRescored(db: Db, orgId: string, customerIds: string[]): Promise<Enqueued> {
  const kind = recomputePredictionsJob.kind;
  // Twice at most: a queued list may be claimed between the look and the insert.
  for (let round = 0; round < 2; round++) {
    const [whole] = await queryText<{ id: string }>(db, QUEUED, [kind, orgId, 'all']);
    if (whole) return { id: whole.id, created: false };
    const [list] = await queryText<{ id: string; payload: { customerIds?: string[] } }>(db, QUEUED, [kind, orgId, 'ids']);
    if (list) {
      const queued = list.payload.customerIds;
      if (queued) {
        const union = [...new Set([...queued, ...customerIds])];
        const payload =
          union.length > MERGED_CUSTOMERS_MAX ? { ...list.payload, customerIds: undefined } : { ...list.payload, customerIds: union };
        if (union.length !== queued.length)
          await queryText(db, `update jobs set payload = $2::jsonb, updated_at = now() where id = $1`, [list.id, JSON.stringify(payload)]);
      }
      return { id: list.id, created: false };
    }
    const made = await enqueueJob(db, recomputePredictionsJob, { customerIds }, { orgId, dedupeKey: 'ids', priority: 5 });
    if (made.created) return made;
  }
  throw new Error(`${kind}: could not queue a rescore of some customers (raced twice)`);
}
