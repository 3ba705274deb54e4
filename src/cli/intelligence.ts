// revintel intelligence eval FILE: how well the ticket intelligence reads a customer's own labelled
// messages — per churn signal precision, recall, F1, the confusion counts and the misses; the sign
// agreement of sentiment where the file labels one. No database: it reads the file and prints.
import { readFileSync } from 'node:fs';
import { evaluateIntelligence, EvaluationInputError, parseLabelledMessages, type EvaluationReport } from '../modules/tickets/evaluation.ts';
import { CHURN_SIGNALS, INTELLIGENCE_METHOD, INTELLIGENCE_VERSION } from '../modules/tickets/intelligence.ts';
import { helpText, parseCommand, table, UsageError, type OptionSpecs } from './args.ts';

const OPTIONS: OptionSpecs = { misses: { type: 'string', value: 'N', description: 'how many misses to list (0 for none)', default: '20' } };

const HELP = helpText({
  usage: 'revintel intelligence eval FILE [--misses N] [--json]',
  about: `Reads FILE, CSV with a header or NDJSON, one message a row:
  text       the message
  signals    the churn signals it carries: a list (NDJSON) or names separated by | or ; (CSV);
             empty or "none" for none. Known: ${CHURN_SIGNALS.join(', ')}
  sentiment  optional: a number whose sign counts, or positive/negative
and prints per signal precision, recall, F1, the confusion counts and the misses.`,
  options: OPTIONS,
});

const figure = (value: number | null) => (value === null ? '-' : value.toFixed(3));

export function intelligenceCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, file] = cmd.positionals;
  if (sub !== 'eval') throw new UsageError(sub ? `unknown intelligence command "${sub}"\n${HELP}` : HELP);
  if (!file) throw new UsageError(`intelligence eval needs FILE\n${HELP}`);
  const misses = cmd.values.misses === undefined ? 20 : Number(cmd.values.misses);
  if (!Number.isInteger(misses) || misses < 0 || misses > 100_000) throw new UsageError('--misses must be 0 to 100000');
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let report: EvaluationReport;
  try {
    report = evaluateIntelligence(parseLabelledMessages(content), misses);
  } catch (error) {
    if (error instanceof EvaluationInputError) throw new UsageError(`${file}: ${error.message}`);
    throw error;
  }
  cmd.print({ method: INTELLIGENCE_METHOD, version: INTELLIGENCE_VERSION, ...report }, (r) => {
    const s = r.sentiment;
    return [
      `${r.messages} messages, intelligence ${r.method} version ${r.version}`,
      '',
      table(
        r.signals.map((x) => ({
          signal: x.signal,
          labelled: x.support,
          precision: figure(x.precision),
          recall: figure(x.recall),
          f1: figure(x.f1),
          tp: x.true_positives,
          fp: x.false_positives,
          fn: x.false_negatives,
          tn: x.true_negatives,
        })),
        ['signal', 'labelled', 'precision', 'recall', 'f1', 'tp', 'fp', 'fn', 'tn'],
      ),
      '',
      s.labelled === 0
        ? 'sentiment: no message labelled'
        : `sentiment: sign agrees on ${s.agreeing} of ${s.labelled} (${figure(s.agreement)}); ${s.neutral} scored 0 (no sign)`,
      ...(r.misses.length
        ? [
            '',
            `misses (first ${r.misses.length}):`,
            ...r.misses.map(
              (m) =>
                `  ${m.kind === 'missed' ? 'missed     ' : 'false alarm'} ${m.signal.padEnd(12)} ${JSON.stringify(m.text.length > 160 ? `${m.text.slice(0, 157)}...` : m.text)}`,
            ),
          ]
        : []),
    ].join('\n');
  });
}
