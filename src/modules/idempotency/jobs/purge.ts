// Forgets Idempotency-Key answers past their replay window (keys are also reclaimed on use; this
// keeps the table from growing with keys nobody sends again), a batch per unit (queue/batches.ts).
import { Type as t } from '@sinclair/typebox';
import type { Db } from '../../../db/client.ts';
import { purgeExpiredIdempotencyKeys } from '../service.ts';
import { BatchSize, inBatches } from '../../../queue/batches.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';

const units = { purge: (db: Db, args: { limit: number }) => purgeExpiredIdempotencyKeys(db, args.limit) };

export const idempotencyPurge = defineJobKind({
  kind: 'idempotency.purge',
  payload: t.Object({ batchSize: BatchSize }),
  schedule: { everySeconds: 600 },
  retry: { maxAttempts: 3 },
  units,
  handle: async (payload, ctx) => {
    const { total, batches } = await inBatches((limit) => ctx.run('purge', { limit }), payload.batchSize);
    return { deleted: total, batches };
  },
});
