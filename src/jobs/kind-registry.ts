// Every job kind this build runs. A new kind: its file (payload, work, retry, schedule) and a line
// here — in FITTING_JOB_KINDS if it fits models (seconds of CPU: the fitting thread runs it), else
// in MAIN_JOB_KINDS.
import type { JobKind } from '../queue/job-kind.ts';
import { idempotencyPurge } from '../modules/idempotency/jobs/purge.ts';
import { purgeFinishedJobs } from '../queue/jobs/purge-finished.ts';
import { recoverJobLeases } from '../queue/jobs/recover-leases.ts';
import { recomputePredictionsJob } from '../modules/predictions/jobs/recompute.ts';
import { recomputeStaleJob } from '../modules/predictions/jobs/recompute-stale.ts';
import { nightlyJob } from '../modules/predictions/jobs/nightly.ts';
import { sweepStaleJob } from '../modules/predictions/jobs/sweep-stale.ts';
import { trainJob } from '../modules/predictions/jobs/train.ts';
import { backtestJob } from '../modules/predictions/jobs/backtest.ts';
import { forecastBacktestJob } from '../modules/cfo-forecast/jobs/backtest.ts';
import { expireActionsJob } from '../modules/agent-actions/jobs/expire.ts';
import { chatSendJob } from '../modules/chat/platforms.ts';
import { whatsappInboundJob } from '../modules/whatsapp/inbound.ts';
import { whatsappBatchJob } from '../modules/whatsapp/batch.ts';
import { wakeActionsJob } from '../modules/agent-actions/jobs/wake.ts';
import { renewalsDueJob } from '../modules/agent-actions/jobs/renewals.ts';
import { executeActionJob } from '../modules/agent-actions/execute-job.ts';
import { deliverEventJob } from '../modules/agent-actions/outbox.ts';
import { reanalyseTicketsJob } from '../modules/tickets/reanalysis.ts';
import { monthSumsDailyJob, monthSumsJob } from '../modules/cfo-history/jobs/month-sums.ts';
import { forecastFeaturesDailyJob, forecastFeaturesJob } from '../modules/cfo-forecast/jobs/forecast-features.ts';
import { sweepCfoMarksJob } from '../modules/cfo-forecast/jobs/sweep-marks.ts';
import { BILLING_JOB_KINDS } from '../modules/billing/jobs.ts';

export const MAIN_JOB_KINDS: readonly JobKind[] = [
  idempotencyPurge,
  recoverJobLeases,
  purgeFinishedJobs,
  recomputePredictionsJob,
  recomputeStaleJob,
  nightlyJob,
  sweepStaleJob,
  executeActionJob,
  expireActionsJob,
  wakeActionsJob,
  renewalsDueJob,
  deliverEventJob,
  chatSendJob,
  whatsappInboundJob,
  whatsappBatchJob,
  reanalyseTicketsJob,
  monthSumsJob,
  monthSumsDailyJob,
  forecastFeaturesJob,
  forecastFeaturesDailyJob,
  sweepCfoMarksJob,
  ...BILLING_JOB_KINDS,
];

/** The service's upkeep: the kinds that fire on a schedule, each SQL in batches. On PostgreSQL the
 * main thread runs them, so that the worker thread is needed only when there is other work
 * (jobs/supervisor.ts); on the embedded database the worker thread does (their units run on the
 * main thread either way). */
export const UPKEEP_JOB_KINDS: readonly JobKind[] = MAIN_JOB_KINDS.filter((kind) => kind.schedule !== undefined);

/** The rest of MAIN_JOB_KINDS: what starts the worker thread on PostgreSQL. */
export const ON_DEMAND_JOB_KINDS: readonly JobKind[] = MAIN_JOB_KINDS.filter((kind) => kind.schedule === undefined);

export const FITTING_JOB_KINDS: readonly JobKind[] = [trainJob, backtestJob, forecastBacktestJob];

export const JOB_KINDS: readonly JobKind[] = [...MAIN_JOB_KINDS, ...FITTING_JOB_KINDS];
