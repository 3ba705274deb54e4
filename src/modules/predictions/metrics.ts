// How good a set of predictions is, on rows whose outcome is known: discrimination (AUC, with a
// bootstrap interval that resamples customers, not rows: one customer's snapshots are not
// independent), calibration (Brier, ECE over 10 equal-count bins, the calibration table) and what a
// CS team acts on (the decile table and the lift of the top decile).
import { seededRandom } from '../demo/generate.ts';

export interface Scored {
  probability: number;
  outcome: 0 | 1;
  /** The customer the row belongs to (the bootstrap's unit). */
  group?: string;
}

/** The area under the ROC curve: the chance a random positive scores above a random negative, ties
 * counting half (Mann–Whitney, by ranks). NaN without both outcomes. */
export function auc(rows: readonly Scored[]): number {
  const positives = rows.filter((r) => r.outcome === 1).length;
  const negatives = rows.length - positives;
  if (positives === 0 || negatives === 0) return NaN;
  const sorted = [...rows].sort((a, b) => a.probability - b.probability);
  let rankSum = 0;
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1]!.probability === sorted[i]!.probability) j++;
    const rank = (i + j) / 2 + 1; // the tied rows share the mean of their ranks
    for (let m = i; m <= j; m++) if (sorted[m]!.outcome === 1) rankSum += rank;
    i = j + 1;
  }
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

/** A 95% interval for the AUC: `rounds` resamples of whole customers (with replacement), seeded,
 * so the same rows always give the same interval. */
export function aucInterval(rows: readonly Scored[], options: { rounds?: number; seed?: number } = {}): [number, number] {
  const groups = new Map<string, Scored[]>();
  rows.forEach((row, i) => {
    const key = row.group ?? `#${i}`;
    const list = groups.get(key);
    if (list) list.push(row);
    else groups.set(key, [row]);
  });
  const keys = [...groups.keys()].sort();
  const random = seededRandom(options.seed ?? 42);
  const values: number[] = [];
  for (let round = 0; round < (options.rounds ?? 200); round++) {
    const sample: Scored[] = [];
    for (let i = 0; i < keys.length; i++) sample.push(...groups.get(keys[Math.floor(random.next() * keys.length)]!)!);
    const value = auc(sample);
    if (!Number.isNaN(value)) values.push(value);
  }
  if (values.length === 0) return [NaN, NaN];
  values.sort((a, b) => a - b);
  const at = (q: number) => values[Math.min(values.length - 1, Math.max(0, Math.round(q * (values.length - 1))))]!;
  return [at(0.025), at(0.975)];
}

/** Mean squared error of the probabilities. */
export const brier = (rows: readonly Scored[]): number => rows.reduce((sum, r) => sum + (r.probability - r.outcome) ** 2, 0) / rows.length;

export interface Bin {
  bin: number;
  n: number;
  mean_predicted: number;
  observed_rate: number;
}

/** Rows sorted by probability, cut into `count` bins of (nearly) equal size, lowest first. */
function equalCountBins(rows: readonly Scored[], count: number): Bin[] {
  const sorted = [...rows].sort((a, b) => a.probability - b.probability);
  const bins: Bin[] = [];
  for (let b = 0; b < count; b++) {
    const slice = sorted.slice(Math.floor((b * sorted.length) / count), Math.floor(((b + 1) * sorted.length) / count));
    if (slice.length === 0) continue;
    bins.push({
      bin: b + 1,
      n: slice.length,
      mean_predicted: slice.reduce((s, r) => s + r.probability, 0) / slice.length,
      observed_rate: slice.reduce((s, r) => s + r.outcome, 0) / slice.length,
    });
  }
  return bins;
}

/** The calibration table: 10 equal-count bins, predicted against observed. */
export const calibrationTable = (rows: readonly Scored[]): Bin[] => equalCountBins(rows, 10);

/** Expected calibration error: the rows-weighted mean gap between predicted and observed per bin. */
export function ece(rows: readonly Scored[]): number {
  return calibrationTable(rows).reduce((sum, bin) => sum + (bin.n / rows.length) * Math.abs(bin.mean_predicted - bin.observed_rate), 0);
}

export interface Decile {
  decile: number;
  n: number;
  events: number;
  observed_rate: number;
  /** The decile's rate over the base rate. */
  lift: number;
}

/** Deciles from the riskiest (1) down, with their churn rates and lift over the base rate. */
export function decileTable(rows: readonly Scored[]): Decile[] {
  const rate = baseRate(rows);
  return equalCountBins(rows, 10)
    .reverse()
    .map((bin, i) => ({
      decile: i + 1,
      n: bin.n,
      events: Math.round(bin.observed_rate * bin.n),
      observed_rate: bin.observed_rate,
      lift: rate > 0 ? bin.observed_rate / rate : NaN,
    }));
}

export const baseRate = (rows: readonly Scored[]): number => rows.reduce((s, r) => s + r.outcome, 0) / rows.length;

/** How much likelier the riskiest tenth churns than the average row. */
export const topDecileLift = (rows: readonly Scored[]): number => decileTable(rows)[0]?.lift ?? NaN;
