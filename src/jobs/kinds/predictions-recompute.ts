// Rescores an organisation's customers (all, or those named) with the model in force, in one
// transaction with the stale marks it answers.
import { t } from 'elysia';
import { utcToday } from '../../lib/today.ts';
import { recomputePredictions } from '../../modules/predictions/service.ts';
import { defineJobKind, PermanentJobError } from '../kind.ts';

export const recomputePredictionsJob = defineJobKind({
  kind: 'predictions.recompute',
  payload: t.Object({ customerIds: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 300 }), { maxItems: 100_000 })) }),
  retry: { maxAttempts: 5 },
  perform: async (db, payload, job) => {
    if (!job.orgId) throw new PermanentJobError('predictions.recompute needs an organisation');
    return recomputePredictions(db, { orgId: job.orgId, today: utcToday(), customerIds: payload.customerIds });
  },
});
