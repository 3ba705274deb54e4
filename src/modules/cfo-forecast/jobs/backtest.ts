// Runs a forecast backtest someone asked for (POST /api/cfo/forecast-backtests, `revintel forecast
// backtest`) in the fitting thread: it trains a model per origin, seconds of CPU on a large book.
// Each read is its own short unit; a failure retries cannot fix, or the last attempt's, is recorded
// on the run as `failed`.
import { Type as t } from '@sinclair/typebox';
import { messageOf } from '../../../lib/errors.ts';
import { utcToday } from '../../../lib/today.ts';
import { isLastFailure } from '../../../queue/job-failures.ts';
import { defineJobKind, PermanentJobError } from '../../../queue/job-kind.ts';
import { FORECAST_BACKTEST_JOB, forecastBacktestUnits, runForecastBacktestWith } from '../runs.ts';

export const forecastBacktestJob = defineJobKind({
  kind: FORECAST_BACKTEST_JOB,
  payload: t.Object({ runId: t.String({ minLength: 1, maxLength: 100 }) }),
  retry: { maxAttempts: 3 },
  units: forecastBacktestUnits,
  handle: async (payload, ctx) => {
    const orgId = ctx.job.orgId;
    if (!orgId) throw new PermanentJobError(`${FORECAST_BACKTEST_JOB} needs an organisation`);
    try {
      const report = await runForecastBacktestWith(
        { run: ctx.run },
        { orgId, id: payload.runId, today: utcToday() },
        ctx.settings.predictions,
      );
      return report ? { series: report.series.length } : { skipped: 'no longer open' };
    } catch (error) {
      if (isLastFailure(forecastBacktestJob, ctx.job, error))
        await ctx.run('cfo.forecast-backtest-fail', { orgId, id: payload.runId, error: messageOf(error) });
      throw error;
    }
  },
});
