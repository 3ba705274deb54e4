// Billing's job kinds, listed once for the build's registry.
import { billingApplyJob } from './apply-job.ts';
import { billingSyncJob } from './sync-job.ts';

export const BILLING_JOB_KINDS = [billingApplyJob, billingSyncJob];
