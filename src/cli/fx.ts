// revintel fx: the organisation's reporting currency and monthly exchange rates, typed in or
// imported from a CSV (never fetched from the network; docs/cfo.md "Reporting currency").
import { readFileSync } from 'node:fs';
import type { FxRateInput, FxRateView } from '../modules/cfo-history/fx.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, parseCommand, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: {
    type: 'string',
    value: 'ORG',
    description: 'an organisation id or its exact name',
    default: 'the only organisation, when there is one',
  },
  quote: { type: 'string', value: 'CUR', description: 'set, import: the currency the rates convert to', default: 'the reporting currency' },
  from: { type: 'string', value: 'YYYY-MM', description: 'list: from this month' },
  to: { type: 'string', value: 'YYYY-MM', description: 'list: to this month' },
  currency: { type: 'string', value: 'CUR', description: 'list: of this currency only' },
};

const HELP = helpText({
  usage: 'revintel fx <reporting-currency|set|list|import> [options]',
  about: `  reporting-currency CUR|none        the currency the CFO's figures may be converted to
  set CUR YYYY-MM RATE [--quote CUR] one unit of CUR is worth RATE units of the reporting currency that month
  list [--from --to --currency]      the rates, and the reporting currency
  import FILE.csv [--quote CUR]      rates from a CSV with a header month,currency,rate[,quote_currency]
                                     (all or nothing; a rate already there is replaced)`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

/** A CSV of rates: a header naming month, currency and rate (quote_currency optional), then rows. */
export function parseRatesCsv(text: string, quote: string | undefined): FxRateInput[] {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
  const header = (lines.shift() ?? '').split(',').map((h) => h.trim().toLowerCase());
  for (const name of ['month', 'currency', 'rate'])
    if (!header.includes(name)) throw new UsageError(`the CSV's header must name month, currency and rate (found: ${header.join(', ')})`);
  const unknown = header.find((h) => !['month', 'currency', 'rate', 'quote_currency'].includes(h));
  if (unknown) throw new UsageError(`unknown column "${unknown}" (known: month, currency, rate, quote_currency)`);
  return lines.map((line, i) => {
    const cells = line.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'));
    if (cells.length !== header.length) throw new UsageError(`row ${i + 1}: ${cells.length} cells where the header has ${header.length}`);
    const row = Object.fromEntries(header.map((h, j) => [h, cells[j]!]));
    const rowQuote = row.quote_currency || quote;
    return { month: row.month!, currency: row.currency!, rate: row.rate!, ...(rowQuote ? { quote_currency: rowQuote } : {}) };
  });
}

const rateRows = (rates: FxRateView[]) =>
  table(rates as unknown as Record<string, unknown>[], ['month', 'currency', 'quote_currency', 'rate']);

export async function fxCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...args] = cmd.positionals;
  const text = (name: string) => (typeof cmd.values[name] === 'string' ? (cmd.values[name] as string) : undefined);
  const org = text('org');
  const quote = text('quote');
  const run = <T>(fn: (runner: Parameters<Parameters<typeof withAdminSession>[2]>[0]['runner']) => Promise<T>) =>
    withAdminSession(cmd.config(), 'fx', (s) => fn(s.runner));
  switch (sub) {
    case 'reporting-currency': {
      const [code] = args;
      if (!code) throw new UsageError(`reporting-currency needs a currency (or "none")\n\n${HELP}`);
      const currency = code === 'none' ? null : code.toUpperCase();
      const result = await run((r) => r.run('fx.reporting-currency', { org, currency }));
      return cmd.print(result, (x) => `reporting currency: ${x.reporting_currency ?? 'none'}`);
    }
    case 'set': {
      const [currency, month, rate] = args;
      if (!currency || !month || !rate) throw new UsageError(`set needs CUR YYYY-MM RATE\n\n${HELP}`);
      const rates = [{ currency: currency.toUpperCase(), month, rate, ...(quote ? { quote_currency: quote } : {}) }];
      const result = await run((r) => r.run('fx.set', { org, rates }));
      return cmd.print(result, rateRows);
    }
    case 'list': {
      const result = await run((r) => r.run('fx.list', { org, from: text('from'), to: text('to'), currency: text('currency') }));
      return cmd.print(result, (x) => `reporting currency: ${x.reporting_currency ?? 'none'}\n${rateRows(x.rates)}`);
    }
    case 'import': {
      const [file] = args;
      if (!file) throw new UsageError(`import needs a CSV file\n\n${HELP}`);
      const rates = parseRatesCsv(readFileSync(file, 'utf8'), quote);
      const result = await run((r) => r.run('fx.set', { org, rates }));
      return cmd.print(result, (x) => `${x.length} rates written`);
    }
    default:
      throw new UsageError(sub ? `unknown subcommand "${sub}"\n\n${HELP}` : HELP);
  }
}
