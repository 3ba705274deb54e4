// Takes back jobs whose worker died: a lease that ran out, or an instance that stopped beating. Its
// own run is a job too: if the worker running it dies, the next firing takes that one back as well.
import { Type as t } from '@sinclair/typebox';
import { defineJobKind } from '../job-kind.ts';
import { recoverLeases } from '../job-queue.ts';

export const recoverJobLeases = defineJobKind({
  kind: 'jobs.recover-leases',
  payload: t.Object({}),
  schedule: { everySeconds: 15 },
  retry: { maxAttempts: 3 },
  perform: (db) => recoverLeases(db, { now: new Date() }),
});
