// Agent actions not decided within ACTION_TTL_HOURS expire (modules/agent-actions/service.ts), a
// batch per unit (queue/batches.ts).
import { t } from 'elysia';
import type { Db } from '../../../db/client.ts';
import { expireActions } from '../service.ts';
import { BatchSize, inBatches } from '../../../queue/batches.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';

const units = { expire: (db: Db, args: { now: string; limit: number }) => expireActions(db, new Date(args.now), args.limit) };

export const expireActionsJob = defineJobKind({
  kind: 'actions.expire',
  payload: t.Object({ batchSize: BatchSize }),
  schedule: { everySeconds: 60 },
  retry: { maxAttempts: 3 },
  units,
  handle: async (payload, ctx) => {
    const now = new Date().toISOString();
    const { total, batches } = await inBatches((limit) => ctx.run('expire', { now, limit }), payload.batchSize);
    return { expired: total, batches };
  },
});
