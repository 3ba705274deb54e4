// Recording what a retrain decided, in one transaction: the candidate as the new active model (the
// old one retired) or as `rejected` with the reason, its out-of-time evaluation as the latest
// backtest, and a rescore of everyone. A run killed before this commits leaves nothing behind; a
// run that committed and died before its job was marked done finds its model on the retry.
import { queryText, type Db } from '../../db/client.ts';
import { enqueueJob } from '../../queue/job-queue.ts';
import type { JobKind } from '../../queue/job-kind.ts';
import { newId } from '../../lib/ids.ts';
import type { RetrainResult } from './fitting.ts';

export interface SavedRetrain {
  modelId: string | null;
  status: 'active' | 'rejected' | 'unchanged';
  reason: string | null;
}

/** `judgedAgainst`: the id of the model in force when the training started (null: none yet). */
export async function saveRetrain(
  db: Db,
  rescore: JobKind,
  args: {
    orgId: string;
    jobId: string;
    horizonDays: number;
    judgedAgainst: string | null;
    result: RetrainResult;
    /** False for a model the predictions do not read (the forecast's 365-day one): no rescore, and
     * its evaluation not recorded as the organisation's latest backtest (the CFO page's). */
    scoresPredictions?: boolean;
  },
): Promise<SavedRetrain> {
  const { result } = args;
  // The organisation's models locked: a retrain saving at the same time (another process) waits,
  // then sees what this one did.
  const models = await queryText<{ id: string; kind: string; status: string; job_id: string | null; reject_reason: string | null }>(
    db,
    `select id, kind, status, metrics->>'job_id' as job_id, reject_reason from prediction_models where org_id = $1 and horizon_days = $2 for update`,
    [args.orgId, args.horizonDays],
  );
  // A retry of a run that saved and died before its job was marked done: its decision stands.
  const earlier = models.find((m) => m.job_id === args.jobId);
  if (earlier) return { modelId: earlier.id, status: earlier.status as SavedRetrain['status'], reason: earlier.reject_reason };
  const [recorded] = await queryText<{ id: string }>(
    db,
    `select id from prediction_backtests where org_id = $1 and metrics->>'job_id' = $2`,
    [args.orgId, args.jobId],
  );
  if (recorded) return { modelId: models.find((m) => m.status === 'active')?.id ?? null, status: 'unchanged', reason: null };
  const active = models.find((m) => m.status === 'active');
  const backtest = { cutoff: result.backtest.cutoff, ...result.backtest.candidate };
  if (args.scoresPredictions ?? true) {
    await recordBacktest(db, args);
    await enqueueJob(db, rescore, {}, { orgId: args.orgId, dedupeKey: 'all' });
  }
  // The scorecard again, in force already: nothing to replace.
  if (result.candidate.kind === 'prior' && (!active || active.kind === 'prior'))
    return { modelId: active?.id ?? null, status: 'unchanged', reason: null };
  const id = newId('mdl');
  const metrics = {
    job_id: args.jobId,
    trained_on: result.candidate.trained_on,
    fit: result.candidate.fit,
    platt: result.candidate.platt,
    backtest,
    incumbent_backtest: result.backtest.incumbent,
    incumbent_id: active?.id ?? null,
    warnings: result.warnings,
    lost_history: result.lostHistory,
  };
  // Judged against a model another retrain has since replaced (not the scorecard stored by a first
  // scoring meanwhile): it was not judged against the one in force now.
  const replaced = active !== undefined && active.id !== args.judgedAgainst && active.kind !== 'prior';
  const { status, reason } = replaced
    ? { status: 'rejected' as const, reason: 'the model in force changed while this one was trained' }
    : result.promotion;
  if (status === 'active' && active) await queryText(db, `update prediction_models set status = 'retired' where id = $1`, [active.id]);
  await queryText(
    db,
    `insert into prediction_models (id, org_id, kind, status, horizon_days, parameters, metrics, reject_reason) values ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8)`,
    [
      id,
      args.orgId,
      result.candidate.kind,
      status,
      args.horizonDays,
      JSON.stringify(result.candidate.parameters),
      JSON.stringify(metrics),
      reason,
    ],
  );
  return { modelId: id, status, reason };
}

/** The retrain's out-of-time evaluation, recorded as the organisation's latest backtest (by `nightly`). */
async function recordBacktest(db: Db, args: { orgId: string; jobId: string; horizonDays: number; result: RetrainResult }) {
  const { result } = args;
  await queryText(
    db,
    `insert into prediction_backtests (id, org_id, status, method, horizon_days, cutoff, model_kind, model, metrics, warning, requested_by, started_at, finished_at)
     values ($1, $2, 'succeeded', 'out_of_time', $3, $4::date, $5, $6::jsonb, $7::jsonb, $8, 'nightly', now(), now())`,
    [
      newId('bt'),
      args.orgId,
      args.horizonDays,
      result.backtest.cutoff,
      result.candidate.kind,
      JSON.stringify(result.candidate),
      JSON.stringify({
        ...result.backtest.candidate,
        job_id: args.jobId,
        warnings: [...(result.backtest.candidate.warning ? [result.backtest.candidate.warning] : []), ...result.warnings],
      }),
      result.backtest.candidate.warning ?? result.warnings[0] ?? null,
    ],
  );
}
