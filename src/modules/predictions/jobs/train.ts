// Retrains an organisation's churn model in the fitting thread (nightly, or asked for with
// `retrain: true`): its labelled history gathered in short units, the tier its history allows
// fitted on every labelled row, judged out of time against the model in force refitted on the same
// rows, then promoted or rejected, and everyone rescored — all recorded in one last unit. Then the
// same at a year's horizon, for the CFO forecast (docs/cfo.md "Forecast"), without a rescore.
import { Type as t } from '@sinclair/typebox';
import { queryText, type Db } from '../../../db/client.ts';
import { utcToday } from '../../../lib/today.ts';
import { retrain, trainingDays } from '../fitting.ts';
import { gatherHistory, historyUnits } from '../history.ts';
import { saveRetrain } from '../save-retrain.ts';
import { type PredictionSettings, YEAR_HORIZON_DAYS } from '../settings.ts';
import type { ModelKind } from '../training.ts';
import { defineJobKind, PermanentJobError, type JobContext } from '../../../queue/job-kind.ts';
import { recomputePredictionsJob } from './recompute.ts';

const trainUnits = {
  ...historyUnits,
  'predictions.active-model': async (db: Db, args: { orgId: string; horizonDays: number }) => {
    const [row] = await queryText<{ id: string; kind: ModelKind }>(
      db,
      `select id, kind from prediction_models where org_id = $1 and horizon_days = $2 and status = 'active'`,
      [args.orgId, args.horizonDays],
    );
    return row ?? null;
  },
  'predictions.save-retrain': (db: Db, args: Parameters<typeof saveRetrain>[2]) => saveRetrain(db, recomputePredictionsJob, args),
};
type TrainUnits = typeof trainUnits;

export const trainJob = defineJobKind({
  kind: 'predictions.train',
  payload: t.Object({}),
  retry: { maxAttempts: 3 },
  units: trainUnits,
  handle: async (_payload, ctx) => {
    const orgId = ctx.job.orgId;
    if (!orgId) throw new PermanentJobError('predictions.train needs an organisation');
    const today = utcToday();
    const scored = ctx.settings.predictions;
    const daily = await retrainAt(ctx, { orgId, today, horizonDays: scored.horizonDays, jobId: ctx.job.id }, scored);
    // The CFO forecast's model (churn within a year), kept by the same rules: the tier the history
    // allows, judged out of time, promoted or rejected. It scores no prediction, so no rescore.
    if (scored.horizonDays === YEAR_HORIZON_DAYS) return daily;
    const year = await retrainAt(
      ctx,
      { orgId, today, horizonDays: YEAR_HORIZON_DAYS, jobId: `${ctx.job.id}/${YEAR_HORIZON_DAYS}` },
      scored,
    );
    return { ...daily, year: { modelId: year.modelId, status: year.status, kind: year.kind } };
  },
});

/** One horizon's retrain: its history gathered in short units, fitted here, saved in one last unit. */
/** `scored`: the settings of the predictions served (their horizon is the one rescored). */
async function retrainAt(
  ctx: JobContext<TrainUnits>,
  args: { orgId: string; today: string; horizonDays: number; jobId: string },
  scored: PredictionSettings,
) {
  const settings = { ...scored, horizonDays: args.horizonDays };
  const { orgId, today } = args;
  // No active model yet: the scorecard is what scores the organisation.
  const incumbent = await ctx.run('predictions.active-model', { orgId, horizonDays: settings.horizonDays });
  const history = await gatherHistory(
    { run: ctx.run },
    {
      orgId,
      today,
      horizonDays: settings.horizonDays,
      graceDays: settings.graceDays,
      days: trainingDays(today, settings),
      maxCustomers: settings.trainMaxCustomers,
    },
  );
  const result = retrain(history, incumbent?.kind ?? 'prior', today, settings);
  const saved = await ctx.run('predictions.save-retrain', {
    orgId,
    jobId: args.jobId,
    horizonDays: settings.horizonDays,
    judgedAgainst: incumbent?.id ?? null,
    result,
    scoresPredictions: args.horizonDays === scored.horizonDays,
  });
  return { ...saved, kind: result.candidate.kind, rows: history.rows.length, auc: result.backtest.candidate.auc };
}
