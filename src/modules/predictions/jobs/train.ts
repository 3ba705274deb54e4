// Retrains an organisation's churn model in the fitting thread (nightly, or asked for with
// `retrain: true`): its labelled history gathered in short units, the tier its history allows
// fitted on every labelled row, judged out of time against the model in force refitted on the same
// rows, then promoted or rejected, and everyone rescored — all recorded in one last unit.
import { Type as t } from '@sinclair/typebox';
import { queryText, type Db } from '../../../db/client.ts';
import { utcToday } from '../../../lib/today.ts';
import { retrain, trainingDays } from '../fitting.ts';
import { gatherHistory, historyUnits } from '../history.ts';
import { saveRetrain } from '../save-retrain.ts';
import { predictionSettings } from '../settings.ts';
import type { RetrainResult } from '../fitting.ts';
import type { ModelKind } from '../training.ts';
import { defineJobKind, PermanentJobError } from '../../../queue/job-kind.ts';
import { recomputePredictionsJob } from './recompute.ts';

export const trainJob = defineJobKind({
  kind: 'predictions.train',
  payload: t.Object({}),
  retry: { maxAttempts: 3 },
  units: {
    ...historyUnits,
    'predictions.active-model': async (db: Db, args: { orgId: string; horizonDays: number }) => {
      const [row] = await queryText<{ id: string; kind: ModelKind }>(
        db,
        `select id, kind from prediction_models where org_id = $1 and horizon_days = $2 and status = 'active'`,
        [args.orgId, args.horizonDays],
      );
      return row ?? null;
    },
    'predictions.save-retrain': (
      db: Db,
      args: { orgId: string; jobId: string; horizonDays: number; judgedAgainst: string | null; result: RetrainResult },
    ) => saveRetrain(db, recomputePredictionsJob, args),
  },
  handle: async (_payload, ctx) => {
    const orgId = ctx.job.orgId;
    if (!orgId) throw new PermanentJobError('predictions.train needs an organisation');
    const settings = predictionSettings();
    const today = utcToday();
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
      jobId: ctx.job.id,
      horizonDays: settings.horizonDays,
      judgedAgainst: incumbent?.id ?? null,
      result,
    });
    return { ...saved, kind: result.candidate.kind, rows: history.rows.length, auc: result.backtest.candidate.auc };
  },
});
