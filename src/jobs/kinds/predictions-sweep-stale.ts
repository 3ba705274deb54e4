// Record writes mark customers stale in the database itself (migration 0019), wherever they come
// from; every 15 s this asks for the debounced recompute of each organisation with marks (a no-op
// where one is queued already). Tickets ask for it directly (predictions/stale.ts): they are the
// signal that must show within seconds.
import { t } from 'elysia';
import { queryText } from '../../db/client.ts';
import { predictionSettings } from '../../modules/predictions/settings.ts';
import { defineJobKind } from '../kind.ts';
import { markDebounced } from '../queue.ts';
import { recomputeStaleJob } from './predictions-recompute-stale.ts';

export const sweepStaleJob = defineJobKind({
  kind: 'predictions.sweep-stale',
  payload: t.Object({}),
  schedule: { everySeconds: 15 },
  retry: { maxAttempts: 3 },
  perform: async (db) => {
    const orgs = await queryText<{ org_id: string }>(db, `select distinct org_id from risk_input_changes`, []);
    let asked = 0;
    for (const { org_id: orgId } of orgs) if ((await markDebounced(db, recomputeStaleJob, 'stale', predictionSettings().debounceSeconds, { orgId })).created) asked++;
    return { organisations: orgs.length, asked };
  },
});
