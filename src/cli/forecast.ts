// revintel forecast: today's book's ARR at each of the next months' closes with its exact bands, and
// `revintel forecast backtest`: the same forecast made at past month starts against what was kept
// (docs/cfo.md "Forecast").
import { messageOf } from '../lib/errors.ts';
import { utcToday } from '../lib/today.ts';
import { runForecastBacktestWith } from '../modules/cfo-forecast/runs.ts';
import { minorDigits } from '../modules/cfo-history/currencies.ts';
import type { ForecastBacktest } from '../modules/cfo-forecast/backtest.ts';
import type { Forecast } from '../modules/cfo-forecast/forecast.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, parseCommand, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: {
    type: 'string',
    value: 'ORG',
    description: 'an organisation id or its exact name',
    default: 'the only organisation, when there is one',
  },
  months: { type: 'string', value: 'N', description: 'months ahead, 1 to 24 (forecast)', default: '12' },
  origins: { type: 'string', value: 'N', description: 'month starts back to forecast from, 1 to 36 (backtest)', default: '12' },
  horizon: { type: 'string', value: 'N', description: 'months forecast from each origin, 1 to 24 (backtest)', default: '12' },
  currency: { type: 'string', value: 'CUR', description: 'one currency, or "reporting" (forecast only)', default: 'every currency apart' },
};

const HELP = helpText({
  usage: 'revintel forecast [backtest] [--months N] [--origins N] [--horizon N] [--currency CUR] [--org ORG] [--json]',
  about: `The forecast of today's book (no new customers): expected ARR at each month's close, the exact
80 % (p10–p90) and 90 % (p05–p95) bands, expected churned customers, GRR, and apart the figure with
the trailing twelve months' net expansion. "backtest": the forecast as made at each of the last
month starts, point in time, against the ARR its book kept: WAPE, bias and band coverage per horizon.`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

const count = (raw: unknown, name: string, max: number) => {
  if (raw === undefined) return 12;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`--${name} must be a whole number from 1 to ${max}`);
  return n;
};
const money = (minor: number, currency: string) =>
  (minor / 10 ** minorDigits(currency)).toLocaleString('en-US', { maximumFractionDigits: 0 });
const percent = (ratio: number | null) => (ratio === null ? '-' : `${(100 * ratio).toFixed(1)}%`);

export async function forecastCommand(argv: string[]) {
  const backtest = argv[0] === 'backtest';
  const cmd = parseCommand(backtest ? argv.slice(1) : argv, OPTIONS, HELP);
  const text = (name: string) => (typeof cmd.values[name] === 'string' ? (cmd.values[name] as string) : undefined);
  const base = { org: text('org'), currency: text('currency'), today: utcToday() };
  if (backtest) {
    if (base.currency === 'reporting') throw new UsageError('the backtest is per currency: name one with --currency, or none');
    const question = {
      origins: count(text('origins'), 'origins', 36),
      horizon: count(text('horizon'), 'horizon', 24),
      currency: base.currency ?? null,
    };
    const run = await withAdminSession(cmd.config(), 'forecast', async (session) => {
      // Through a running server: its fitting thread runs the job, followed here. Alone: run here,
      // on this command's own connection, as `revintel backtest` does.
      const queue = session.via === 'server';
      const opened = await session.runner.run('cfo.forecast-backtest-request', { org: base.org, question, queue });
      if (!queue) {
        try {
          await runForecastBacktestWith(
            session.runner,
            { orgId: opened.org_id, id: opened.id, today: base.today },
            session.settings.predictions,
          );
        } catch (error) {
          // Recorded, so that the same question asked again is not answered with this dead run.
          await session.runner
            .run('cfo.forecast-backtest-fail', { orgId: opened.org_id, id: opened.id, error: messageOf(error) })
            .catch(() => {});
          throw error;
        }
      }
      for (;;) {
        const shown = await session.runner.run('cfo.forecast-backtest-show', { org: base.org, id: opened.id });
        if (shown.status === 'succeeded' || shown.status === 'failed') return shown;
        await Bun.sleep(500);
      }
    });
    if (run.status === 'failed' || !run.report) {
      process.exitCode = 1;
      return cmd.print(run, (r) => `forecast backtest ${r.id} failed: ${r.error}`);
    }
    return cmd.print(run.report, describeBacktest);
  }
  const input = { ...base, months: count(text('months'), 'months', 24) };
  const result = await withAdminSession(cmd.config(), 'forecast', (s) => s.runner.run('cfo.forecast', input));
  cmd.print(result, describeForecast);
}

function describeForecast(f: Forecast): string {
  const lines = [
    `Model: ${f.model.kind} at ${f.model.horizon_days} days${f.model.id ? '' : ' (the scorecard: no trained 365-day model)'}`,
    '',
  ];
  if (f.missing_rates.length > 0)
    lines.push(
      `Not converted: rates missing for ${f.missing_rates.map((r) => `${r.currency} ${r.month}`).join(', ')} (revintel fx set).`,
      '',
    );
  if (f.series.length === 0) lines.push('No customer has ARR today.');
  for (const s of f.series) {
    lines.push(
      `${s.currency}: ${s.customers} customers, ${money(s.book_arr, s.currency)} today; net expansion over 12 months ${percent(s.net_expansion_rate_12m)}`,
    );
    lines.push(
      table(
        s.months.map((m) => ({
          month: m.month,
          expected: money(m.expected_arr, s.currency),
          '80% band': `${money(m.p10, s.currency)}–${money(m.p90, s.currency)}`,
          '90% band': `${money(m.p05, s.currency)}–${money(m.p95, s.currency)}`,
          churned: m.expected_churned_customers.toFixed(1),
          grr: percent(m.grr_forecast),
          'with expansion': m.expected_arr_with_expansion === null ? '-' : money(m.expected_arr_with_expansion, s.currency),
        })),
        ['month', 'expected', '80% band', '90% band', 'churned', 'grr', 'with expansion'],
      ),
      '',
    );
  }
  return lines.join('\n').trimEnd();
}

function describeBacktest(b: ForecastBacktest): string {
  const lines: string[] = [];
  if (b.series.length === 0) lines.push('No origin with a book and a month since to compare.');
  for (const s of b.series) {
    lines.push(`${s.currency}: ${s.origins.length} origins (${s.origins[0]?.origin ?? '-'} to ${s.origins.at(-1)?.origin ?? '-'})`);
    lines.push(
      table(
        s.horizons.map((h) => ({
          months_ahead: h.m,
          origins: h.origins,
          wape: percent(h.wape),
          bias: percent(h.bias),
          'in 80% band': percent(h.coverage_80),
          'in 90% band': percent(h.coverage_90),
        })),
        ['months_ahead', 'origins', 'wape', 'bias', 'in 80% band', 'in 90% band'],
      ),
      '',
    );
  }
  return lines.join('\n').trimEnd();
}
