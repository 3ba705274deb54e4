// Runs a backtest someone asked for (POST /api/cfo/backtests, revintel backtest) in the fitting
// thread: the history gathered in short units, the fit here, the report recorded. A failure that
// retries cannot fix, or the last attempt's, is recorded on the backtest as `failed`.
import { Type as t } from '@sinclair/typebox';
import { messageOf } from '../../../lib/errors.ts';
import { utcToday } from '../../../lib/today.ts';
import { backtestUnits, runBacktestWith } from '../backtests.ts';
import { historyUnits } from '../history.ts';
import { defineJobKind, PermanentJobError } from '../../../queue/job-kind.ts';
import { isLastFailure } from '../../../queue/job-failures.ts';

export const backtestJob = defineJobKind({
  kind: 'predictions.backtest',
  payload: t.Object({ backtestId: t.String({ minLength: 1, maxLength: 100 }) }),
  retry: { maxAttempts: 3 },
  units: { ...historyUnits, ...backtestUnits },
  handle: async (payload, ctx) => {
    const orgId = ctx.job.orgId;
    if (!orgId) throw new PermanentJobError('predictions.backtest needs an organisation');
    try {
      const report = await runBacktestWith(
        { run: ctx.run },
        { orgId, id: payload.backtestId, today: utcToday() },
        ctx.settings.predictions,
      );
      return report ? { auc: report.metrics.auc, rows: report.metrics.rows, events: report.metrics.events } : { skipped: 'no longer open' };
    } catch (error) {
      if (isLastFailure(backtestJob, ctx.job, error))
        await ctx.run('predictions.backtest-fail', { orgId, id: payload.backtestId, error: messageOf(error) });
      throw error;
    }
  },
});
