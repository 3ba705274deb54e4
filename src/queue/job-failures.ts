// What becomes of a job that failed: dead at once when no retry can fix the failure, dead on its
// last attempt, else back to the queue after the kind's back-off. Kept beside the queue rather than
// in the loop that applies it, because a kind's own handler asks the same question (is this my last
// attempt? then close my record) and kinds live in the feature modules, below the loops.
import { isRefusedData } from '../db/sqlstate.ts';
import { messageOf } from '../lib/errors.ts';
import { backoffSeconds, retryPolicyOf, type JobInfo, type JobKind } from './job-kind.ts';
import type { ClaimedJob, JobOutcome } from './job-queue.ts';

/** Whether no retry can fix `error`: a PermanentJobError (by name: it may have crossed a thread) or
 * data the database refuses. */
const isPermanentJobFailure = (error: unknown) => (error instanceof Error && error.name === 'PermanentJobError') || isRefusedData(error);

/** The outcome of a job that failed with `error` on its `attempts`-th attempt. */
export function failedJobOutcome(
  kind: JobKind,
  job: Pick<ClaimedJob, 'id' | 'attempts' | 'maxAttempts'>,
  error: unknown,
  now: number,
  random: () => number = Math.random,
): JobOutcome {
  const message = messageOf(error);
  if (isPermanentJobFailure(error)) return { id: job.id, state: 'dead', error: `${message} (permanent: not retried)` };
  if (job.attempts >= job.maxAttempts)
    return { id: job.id, state: 'dead', error: `${message} (attempt ${job.attempts} of ${job.maxAttempts})` };
  const delayMs = backoffSeconds(retryPolicyOf(kind), job.attempts, random) * 1000;
  return {
    id: job.id,
    state: 'queued',
    runAt: new Date(now + delayMs).toISOString(),
    error: `${message} (attempt ${job.attempts} of ${job.maxAttempts})`,
  };
}

/** Whether this failure is the job's last (a handler that keeps a record of its own closes it). */
export const isLastFailure = (kind: JobKind, job: Pick<JobInfo, 'id' | 'attempts'>, error: unknown) =>
  failedJobOutcome(kind, { ...job, maxAttempts: retryPolicyOf(kind).maxAttempts }, error, 0).state === 'dead';
