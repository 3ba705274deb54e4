// Rescores the customers of an organisation whose inputs changed (risk_input_changes), debounced:
// enqueued by the first mark not yet processed (predictions/stale.ts), it runs a few seconds later
// for every mark made by then, a chunk of customers per unit (recompute.ts).
import { Type as t } from '@sinclair/typebox';
import { defineJobKind } from '../../../queue/job-kind.ts';
import { ChunkSize, recomputeThroughUnits, recomputeUnits } from './recompute.ts';

export const recomputeStaleJob = defineJobKind({
  kind: 'predictions.recompute-stale',
  payload: t.Object({ chunkSize: ChunkSize }),
  retry: { maxAttempts: 5 },
  units: recomputeUnits,
  handle: (payload, ctx) => recomputeThroughUnits(ctx, 'stale', payload.chunkSize),
});
