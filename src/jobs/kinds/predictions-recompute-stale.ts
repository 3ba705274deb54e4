// Rescores the customers of an organisation whose inputs changed (risk_input_changes), debounced:
// enqueued by the first mark not yet processed (predictions/stale.ts), it runs a few seconds later
// for every mark made by then.
import { t } from 'elysia';
import { utcToday } from '../../lib/today.ts';
import { recomputePredictions } from '../../modules/predictions/service.ts';
import { defineJobKind, PermanentJobError } from '../kind.ts';

export const recomputeStaleJob = defineJobKind({
  kind: 'predictions.recompute-stale',
  payload: t.Object({}),
  retry: { maxAttempts: 5 },
  perform: async (db, _payload, job) => {
    if (!job.orgId) throw new PermanentJobError('predictions.recompute-stale needs an organisation');
    return recomputePredictions(db, { orgId: job.orgId, today: utcToday(), customerIds: 'stale' });
  },
});
