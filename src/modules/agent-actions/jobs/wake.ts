// Snoozed agent actions whose snooze ended wait for a decision again (modules/agent-actions/service.ts),
// a batch per unit (queue/batches.ts).
import { t } from 'elysia';
import type { Db } from '../../../db/client.ts';
import { wakeSnoozedActions } from '../service.ts';
import { BatchSize, inBatches } from '../../../queue/batches.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';

const units = { wake: (db: Db, args: { now: string; limit: number }) => wakeSnoozedActions(db, new Date(args.now), args.limit) };

export const wakeActionsJob = defineJobKind({
  kind: 'actions.wake',
  payload: t.Object({ batchSize: BatchSize }),
  schedule: { everySeconds: 60 },
  retry: { maxAttempts: 3 },
  units,
  handle: async (payload, ctx) => {
    const now = new Date().toISOString();
    const { total, batches } = await inBatches((limit) => ctx.run('wake', { now, limit }), payload.batchSize);
    return { woken: total, batches };
  },
});
