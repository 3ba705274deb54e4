// What a request for fresh predictions queues, from the API or the CLI: a rescore of everyone (a
// queued one answers another), of the customers named, or a retrain that ends in a rescore.
import type { Db } from '../../db/client.ts';
import { recomputePredictionsJob } from '../../jobs/kinds/predictions-recompute.ts';
import { trainJob } from '../../jobs/kinds/predictions-train.ts';
import { enqueueJob, type Enqueued } from '../../jobs/queue.ts';
import { AppError } from '../../lib/errors.ts';

export function requestRecompute(db: Db, args: { orgId: string; customerIds?: string[]; retrain?: boolean }): Promise<Enqueued> {
  if (args.retrain && args.customerIds) throw new AppError('validation_failed', 'Invalid request body: "retrain" rescores every customer; leave out "customer_ids"');
  if (args.retrain) return enqueueJob(db, trainJob, {}, { orgId: args.orgId, dedupeKey: 'train', priority: 5 });
  const { customerIds } = args;
  return enqueueJob(db, recomputePredictionsJob, customerIds ? { customerIds } : {}, { orgId: args.orgId, dedupeKey: customerIds ? null : 'all', priority: 5 });
}
