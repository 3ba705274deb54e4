// The renewal rules (modules/agent-actions/rules.ts): contracts without auto-renew ending within a
// rule's days propose its action, once per contract end. A batch of contracts per unit, sized by
// the time the last one took (queue/batches.ts): each contract can propose an action.
import { Type as t } from '@sinclair/typebox';
import type { Db } from '../../../db/client.ts';
import { nextSizeByTime } from '../../../db/units-of-work.ts';
import { utcToday } from '../../../lib/today.ts';
import { fireRenewalsDueBatch, fireRenewalsDueInBatches, renewalRuleOrgs, type RenewalCursor } from '../rules.ts';
import { BatchSize } from '../../../queue/batches.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';
import type { Settings } from '../../../settings.ts';

const SIZING = { targetMs: 50, min: 5, max: 500 };

const units = {
  orgs: (db: Db) => renewalRuleOrgs(db),
  batch: (db: Db, args: { orgId: string; today: string; rule: number; after: RenewalCursor | null; limit: number }, settings: Settings) =>
    fireRenewalsDueBatch(db, args, settings.actions),
};

export const renewalsDueJob = defineJobKind({
  kind: 'actions.renewals-due',
  payload: t.Object({ batchSize: BatchSize }),
  schedule: { everySeconds: 3600 },
  retry: { maxAttempts: 3 },
  units,
  handle: async (payload, ctx) => {
    const today = utcToday();
    let limit = payload.batchSize ?? 20;
    let batches = 0;
    const fired = await fireRenewalsDueInBatches(await ctx.run('orgs', undefined), async (args) => {
      const started = performance.now();
      const batch = await ctx.run('batch', { ...args, today, limit });
      batches++;
      if (payload.batchSize === undefined) limit = nextSizeByTime(limit, performance.now() - started, SIZING);
      return batch;
    });
    return { fired, batches };
  },
});
