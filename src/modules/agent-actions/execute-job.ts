// `actions.execute`: an approved action carried out (execution.ts), as a job queued in the
// approval's transaction. Its units are each one transaction; when the last attempt fails, the
// action is marked `failed` before the job dies.
import { Type as t } from '@sinclair/typebox';
import type { Db } from '../../db/client.ts';
import { messageOf } from '../../lib/errors.ts';
import { defineJobKind, PermanentJobError } from '../../queue/job-kind.ts';
import { isLastFailure } from '../../queue/job-failures.ts';
import { executeAction, failAction } from './execution.ts';

const units = {
  execute: (db: Db, args: { orgId: string; actionId: string }) => executeAction(db, args),
  fail: (db: Db, args: { orgId: string; actionId: string; error: string }) => failAction(db, args),
};

export const executeActionJob = defineJobKind({
  kind: 'actions.execute',
  payload: t.Object({ actionId: t.String({ minLength: 1, maxLength: 100 }) }),
  retry: { maxAttempts: 5, baseSeconds: 2, maxSeconds: 300 },
  units,
  handle: async (payload, ctx) => {
    const orgId = ctx.job.orgId;
    if (!orgId) throw new PermanentJobError('actions.execute needs an organisation');
    try {
      return await ctx.run('execute', { orgId, actionId: payload.actionId });
    } catch (error) {
      if (isLastFailure(executeActionJob, ctx.job, error))
        await ctx.run('fail', { orgId, actionId: payload.actionId, error: messageOf(error) });
      throw error;
    }
  },
});
