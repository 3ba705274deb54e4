// The job queue as billing uses it: the one file here that imports it, so moving the queue touches
// one import list.
export { defineJobKind, PermanentJobError } from '../../jobs/kind.ts';
export { enqueueJob } from '../../jobs/queue.ts';
