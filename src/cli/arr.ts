// revintel arr: the ARR history a CFO reads — per month and currency the opening ARR, its
// movements, the close, and GRR/NRR over twelve months — or with --cohorts the cohorts' retention
// (docs/cfo.md).
import { utcToday } from '../lib/today.ts';
import { minorDigits } from '../modules/cfo-history/currencies.ts';
import type { ArrHistory } from '../modules/cfo-history/history.ts';
import type { Cohorts } from '../modules/cfo-history/cohorts.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, parseCommand, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: {
    type: 'string',
    value: 'ORG',
    description: 'an organisation id or its exact name',
    default: 'the only organisation, when there is one',
  },
  from: { type: 'string', value: 'YYYY-MM', description: 'the first month', default: '11 months before --to' },
  to: { type: 'string', value: 'YYYY-MM', description: 'the last month (this one at most)', default: 'this month' },
  currency: {
    type: 'string',
    value: 'CUR',
    description: 'one currency, or "reporting": converted to the reporting currency (revintel fx)',
    default: 'every currency apart',
  },
  cohorts: { type: 'boolean', description: 'the cohorts of --from..--to instead: net ARR and logo retention by months since the first' },
};

const HELP = helpText({
  usage: 'revintel arr [--from YYYY-MM] [--to YYYY-MM] [--currency CUR|reporting] [--cohorts] [--org ORG] [--json]',
  about: `The ARR history by month and currency: the opening ARR, new, reactivation, expansion,
contraction and churn, the close (start + movements = end, to the minor unit), customers, and GRR
and NRR over the twelve months to each close. Amounts in major units here, minor units in --json.`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

const money = (minor: number, currency: string) => {
  const digits = minorDigits(currency);
  return (minor / 10 ** digits).toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: digits });
};
const percent = (ratio: number | null) => (ratio === null ? '-' : `${(100 * ratio).toFixed(1)}%`);

export async function arrCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const text = (name: string) => (typeof cmd.values[name] === 'string' ? (cmd.values[name] as string) : undefined);
  for (const name of ['from', 'to'])
    if (text(name) !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(text(name)!)) throw new UsageError(`--${name} must be a month YYYY-MM`);
  const input = { org: text('org'), from: text('from'), to: text('to'), currency: text('currency'), today: utcToday() };
  if (cmd.values.cohorts) {
    if (input.currency === 'reporting') throw new UsageError('--cohorts are per currency: name one with --currency, or none');
    const result = await withAdminSession(cmd.config(), 'arr', (s) => s.runner.run('cfo.cohorts', input));
    return cmd.print(result, describeCohorts);
  }
  const result = await withAdminSession(cmd.config(), 'arr', (s) => s.runner.run('cfo.arr', input));
  cmd.print(result, describeHistory);
}

function describeHistory(h: ArrHistory): string {
  const lines: string[] = [];
  if (h.missing_rates.length > 0)
    lines.push(
      `Not converted to ${h.reporting_currency}: rates missing for ${h.missing_rates.map((r) => `${r.currency} ${r.month}`).join(', ')} (revintel fx set).`,
      '',
    );
  if (h.series.length === 0) lines.push(`No ARR from ${h.from} to ${h.to}.`);
  for (const s of h.series) {
    lines.push(`${s.currency}${h.converted ? ` (converted, each month at its rate)` : ''}`);
    lines.push(
      table(
        s.months.map((m) => ({
          month: m.partial ? `${m.month}*` : m.month,
          start: money(m.start_arr, s.currency),
          new: money(m.new, s.currency),
          reactivation: money(m.reactivation, s.currency),
          expansion: money(m.expansion, s.currency),
          contraction: money(-m.contraction, s.currency),
          churn: money(-m.churn, s.currency),
          end: money(m.end_arr, s.currency),
          customers: m.customers_end,
          grr_12m: percent(m.grr_12m),
          nrr_12m: percent(m.nrr_12m),
        })),
        ['month', 'start', 'new', 'reactivation', 'expansion', 'contraction', 'churn', 'end', 'customers', 'grr_12m', 'nrr_12m'],
      ),
      '',
    );
  }
  if (h.series.some((s) => s.months.some((m) => m.partial))) lines.push(`* under way: its close is today (${h.as_of})`);
  return lines.join('\n').trimEnd();
}

const AGES = [1, 3, 6, 12, 24];

function describeCohorts(c: Cohorts): string {
  if (c.cohorts.length === 0) return `No customer had ARR for the first time from ${c.from} to ${c.to}.`;
  return [
    'Net ARR retention / logo retention, months after the first month with ARR:',
    table(
      c.cohorts.map((cohort) => ({
        currency: cohort.currency,
        cohort: cohort.month,
        customers: cohort.customers,
        start_arr: money(cohort.start_arr, cohort.currency),
        ...Object.fromEntries(
          AGES.map((k) => {
            const age = cohort.ages[k];
            return [`m${k}`, age ? `${percent(age.net_arr_retention)} / ${percent(age.logo_retention)}` : '-'];
          }),
        ),
      })),
      ['currency', 'cohort', 'customers', 'start_arr', ...AGES.map((k) => `m${k}`)],
    ),
  ].join('\n');
}
