// Set-wise upkeep (purges, expiries, sweeps) a batch at a time: each batch one unit, so on the
// embedded database no upkeep holds the server's main thread for longer than one batch, however
// much has piled up (a purge of a month of finished jobs was one statement over all of them).
import { Type as t } from '@sinclair/typebox';
import type { Db } from '../db/client.ts';
import { nextSizeByTime } from '../db/units-of-work.ts';
import type { Settings } from '../settings.ts';
import { defineJobKind } from './job-kind.ts';

/** Batches sized by the time the last one took, aiming at 50 ms (what a row costs depends on the
 * table and on the machine's load). */
const BATCH_SIZING = { targetMs: 50, min: 20, max: 2_000 };
const BATCH_FIRST = 100;

/** A fixed batch size, for tests and benches (default: sized by time). */
export const BatchSize = t.Optional(t.Integer({ minimum: 1, maximum: 100_000 }));

/**
 * Runs `batch` again and again, each run given how many items it may take at most and answering how
 * many it took, until one takes fewer than that: nothing due is left. Each item a batch takes must
 * leave what is due (deleted, or its state changed), or the loop would not end.
 */
export async function inBatches(
  batch: (limit: number) => Promise<number>,
  fixedSize?: number,
): Promise<{ total: number; batches: number }> {
  let limit = fixedSize ?? BATCH_FIRST;
  let total = 0;
  let batches = 0;
  for (;;) {
    const started = performance.now();
    const taken = await batch(limit);
    total += taken;
    batches++;
    if (taken < limit) return { total, batches };
    if (fixedSize === undefined) limit = nextSizeByTime(limit, performance.now() - started, BATCH_SIZING);
  }
}

/**
 * A kind that sweeps what has come due every minute, a batch per unit: `sweep(db, now, limit, settings)` takes
 * at most `limit` items due at `now` (the same `now` for every batch of a run), changes each so it
 * is no longer due, and answers how many it took; the job answers `{ [counted]: total, batches }`.
 */
export function sweepKind(kind: string, counted: string, sweep: (db: Db, now: Date, limit: number, settings: Settings) => Promise<number>) {
  const units = {
    sweep: (db: Db, args: { now: string; limit: number }, settings: Settings) => sweep(db, new Date(args.now), args.limit, settings),
  };
  return defineJobKind({
    kind,
    payload: t.Object({ batchSize: BatchSize }),
    schedule: { everySeconds: 60 },
    retry: { maxAttempts: 3 },
    units,
    handle: async (payload, ctx) => {
      const now = new Date().toISOString();
      const { total, batches } = await inBatches((limit) => ctx.run('sweep', { now, limit }), payload.batchSize);
      return { [counted]: total, batches };
    },
  });
}
