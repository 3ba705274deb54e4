// Backtests as the API and the CLI see them: asked for (a row and its job, in one transaction; one
// queued or running per organisation), read by id or the latest finished, and recorded by the job
// (jobs/backtest.ts) as it starts, succeeds or fails.
import { queryText, type Db } from '../../db/client.ts';
import { isoTimeText } from '../../db/keyset.ts';
import type { BacktestMethod, BacktestStatus } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { enqueueJob } from '../../queue/job-queue.ts';
import type { JobKind } from '../../queue/job-kind.ts';
import { backtestDays, planBacktest, runBacktest, type BacktestReport } from './fitting.ts';
import { gatherHistory, type HistoryUnits } from './history.ts';
import type { UnitRunner } from '../../db/units-of-work.ts';
import { addDays } from './training.ts';
import type { PredictionSettings } from './settings.ts';

export interface BacktestRequest {
  method?: BacktestMethod;
  horizonDays?: number;
  asOf?: string;
  cutoff?: string;
}

export interface BacktestView {
  id: string;
  status: BacktestStatus;
  method: BacktestMethod;
  horizon_days: number;
  as_of: string | null;
  cutoff: string | null;
  model_kind: string | null;
  model: Record<string, unknown> | null;
  metrics: Record<string, unknown> | null;
  warning: string | null;
  warnings: string[];
  error: string | null;
  requested_by: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

const iso = isoTimeText;
const COLUMNS = `id, status, method, horizon_days, as_of::text, cutoff::text, model_kind, model, metrics, warning, error, requested_by,
  ${iso('created_at')} as created_at, ${iso('started_at')} as started_at, ${iso('finished_at')} as finished_at`;

type Row = Omit<BacktestView, 'warnings'>;
const present = (row: Row): BacktestView => ({
  ...row,
  warnings: (row.metrics?.warnings as string[] | undefined) ?? (row.warning ? [row.warning] : []),
});

/** Checks the request against today: labels must be known for the days it tests. */
export function checkBacktestRequest(request: BacktestRequest, today: string, settings: PredictionSettings) {
  if (request.method === 'cross_validation' && request.cutoff !== undefined)
    throw new AppError('validation_failed', 'Invalid field "cutoff": it splits an out_of_time backtest; cross_validation takes as_of');
  if (request.method !== 'cross_validation' && request.asOf !== undefined)
    throw new AppError(
      'validation_failed',
      'Invalid field "as_of": it is the snapshot day of a cross_validation backtest; out_of_time takes cutoff',
    );
  const plan = planBacktest(request, today, settings.horizonDays, settings.graceDays);
  const lastLabelled = addDays(today, -plan.horizonDays - settings.graceDays);
  if (plan.asOf !== null) {
    if (plan.asOf > today) throw new AppError('validation_failed', `Invalid field "as_of": ${plan.asOf} is in the future`);
    if (plan.asOf > lastLabelled) {
      throw new AppError(
        'validation_failed',
        `Invalid field "as_of": must be on or before ${lastLabelled} (today − horizon_days − ${settings.graceDays} grace days), the last day whose outcome is known; got ${plan.asOf}`,
      );
    }
  }
  if (plan.cutoff !== null) {
    if (plan.cutoff > today) throw new AppError('validation_failed', `Invalid field "cutoff": ${plan.cutoff} is in the future`);
    if (plan.cutoff >= lastLabelled) {
      throw new AppError(
        'validation_failed',
        `Invalid field "cutoff": must be before ${lastLabelled} (today − horizon_days − ${settings.graceDays} grace days), the last day whose outcome is known; got ${plan.cutoff}`,
      );
    }
  }
  return plan;
}

/** Closes the organisation's open backtests that nothing will finish: their job ended (a worker
 * that died on the last attempt is marked dead by the queue, not by the handler), or — run by a
 * command, without a job — they have not moved for an hour. */
async function closeAbandoned(db: Db, orgId: string): Promise<void> {
  await queryText(
    db,
    `update prediction_backtests b set status = 'failed', finished_at = now(),
       error = coalesce((select 'its job ended: ' || coalesce(j.last_error, j.state) from jobs j
                         where j.kind = 'predictions.backtest' and j.org_id = b.org_id and j.payload->>'backtestId' = b.id order by j.created_at desc limit 1),
                        'its command stopped before finishing it')
     where b.org_id = $1 and b.status in ('queued', 'running')
       and not exists (select 1 from jobs j where j.kind = 'predictions.backtest' and j.org_id = b.org_id and j.payload->>'backtestId' = b.id and j.state in ('queued', 'running'))
       and (exists (select 1 from jobs j where j.kind = 'predictions.backtest' and j.org_id = b.org_id and j.payload->>'backtestId' = b.id)
            or b.created_at < now() - interval '1 hour')`,
    [orgId],
  );
}

/** Records the request and queues its job, in `db`'s transaction; without a job, the row starts
 * `running` and the caller runs it now (runBacktestWith). */
export async function requestBacktest(
  db: Db,
  job: JobKind | null,
  args: { orgId: string; request: BacktestRequest; today: string; requestedBy: string },
  settings: PredictionSettings,
): Promise<BacktestView> {
  const plan = checkBacktestRequest(args.request, args.today, settings);
  await closeAbandoned(db, args.orgId);
  const [open] = await queryText<{ id: string }>(
    db,
    `select id from prediction_backtests where org_id = $1 and status in ('queued', 'running')`,
    [args.orgId],
  );
  if (open)
    throw new AppError(
      'conflict',
      `Backtest ${open.id} is already queued or running for this organisation; ask again once it has finished`,
    );
  const id = newId('bt');
  const inserted = await queryText<Row>(
    db,
    `insert into prediction_backtests (id, org_id, method, horizon_days, as_of, cutoff, requested_by, status, started_at)
     values ($1, $2, $3, $4, $5::date, $6::date, $7, $8, case when $8 = 'running' then now() end)
     on conflict (org_id) where status in ('queued', 'running') do nothing
     returning ${COLUMNS}`,
    [id, args.orgId, plan.method, plan.horizonDays, plan.asOf, plan.cutoff, args.requestedBy, job ? 'queued' : 'running'],
  );
  if (!inserted[0])
    throw new AppError('conflict', 'Another backtest was just queued for this organisation; ask again once it has finished');
  if (job) await enqueueJob(db, job, { backtestId: id }, { orgId: args.orgId, priority: 5 });
  return present(inserted[0]);
}

export async function getBacktest(db: Db, orgId: string, id: string): Promise<BacktestView> {
  await closeAbandoned(db, orgId);
  const [row] = await queryText<Row>(db, `select ${COLUMNS} from prediction_backtests where org_id = $1 and id = $2`, [orgId, id]);
  if (!row) throw notFound('Backtest');
  return present(row);
}

/** The newest backtest that finished (succeeded or failed). */
export async function latestBacktest(db: Db, orgId: string): Promise<BacktestView> {
  const [row] = await queryText<Row>(
    db,
    `select ${COLUMNS} from prediction_backtests where org_id = $1 and status in ('succeeded', 'failed') order by finished_at desc, id desc limit 1`,
    [orgId],
  );
  if (!row) throw new AppError('not_found', 'No backtest has finished for this organisation yet: POST /api/cfo/backtests runs one');
  return present(row);
}

// --- what the job records ------------------------------------------------------------------------

export const backtestUnits = {
  /** Marks the backtest running and returns what it asks for; null when it is no longer open. */
  'predictions.backtest-start': async (db: Db, args: { orgId: string; id: string }) => {
    const [row] = await queryText<Row>(
      db,
      `update prediction_backtests set status = 'running', started_at = coalesce(started_at, now())
       where org_id = $1 and id = $2 and status in ('queued', 'running') returning ${COLUMNS}`,
      [args.orgId, args.id],
    );
    return row ?? null;
  },
  'predictions.backtest-finish': async (db: Db, args: { orgId: string; id: string; report: BacktestReport }) => {
    const { report } = args;
    await queryText(
      db,
      `update prediction_backtests set status = 'succeeded', model_kind = $3, model = $4::jsonb, metrics = $5::jsonb, warning = $6, error = null, finished_at = now()
       where org_id = $1 and id = $2 and status = 'running'`,
      [
        args.orgId,
        args.id,
        report.model.kind,
        JSON.stringify(report.model),
        JSON.stringify({ ...report.metrics, warnings: report.warnings }),
        report.warnings[0] ?? null,
      ],
    );
  },
  /** How far the gathering has come (0..1), for those watching a running backtest. */
  'predictions.backtest-progress': async (db: Db, args: { orgId: string; id: string; progress: number }) => {
    await queryText(
      db,
      `update prediction_backtests set metrics = jsonb_build_object('progress', $3::float8) where org_id = $1 and id = $2 and status = 'running'`,
      [args.orgId, args.id, args.progress],
    );
  },
  'predictions.backtest-fail': async (db: Db, args: { orgId: string; id: string; error: string }) => {
    await queryText(
      db,
      `update prediction_backtests set status = 'failed', error = $3, finished_at = now() where org_id = $1 and id = $2 and status in ('queued', 'running')`,
      [args.orgId, args.id, args.error],
    );
  },
};

export type BacktestUnits = typeof backtestUnits & HistoryUnits;

/** Runs an open backtest through `units` (the job's, or the CLI's own connection): its history
 * gathered unit by unit, fitted here, the report recorded. Null when it is no longer open. */
export async function runBacktestWith(
  units: UnitRunner<BacktestUnits>,
  args: { orgId: string; id: string; today: string; onProgress?: (share: number) => void },
  served: PredictionSettings,
): Promise<BacktestReport | null> {
  const row = await units.run('predictions.backtest-start', { orgId: args.orgId, id: args.id });
  if (!row) return null;
  const settings = { ...served, horizonDays: row.horizon_days };
  const plan = { method: row.method, horizonDays: row.horizon_days, asOf: row.as_of, cutoff: row.cutoff };
  let reported = 0;
  const history = await gatherHistory(
    units,
    {
      orgId: args.orgId,
      today: args.today,
      horizonDays: plan.horizonDays,
      graceDays: settings.graceDays,
      days: backtestDays(plan, args.today, settings),
      maxCustomers: settings.trainMaxCustomers,
    },
    async (done, of) => {
      args.onProgress?.(done / of);
      // A write every tenth of the way: enough for a progress line.
      if (done / of - reported < 0.1) return;
      reported = done / of;
      await units.run('predictions.backtest-progress', { orgId: args.orgId, id: args.id, progress: Math.round(100 * reported) / 100 });
    },
  );
  const report = runBacktest(history, plan, settings);
  await units.run('predictions.backtest-finish', { orgId: args.orgId, id: args.id, report });
  return report;
}
