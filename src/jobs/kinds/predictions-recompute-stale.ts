// Rescores the customers of an organisation whose inputs changed (risk_input_changes), debounced:
// enqueued by the first mark not yet processed (predictions/stale.ts), it runs a few seconds later
// for every mark made by then.
import { t } from 'elysia';
import { queryText } from '../../db/client.ts';
import { utcToday } from '../../lib/today.ts';
import { recomputePredictions } from '../../modules/predictions/service.ts';
import { defineJobKind, PermanentJobError } from '../kind.ts';

export const recomputeStaleJob = defineJobKind({
  kind: 'predictions.recompute-stale',
  payload: t.Object({}),
  retry: { maxAttempts: 5 },
  perform: async (db, _payload, job) => {
    if (!job.orgId) throw new PermanentJobError('predictions.recompute-stale needs an organisation');
    const marked = await queryText<{ customer_id: string }>(db, `select customer_id from risk_input_changes where org_id = $1`, [job.orgId]);
    if (marked.length === 0) return { scored: 0, removed: 0 };
    return recomputePredictions(db, { orgId: job.orgId, today: utcToday(), customerIds: marked.map((m) => m.customer_id) });
  },
});
