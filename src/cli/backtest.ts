// revintel backtest: how an organisation's churn model would have done on its own history — the
// report a data scientist reads before trusting the predictions. Through a running server's
// fitting thread when one owns the embedded database; otherwise run here, on this command's own
// connection, with a progress line on a terminal.
import { BACKTEST_METHODS, type BacktestMethod } from '../db/schema/index.ts';
import { utcToday } from '../lib/today.ts';
import { messageOf } from '../lib/errors.ts';
import { runBacktestWith, type BacktestView } from '../modules/predictions/backtests.ts';
import { againstScorecard, type AucFigures, explainWarning } from '../modules/predictions/backtest-words.ts';
import type { BacktestMetrics } from '../modules/predictions/training.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, parseCommand, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: {
    type: 'string',
    value: 'ORG',
    description: 'an organisation id or its exact name',
    default: 'the only organisation, when there is one',
  },
  method: {
    type: 'string',
    value: 'METHOD',
    description:
      'out_of_time: train on the snapshots whose outcome was known by --cutoff, test on those after it; cross_validation: one snapshot per customer at --as-of, five folds of customers, each scored by a model trained on the other four',
    default: 'out_of_time',
  },
  cutoff: { type: 'string', value: 'YYYY-MM-DD', description: 'out_of_time: where training ends', default: 'horizon + 180 days ago' },
  'as-of': { type: 'string', value: 'YYYY-MM-DD', description: 'cross_validation: the snapshot day', default: 'horizon + grace days ago' },
  horizon: {
    type: 'string',
    value: 'DAYS',
    description: 'the days ahead a prediction speaks of (7 to 365)',
    default: 'PREDICTION_HORIZON_DAYS',
  },
};

const HELP = helpText({
  usage: 'revintel backtest [--org ORG] [--method METHOD] [--cutoff YYYY-MM-DD] [--as-of YYYY-MM-DD] [--horizon DAYS]',
  about: `How the churn model would have done on the organisation's own history. Prints AUC (with its 95%
interval), the untrained scorecard's AUC on the same rows, top-decile lift, Brier score,
calibration error and tables.`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

const fixed = (x: unknown, digits = 3) => (typeof x === 'number' ? x.toFixed(digits) : '-');

export async function backtestCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const { method, cutoff, horizon } = cmd.values;
  const asOf = cmd.values['as-of'];
  if (method !== undefined && !(BACKTEST_METHODS as readonly string[]).includes(method as string))
    throw new UsageError(`--method must be ${BACKTEST_METHODS.join(' or ')}, not "${method}"`);
  for (const [name, value] of [
    ['cutoff', cutoff],
    ['as-of', asOf],
  ] as const) {
    if (value !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(String(value)))
      throw new UsageError(`--${name} must be a date YYYY-MM-DD, not "${value}"`);
  }
  const horizonDays = horizon === undefined ? undefined : Number(horizon);
  if (horizonDays !== undefined && !(Number.isInteger(horizonDays) && horizonDays >= 7 && horizonDays <= 365))
    throw new UsageError('--horizon must be a whole number of days from 7 to 365');
  const request = {
    method: method as BacktestMethod | undefined,
    cutoff: cutoff as string | undefined,
    asOf: asOf as string | undefined,
    horizonDays,
  };
  const org = typeof cmd.values.org === 'string' ? cmd.values.org : undefined;
  const today = utcToday();
  const progress = (share: number) => {
    if (process.stderr.isTTY) process.stderr.write(`\rgathering history… ${Math.round(100 * share)}%   `);
  };

  const result = await withAdminSession(cmd.config(), 'backtest', async (session) => {
    const queue = session.via === 'server';
    const opened = await session.runner.run('predictions.backtest-request', { org, request, today, queue });
    if (!queue) {
      try {
        await runBacktestWith(
          session.runner,
          { orgId: opened.org_id, id: opened.id, today, onProgress: progress },
          session.settings.predictions,
        );
      } catch (error) {
        // Recorded, so that the organisation's next backtest is not refused as a duplicate.
        await session.runner
          .run('predictions.backtest-fail', { orgId: opened.org_id, id: opened.id, error: messageOf(error) })
          .catch(() => {});
        throw error;
      }
      return session.runner.run('predictions.backtest-show', { org, id: opened.id });
    }
    // The server's fitting thread runs it: follow it.
    for (;;) {
      const shown = await session.runner.run('predictions.backtest-show', { org, id: opened.id });
      if (shown.status === 'succeeded' || shown.status === 'failed') return shown;
      if (typeof shown.metrics?.progress === 'number') progress(shown.metrics.progress);
      await Bun.sleep(500);
    }
  });
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  cmd.print(result, describe);
  if (result.status === 'failed') process.exitCode = 1;
}

function describe(b: BacktestView): string {
  if (b.status === 'failed') return `backtest ${b.id} failed: ${b.error}`;
  // The metrics are stored JSON (an older run may lack a figure): every one read as optional.
  const m = (b.metrics ?? {}) as Partial<BacktestMetrics> & AucFigures & { sampled_customers?: number; total_customers?: number };
  const split =
    b.method === 'cross_validation'
      ? `snapshot ${b.as_of}, 5 folds of customers`
      : `trained on outcomes known by ${b.cutoff}, tested after it`;
  return [
    `backtest ${b.id}: ${b.method} (${split}), horizon ${b.horizon_days} days, model ${b.model_kind}`,
    `rows ${m.rows}, churn events ${m.events}, customers ${m.customers}${(m.sampled_customers ?? 0) < (m.total_customers ?? 0) ? ` (a sample of ${m.sampled_customers} of ${m.total_customers})` : ''}, base rate ${fixed(m.base_rate)}`,
    ...b.warnings.map((w) => `warning: ${w}: ${explainWarning(w, m)}`),
    ...(againstScorecard(m, b.model_kind) ? [againstScorecard(m, b.model_kind)!] : []),
    '',
    table(
      [
        {
          metric: 'AUC',
          value: `${fixed(m.auc)}${m.auc_ci95 ? ` (95% ${fixed(m.auc_ci95[0])}–${fixed(m.auc_ci95[1])})` : ''}`,
          meaning: 'chance a churner is ranked above a stayer',
        },
        {
          metric: 'scorecard AUC',
          value: `${fixed(m.prior_auc)}${m.prior_auc_ci95 ? ` (95% ${fixed(m.prior_auc_ci95[0])}–${fixed(m.prior_auc_ci95[1])})` : ''}`,
          meaning: 'the untrained points, same rows',
        },
        { metric: 'AUC without notice', value: fixed(m.auc_without_notice), meaning: 'rows where no cancellation was known yet' },
        { metric: 'top-decile lift', value: fixed(m.top_decile_lift, 2), meaning: 'churn rate of the riskiest 10% ÷ the base rate' },
        { metric: 'Brier', value: fixed(m.brier, 4), meaning: 'mean squared error of the probabilities' },
        { metric: 'ECE', value: fixed(m.ece, 4), meaning: 'calibration error (10 equal-count bins)' },
      ],
      ['metric', 'value', 'meaning'],
    ),
    ...(Array.isArray(m.calibration_table) && m.calibration_table.length
      ? [
          '',
          'calibration (predicted against observed churn):',
          table(
            m.calibration_table.map((r) => ({
              bin: r.bin,
              rows: r.n,
              predicted: fixed(r.mean_predicted),
              observed: fixed(r.observed_rate),
            })),
            ['bin', 'rows', 'predicted', 'observed'],
          ),
        ]
      : []),
  ].join('\n');
}
