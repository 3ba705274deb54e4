// Every job kind this build runs. A new kind: its file (payload, work, retry, schedule) and a line
// here — in FITTING_JOB_KINDS if it fits models (seconds of CPU: the fitting thread runs it), else
// in MAIN_JOB_KINDS.
import type { JobKind } from './kind.ts';
import { idempotencyPurge } from './kinds/idempotency-purge.ts';
import { purgeFinishedJobs } from './kinds/purge-finished.ts';
import { recoverJobLeases } from './kinds/recover-leases.ts';
import { recomputePredictionsJob } from './kinds/predictions-recompute.ts';
import { recomputeStaleJob } from './kinds/predictions-recompute-stale.ts';
import { nightlyJob } from './kinds/predictions-nightly.ts';
import { sweepStaleJob } from './kinds/predictions-sweep-stale.ts';
import { trainJob } from './kinds/predictions-train.ts';
import { backtestJob } from './kinds/predictions-backtest.ts';
import { expireActionsJob } from './kinds/actions-expire.ts';
import { chatSendJob } from '../modules/slack/sender.ts';
import { whatsappInboundJob } from '../modules/whatsapp/inbound.ts';
import { whatsappBatchJob } from '../modules/whatsapp/batch.ts';
import { wakeActionsJob } from './kinds/actions-wake.ts';
import { renewalsDueJob } from './kinds/actions-renewals.ts';
import { executeActionJob } from '../modules/agent-actions/execute-job.ts';
import { deliverEventJob } from '../modules/agent-actions/outbox.ts';
import { reanalyseTicketsJob } from '../modules/tickets/reanalysis.ts';
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
  ...BILLING_JOB_KINDS,
];

export const FITTING_JOB_KINDS: readonly JobKind[] = [trainJob, backtestJob];

export const JOB_KINDS: readonly JobKind[] = [...MAIN_JOB_KINDS, ...FITTING_JOB_KINDS];
