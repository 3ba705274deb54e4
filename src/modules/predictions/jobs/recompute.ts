// Rescores an organisation's customers (all, or those named) with the model in force, a chunk of
// customers at a time: each chunk is one unit (one transaction with the stale marks it answers), so
// on the embedded database a whole recompute never holds the server's main thread for longer than
// one chunk. A retried job starts again from the first chunk; a chunk run twice writes the same.
import { Type as t } from '@sinclair/typebox';
import type { Db } from '../../../db/client.ts';
import { timed } from '../../../db/units-of-work.ts';
import { utcToday } from '../../../lib/today.ts';
import { recomputeInChunks, scoreChunk, type ChunkArgs, type RecomputeScope } from '../service.ts';
import { defineJobKind, PermanentJobError, type JobContext } from '../../../queue/job-kind.ts';
import type { Settings } from '../../../settings.ts';

/** The unit both recompute kinds score with. */
export const recomputeUnits = { 'score-chunk': timed((db: Db, args: ChunkArgs, settings: Settings) => scoreChunk(db, args, settings)) };

/** `chunkSize` is for tests and benches (default RECOMPUTE_CHUNK). */
export const ChunkSize = t.Optional(t.Integer({ minimum: 1, maximum: 100_000 }));

/** The recompute of `scope` for the job's organisation, chunk by chunk through the job's units. */
export async function recomputeThroughUnits(ctx: JobContext<typeof recomputeUnits>, scope: RecomputeScope, chunkSize: number | undefined) {
  if (!ctx.job.orgId) throw new PermanentJobError(`${ctx.job.kind} needs an organisation`);
  return recomputeInChunks((chunk) => ctx.run('score-chunk', chunk), { orgId: ctx.job.orgId, today: utcToday(), scope, chunkSize });
}

export const recomputePredictionsJob = defineJobKind({
  kind: 'predictions.recompute',
  payload: t.Object({
    customerIds: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 300 }), { maxItems: 100_000 })),
    chunkSize: ChunkSize,
  }),
  retry: { maxAttempts: 5 },
  units: recomputeUnits,
  handle: (payload, ctx) =>
    recomputeThroughUnits(ctx, payload.customerIds ? { customerIds: payload.customerIds } : 'all', payload.chunkSize),
});
