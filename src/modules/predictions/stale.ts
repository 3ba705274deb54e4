// A change to a customer's inputs (a ticket processed, later a record written) marks its prediction
// stale, in the change's own transaction, and asks for the organisation's stale customers to be
// rescored PREDICTION_DEBOUNCE_S after the first mark not yet processed: a burst of tickets makes
// one recompute, and a steady stream cannot postpone it for ever.
import { queryText, type Db } from '../../db/client.ts';
import { recomputeStaleJob } from './jobs/recompute-stale.ts';
import { markDebounced } from '../../queue/job-queue.ts';
import type { PredictionSettings } from './settings.ts';

const MARK = `
  insert into risk_input_changes (org_id, customer_id, changed_at)
  select distinct org_id, customer_id, now() from unnest($1::text[], $2::text[]) as r(org_id, customer_id)
  on conflict (org_id, customer_id) do update set changed_at = excluded.changed_at`;

/** Marks `pairs` stale and schedules their organisations' recomputes. */
export async function markStale(
  db: Db,
  pairs: { orgId: string; customerId: string }[],
  settings: Pick<PredictionSettings, 'debounceSeconds'>,
): Promise<void> {
  if (pairs.length === 0) return;
  await queryText(db, MARK, [pairs.map((p) => p.orgId), pairs.map((p) => p.customerId)]);
  for (const orgId of new Set(pairs.map((p) => p.orgId))) {
    await markDebounced(db, recomputeStaleJob, 'stale', settings.debounceSeconds, { orgId });
  }
}
