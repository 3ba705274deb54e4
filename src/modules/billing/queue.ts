// The job queue as billing uses it: the one file here that imports it, so moving the queue touches
// one import list.
export { defineJobKind, PermanentJobError } from '../../queue/job-kind.ts';
export { enqueueJob, type JobInStatement, jobsQueuedInStatement } from '../../queue/job-queue.ts';
