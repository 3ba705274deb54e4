// How well ticket intelligence reads a set of labelled messages (docs/tickets.md "Ticket intelligence: how it
// is measured"): per churn signal precision, recall, F1 and the confusion counts, the messages it
// got wrong, and for messages labelled with a sentiment how often the sign agrees. Pure: the CLI
// reads the file and prints; the tests and the figures in docs/tickets.md use the same functions.
import { parse } from 'csv-parse/sync';
import { analyseTicket, CHURN_SIGNALS, type ChurnSignal } from './intelligence.ts';

export interface LabelledMessage {
  text: string;
  signals: ChurnSignal[];
  /** -1 or 1 when the message is labelled with a sentiment sign. */
  sentiment: -1 | 1 | null;
}

/** The signals every report shows, whatever the file labels: the ones that speak of leaving. */
export const MEASURED_SIGNALS: readonly ChurnSignal[] = ['cancellation', 'competitor', 'downgrade', 'refund'];

export interface SignalScore {
  signal: ChurnSignal;
  /** messages labelled with the signal */
  support: number;
  true_positives: number;
  false_positives: number;
  false_negatives: number;
  true_negatives: number;
  /** null when nothing fired (precision) or nothing is labelled (recall) */
  precision: number | null;
  recall: number | null;
  f1: number | null;
}

export interface Miss {
  text: string;
  /** missed: labelled but not found; false_alarm: found but not labelled */
  kind: 'missed' | 'false_alarm';
  signal: ChurnSignal;
  expected: ChurnSignal[];
  found: ChurnSignal[];
}

export interface EvaluationReport {
  messages: number;
  signals: SignalScore[];
  sentiment: { labelled: number; agreeing: number; neutral: number; agreement: number | null };
  misses: Miss[];
}

export class EvaluationInputError extends Error {}

/** Reads NDJSON (one object a line) or CSV with a header, columns `text`, `signals` and optionally
 * `sentiment`. `signals` is a list (NDJSON) or names separated by `|`, `;` or `,` (CSV, quoted);
 * sentiment is a number whose sign counts (0 or empty: not labelled), or positive/negative. */
export function parseLabelledMessages(content: string): LabelledMessage[] {
  const trimmed = content.trimStart();
  const rows: Array<Record<string, unknown>> = trimmed.startsWith('{')
    ? trimmed
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line, i) => {
          try {
            return JSON.parse(line) as Record<string, unknown>;
          } catch {
            throw new EvaluationInputError(`line ${i + 1} is not JSON`);
          }
        })
    : (parse(trimmed, {
        columns: (header: string[]) => header.map((h) => h.trim().toLowerCase()),
        skip_empty_lines: true,
        relax_column_count: true,
      }) as Array<Record<string, unknown>>);
  return rows.map((row, i) => toMessage(row, i + 1));
}

function toMessage(row: Record<string, unknown>, line: number): LabelledMessage {
  if (typeof row.text !== 'string') throw new EvaluationInputError(`row ${line}: "text" is missing`);
  const raw = row.signals ?? [];
  const names = Array.isArray(raw) ? raw.map(String) : String(raw).split(/[|;,]/);
  const signals = names.map((name) => name.trim().toLowerCase()).filter((name) => name !== '' && name !== 'none');
  const unknown = signals.find((name) => !(CHURN_SIGNALS as readonly string[]).includes(name));
  if (unknown !== undefined)
    throw new EvaluationInputError(`row ${line}: "${unknown}" is not a churn signal (${CHURN_SIGNALS.join(', ')})`);
  return { text: row.text, signals: [...new Set(signals)] as ChurnSignal[], sentiment: sentimentLabel(row.sentiment, line) };
}

function sentimentLabel(raw: unknown, line: number): -1 | 1 | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const word = String(raw).trim().toLowerCase();
  if (word === 'positive' || word === 'pos') return 1;
  if (word === 'negative' || word === 'neg') return -1;
  const value = Number(word);
  if (!Number.isFinite(value))
    throw new EvaluationInputError(`row ${line}: sentiment "${String(raw)}" is not a number, positive or negative`);
  return value > 0 ? 1 : value < 0 ? -1 : null;
}

const ratio = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 1000) / 1000);

/** Reads each message as a ticket description (no subject, no priority, no earlier contacts). */
export function evaluateIntelligence(messages: LabelledMessage[], maxMisses = 50): EvaluationReport {
  const labelledSignals = new Set<ChurnSignal>(MEASURED_SIGNALS);
  for (const m of messages) for (const s of m.signals) labelledSignals.add(s);
  const measured = CHURN_SIGNALS.filter((s) => labelledSignals.has(s));
  const counts = new Map(measured.map((s) => [s, { tp: 0, fp: 0, fn: 0, tn: 0 }]));
  const misses: Miss[] = [];
  let labelled = 0;
  let agreeing = 0;
  let neutral = 0;
  for (const message of messages) {
    const result = analyseTicket({ subject: null, description: message.text, priority: null }, { recentContacts: 0 });
    const found = result.churnSignals as ChurnSignal[];
    for (const signal of measured) {
      const expected = message.signals.includes(signal);
      const got = found.includes(signal);
      const c = counts.get(signal)!;
      if (expected && got) c.tp++;
      else if (got) c.fp++;
      else if (expected) c.fn++;
      else c.tn++;
      if (expected !== got && misses.length < maxMisses) {
        misses.push({ text: message.text, kind: expected ? 'missed' : 'false_alarm', signal, expected: message.signals, found });
      }
    }
    if (message.sentiment !== null) {
      labelled++;
      if (result.sentiment === 0) neutral++;
      else if (Math.sign(result.sentiment) === message.sentiment) agreeing++;
    }
  }
  const signals = measured.map((signal): SignalScore => {
    const { tp, fp, fn, tn } = counts.get(signal)!;
    const precision = ratio(tp, tp + fp);
    const recall = ratio(tp, tp + fn);
    const f1 =
      precision === null || recall === null || precision + recall === 0
        ? null
        : Math.round(((2 * precision * recall) / (precision + recall)) * 1000) / 1000;
    return {
      signal,
      support: tp + fn,
      true_positives: tp,
      false_positives: fp,
      false_negatives: fn,
      true_negatives: tn,
      precision,
      recall,
      f1,
    };
  });
  return { messages: messages.length, signals, sentiment: { labelled, agreeing, neutral, agreement: ratio(agreeing, labelled) }, misses };
}
