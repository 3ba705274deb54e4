// Every job kind this build runs. A new kind: its file (payload, work, retry, schedule) and a line
// here.
import type { JobKind } from './kind.ts';
import { idempotencyPurge } from './kinds/idempotency-purge.ts';
import { purgeFinishedJobs } from './kinds/purge-finished.ts';
import { recoverJobLeases } from './kinds/recover-leases.ts';
import { recomputePredictionsJob } from './kinds/predictions-recompute.ts';
import { recomputeStaleJob } from './kinds/predictions-recompute-stale.ts';
import { rescoreAllJob } from './kinds/predictions-rescore-all.ts';
import { sweepStaleJob } from './kinds/predictions-sweep-stale.ts';

export const JOB_KINDS: readonly JobKind[] = [idempotencyPurge, recoverJobLeases, purgeFinishedJobs, recomputePredictionsJob, recomputeStaleJob, rescoreAllJob, sweepStaleJob];
