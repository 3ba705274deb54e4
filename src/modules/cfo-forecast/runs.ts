// The forecast backtest as the API and the CLI see it: asked for (a row and its job in one
// transaction; asking again while the same question is pending answers the pending run), read by id
// or the latest finished, and recorded by the job (jobs/backtest.ts) as it starts, succeeds or fails.
import { queryText, type Db } from '../../db/client.ts';
import { isoTimeText } from '../../db/keyset.ts';
import type { BacktestStatus } from '../../db/schema/index.ts';
import type { UnitRunner } from '../../db/units-of-work.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { enqueueJob } from '../../queue/job-queue.ts';
import type { JobKind } from '../../queue/job-kind.ts';
import { featuresAt } from '../predictions/features.ts';
import { HISTORY_CHUNK_CUSTOMERS } from '../predictions/history.ts';
import { churnDays } from '../predictions/labels.ts';
import type { PredictionSettings } from '../predictions/settings.ts';
import { arrAt, backtestWith, featureQuery, type ForecastBacktest } from './backtest.ts';

export const FORECAST_BACKTEST_JOB = 'cfo.forecast-backtest';

export interface BacktestQuestion {
  origins: number;
  horizon: number;
  /** Null: every currency apart. */
  currency: string | null;
}

export interface ForecastBacktestRun extends BacktestQuestion {
  id: string;
  status: BacktestStatus;
  report: ForecastBacktest | null;
  error: string | null;
  requested_by: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

const COLUMNS = `id, status, origins, horizon, currency, report, error, requested_by,
  ${isoTimeText('created_at')} as created_at, ${isoTimeText('started_at')} as started_at, ${isoTimeText('finished_at')} as finished_at`;

/** Closes the organisation's open runs that nothing will finish: their job ended (a worker that died
 * on the last attempt is marked dead by the queue, not by the handler), or — run by a command,
 * without a job — they have not moved for an hour. */
async function closeAbandoned(db: Db, orgId: string): Promise<void> {
  const jobOf = `j.kind = '${FORECAST_BACKTEST_JOB}' and j.org_id = b.org_id and j.payload->>'runId' = b.id`;
  await queryText(
    db,
    `update forecast_backtests b set status = 'failed', finished_at = now(),
       error = coalesce((select 'its job ended: ' || coalesce(j.last_error, j.state) from jobs j where ${jobOf} order by j.created_at desc limit 1),
                        'its command stopped before finishing it')
     where b.org_id = $1 and b.status in ('queued', 'running')
       and not exists (select 1 from jobs j where ${jobOf} and j.state in ('queued', 'running'))
       and (exists (select 1 from jobs j where ${jobOf}) or b.created_at < now() - interval '1 hour')`,
    [orgId],
  );
}

/**
 * Records the question and queues its job, in `db`'s transaction; the same question already queued
 * or running is answered with that run (`created: false`). Without a job, the row starts `running`
 * and the caller runs it now (runForecastBacktestWith).
 */
export async function requestForecastBacktest(
  db: Db,
  job: JobKind | null,
  args: { orgId: string; question: BacktestQuestion; requestedBy: string },
): Promise<{ run: ForecastBacktestRun; created: boolean }> {
  await closeAbandoned(db, args.orgId);
  const { origins, horizon, currency } = args.question;
  const [inserted] = await queryText<ForecastBacktestRun>(
    db,
    `insert into forecast_backtests (id, org_id, origins, horizon, currency, requested_by, status, started_at)
     values ($1, $2, $3, $4, $5, $6, $7, case when $7 = 'running' then now() end)
     on conflict (org_id, origins, horizon, coalesce(currency, '')) where status in ('queued', 'running') do nothing
     returning ${COLUMNS}`,
    [newId('fbt'), args.orgId, origins, horizon, currency, args.requestedBy, job ? 'queued' : 'running'],
  );
  if (inserted) {
    if (job) await enqueueJob(db, job, { runId: inserted.id }, { orgId: args.orgId, priority: 5 });
    return { run: inserted, created: true };
  }
  const [pending] = await queryText<ForecastBacktestRun>(
    db,
    `select ${COLUMNS} from forecast_backtests
     where org_id = $1 and origins = $2 and horizon = $3 and coalesce(currency, '') = coalesce($4, '') and status in ('queued', 'running')`,
    [args.orgId, origins, horizon, currency],
  );
  // Only a run finishing between the insert and this read leaves nothing pending.
  if (!pending) throw new AppError('conflict', 'The same forecast backtest just finished; ask again to run a new one');
  return { run: pending, created: false };
}

export async function getForecastBacktest(db: Db, orgId: string, id: string): Promise<ForecastBacktestRun> {
  await closeAbandoned(db, orgId);
  const [row] = await queryText<ForecastBacktestRun>(db, `select ${COLUMNS} from forecast_backtests where org_id = $1 and id = $2`, [
    orgId,
    id,
  ]);
  if (!row) throw notFound('Forecast backtest');
  return row;
}

/** The newest run that succeeded: the report the console's fan chart quotes. */
export async function latestForecastBacktest(db: Db, orgId: string): Promise<ForecastBacktestRun> {
  const [row] = await queryText<ForecastBacktestRun>(
    db,
    `select ${COLUMNS} from forecast_backtests where org_id = $1 and status = 'succeeded' order by finished_at desc, id desc limit 1`,
    [orgId],
  );
  if (!row)
    throw new AppError(
      'not_found',
      'No forecast backtest has finished for this organisation yet: POST /api/cfo/forecast-backtests runs one',
    );
  return row;
}

// --- what the job reads and records --------------------------------------------------------------

export const forecastBacktestUnits = {
  /** Marks the run running and returns its question; null when it is no longer open. */
  'cfo.forecast-backtest-start': async (db: Db, args: { orgId: string; id: string }) => {
    const [row] = await queryText<BacktestQuestion>(
      db,
      `update forecast_backtests set status = 'running', started_at = coalesce(started_at, now())
       where org_id = $1 and id = $2 and status in ('queued', 'running') returning origins, horizon, currency`,
      [args.orgId, args.id],
    );
    return row ?? null;
  },
  'cfo.forecast-backtest-customers': async (db: Db, args: { orgId: string }) =>
    (await queryText<{ id: string }>(db, `select id from customers where org_id = $1 order by id`, [args.orgId])).map((r) => r.id),
  'cfo.forecast-backtest-features': (db: Db, args: { orgId: string; day: string; graceDays: number; customerIds: string[] }) =>
    featuresAt(db, { ...featureQuery(args.orgId, args.day, args.graceDays), customerIds: args.customerIds }),
  'cfo.forecast-backtest-churn': async (db: Db, args: { orgId: string; origin: string; graceDays: number; customerIds: string[] }) => [
    ...(await churnDays(db, { orgId: args.orgId, today: args.origin, graceDays: args.graceDays, customerIds: args.customerIds })).entries(),
  ],
  'cfo.forecast-backtest-arr': (db: Db, args: { orgId: string; day: string }) => arrAt(db, args.orgId, args.day),
  'cfo.forecast-backtest-finish': async (db: Db, args: { orgId: string; id: string; report: ForecastBacktest }) => {
    await queryText(
      db,
      `update forecast_backtests set status = 'succeeded', report = $3::jsonb, error = null, finished_at = now()
       where org_id = $1 and id = $2 and status = 'running'`,
      [args.orgId, args.id, JSON.stringify(args.report)],
    );
  },
  'cfo.forecast-backtest-fail': async (db: Db, args: { orgId: string; id: string; error: string }) => {
    await queryText(
      db,
      `update forecast_backtests set status = 'failed', error = $3, finished_at = now()
       where org_id = $1 and id = $2 and status in ('queued', 'running')`,
      [args.orgId, args.id, args.error],
    );
  },
};

export type ForecastBacktestUnits = typeof forecastBacktestUnits;

/** Runs an open run through `units` (the job's, or the CLI's own connection): each read its own
 * short unit, the models fitted here, the report recorded. Null when it is no longer open. */
export async function runForecastBacktestWith(
  units: UnitRunner<ForecastBacktestUnits>,
  args: { orgId: string; id: string; today: string },
  settings: PredictionSettings,
): Promise<ForecastBacktest | null> {
  const question = await units.run('cfo.forecast-backtest-start', { orgId: args.orgId, id: args.id });
  if (!question) return null;
  const { orgId } = args;
  const graceDays = settings.graceDays;
  // A day's features and churn read a chunk of customers per unit, as the retrain's history does:
  // the whole organisation in one unit would hold the embedded database for seconds on a large book.
  const customers = await units.run('cfo.forecast-backtest-customers', { orgId });
  const chunks: string[][] = [];
  for (let from = 0; from < customers.length; from += HISTORY_CHUNK_CUSTOMERS)
    chunks.push(customers.slice(from, from + HISTORY_CHUNK_CUSTOMERS));
  const report = await backtestWith(
    {
      features: async (day) => {
        const rows = [];
        for (const customerIds of chunks)
          rows.push(...(await units.run('cfo.forecast-backtest-features', { orgId, day, graceDays, customerIds })));
        return rows;
      },
      churn: async (origin) => {
        const pairs = [];
        for (const customerIds of chunks)
          pairs.push(...(await units.run('cfo.forecast-backtest-churn', { orgId, origin, graceDays, customerIds })));
        return pairs;
      },
      arrAt: (day) => units.run('cfo.forecast-backtest-arr', { orgId, day }),
    },
    {
      orgId,
      today: args.today,
      origins: question.origins,
      horizon: question.horizon,
      ...(question.currency ? { currency: question.currency } : {}),
      settings,
    },
  );
  await units.run('cfo.forecast-backtest-finish', { orgId, id: args.id, report });
  return report;
}
