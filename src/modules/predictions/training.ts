// Training and judging churn models on labelled snapshots (a customer's features at a day t and
// whether it churned within the horizon after t). Pure functions over rows the database built: the
// same rows and seed give the same model and the same report.
//
// Three tiers, chosen by how much labelled history an organisation has:
//   prior               fewer than 10 churn events: a fixed scorecard (the points CS tools ship),
//                       its base the annual prior churn rate brought to the horizon;
//   prior_recalibrated  10–49 events (or fewer than 200 customers): the scorecard, Platt-scaled on
//                       the organisation's history;
//   logistic            50+ events and 200+ customers: L2 logistic regression on standardised
//                       features, Platt-calibrated on out-of-fold scores (folds grouped by customer).
// Every tier ends in the same additive form (logistic.ts), so every prediction explains itself.
import { seededRandom } from '../demo/generate.ts';
import type { ModelKind } from './model.ts';
import {
  additiveFromFit,
  fitLogistic,
  fitPlatt,
  logit,
  sigmoid,
  standardise,
  standardiser,
  type AdditiveModel,
  type Platt,
} from './logistic.ts';
import {
  auc,
  aucInterval,
  baseRate,
  brier,
  calibrationTable,
  decileTable,
  ece,
  topDecileLift,
  type Bin,
  type Decile,
  type Scored,
} from './metrics.ts';

// The kinds are the API's vocabulary (model.ts); the fitting thread and the training job name them from here.
export type { ModelKind };

/** One labelled snapshot: a customer's feature values at day `t`. */
export interface Snapshot {
  customerId: string;
  /** YYYY-MM-DD */
  t: string;
  values: number[];
  outcome: 0 | 1;
  /** The churn day when `outcome` is 1: events are distinct (customer, churn day) pairs. */
  churnDay?: string | null;
  /** A cancellation was already known at `t` (the label is then nearly certain). */
  noticeKnown?: boolean;
}

/** The scorecard: a fixed weight per feature, around a neutral value. */
export interface PriorFeature {
  key: string;
  weight: number;
  neutral: number;
}

export interface TrainingSettings {
  horizonDays: number;
  /** The prior's annual churn rate (PRIOR_ANNUAL_CHURN). */
  priorAnnualChurn: number;
  /** L2 penalty of the logistic tier, on standardised features. */
  lambda?: number;
  folds?: number;
  seed?: number;
}

export interface TrainedModel {
  kind: ModelKind;
  horizonDays: number;
  additive: AdditiveModel;
  /** What it was trained on. */
  trainedOn: { rows: number; events: number; customers: number };
  /** The solver's account (logistic only). */
  fit?: { iterations: number; converged: boolean; gradientNorm: number; lambda: number };
  platt?: Platt;
}

/** Distinct (customer, churn day) pairs among the positive rows. */
export function countEvents(rows: readonly Snapshot[]): number {
  return new Set(rows.filter((r) => r.outcome === 1).map((r) => `${r.customerId} ${r.churnDay ?? r.t}`)).size;
}

/** `kind`, or the prior when the rows cannot fit it (no events, or nothing but events). */
export function fittable(kind: ModelKind, rows: readonly Snapshot[]): ModelKind {
  const positives = rows.filter((r) => r.outcome === 1).length;
  return positives === 0 || positives === rows.length ? 'prior' : kind;
}

export const countCustomers = (rows: readonly Snapshot[]) => new Set(rows.map((r) => r.customerId)).size;

export function chooseKind(rows: readonly Snapshot[]): ModelKind {
  const events = countEvents(rows);
  if (events < 10) return 'prior';
  if (events < 50 || countCustomers(rows) < 200) return 'prior_recalibrated';
  return 'logistic';
}

/** The base of the prior: the chance to churn within the horizon at PRIOR_ANNUAL_CHURN a year. */
export const priorBase = (settings: Pick<TrainingSettings, 'horizonDays' | 'priorAnnualChurn'>) =>
  logit(1 - (1 - settings.priorAnnualChurn) ** (settings.horizonDays / 365));

export function priorModel(
  prior: readonly PriorFeature[],
  settings: Pick<TrainingSettings, 'horizonDays' | 'priorAnnualChurn'>,
): AdditiveModel {
  return { base: priorBase(settings), features: prior.map((f) => ({ key: f.key, weight: f.weight, centre: f.neutral })) };
}

/** The logit an additive model gives `values`. */
export const scoreLogit = (model: AdditiveModel, values: readonly number[]) =>
  model.features.reduce((z, f, j) => z + f.weight * (values[j]! - f.centre), model.base);

/** A model scaled by Platt: logit' = slope · logit + offset, still additive. */
const recalibrated = (model: AdditiveModel, platt: Platt): AdditiveModel => ({
  base: platt.slope * model.base + platt.offset,
  features: model.features.map((f) => ({ ...f, weight: platt.slope * f.weight })),
});

/** The same model written around a reference customer — each feature's median over the training
 * rows (an actual value, so a yes/no feature's reference is the usual answer) — instead of the rows'
 * means: a driver's impact is then its push away from a typical customer, and a customer who is
 * typical in a concept (no notice, no overdue invoice, the usual segment) gets exactly 0 there.
 * Every logit is unchanged: the base absorbs the shift. */
export function aroundReference(model: AdditiveModel, rows: readonly Snapshot[]): AdditiveModel {
  if (rows.length === 0) return model;
  const reference = model.features.map((_, j) => {
    const sorted = rows.map((r) => r.values[j]!).sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) / 2)]!;
  });
  return {
    base: model.features.reduce((base, f, j) => base + f.weight * (reference[j]! - f.centre), model.base),
    features: model.features.map((f, j) => ({ ...f, centre: reference[j]! })),
  };
}

/** Fold of each customer (0…folds−1): customers shuffled by the seed, then dealt round. */
export function foldsByCustomer(rows: readonly Snapshot[], folds: number, seed: number): Map<string, number> {
  const customers = [...new Set(rows.map((r) => r.customerId))].sort();
  const random = seededRandom(seed);
  for (let i = customers.length - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    [customers[i], customers[j]] = [customers[j]!, customers[i]!];
  }
  return new Map(customers.map((c, i) => [c, i % folds]));
}

/** The solutions of a training's fits (each fold's and the full one's, in standardised terms), to
 * start the next training of a nearby problem from: the forecast backtest trains a model at each of
 * its origins on snapshots that mostly overlap, and Newton then needs fewer steps to the same
 * optimum (within its tolerance). */
export type FitStarts = Map<string, number[]>;

function fitLogisticTier(
  keys: readonly string[],
  rows: readonly Snapshot[],
  settings: TrainingSettings,
  starts?: FitStarts,
  name = 'full',
) {
  const lambda = settings.lambda ?? 1;
  const standard = standardiser(rows.map((r) => r.values));
  const start = starts?.get(name);
  const fit = fitLogistic(
    rows.map((r) => standardise(standard, r.values)),
    rows.map((r) => r.outcome),
    { lambda, ...(start ? { start } : {}) },
  );
  starts?.set(name, [fit.intercept, ...fit.coefficients]);
  return { fit, standard, lambda, raw: additiveFromFit(keys, fit, standard) };
}

/** Trains a model of `kind` on `rows` (the feature order of `keys` and `prior`). */
export function trainModel(
  kind: ModelKind,
  keys: readonly string[],
  prior: readonly PriorFeature[],
  rows: readonly Snapshot[],
  settings: TrainingSettings,
  starts?: FitStarts,
): TrainedModel {
  const trainedOn = { rows: rows.length, events: countEvents(rows), customers: countCustomers(rows) };
  const base = priorModel(prior, settings);
  if (kind === 'prior') return { kind, horizonDays: settings.horizonDays, additive: base, trainedOn };
  if (kind === 'prior_recalibrated') {
    const platt = fitPlatt(
      rows.map((r) => scoreLogit(base, r.values)),
      rows.map((r) => r.outcome),
    );
    return { kind, horizonDays: settings.horizonDays, additive: recalibrated(base, platt), trainedOn, platt };
  }
  // Out-of-fold scores for the calibration: a model never calibrates on rows it was fitted to.
  const folds = settings.folds ?? 5;
  const foldOf = foldsByCustomer(rows, folds, settings.seed ?? 42);
  const oofScores = new Array<number>(rows.length).fill(0);
  for (let k = 0; k < folds; k++) {
    const train = rows.filter((r) => foldOf.get(r.customerId) !== k);
    if (train.length === 0 || train.every((r) => r.outcome === train[0]!.outcome)) continue;
    const { raw } = fitLogisticTier(keys, train, settings, starts, `fold ${k}`);
    rows.forEach((r, i) => {
      if (foldOf.get(r.customerId) === k) oofScores[i] = scoreLogit(raw, r.values);
    });
  }
  const platt = fitPlatt(
    oofScores,
    rows.map((r) => r.outcome),
  );
  const { fit, lambda, raw } = fitLogisticTier(keys, rows, settings, starts);
  return {
    kind,
    horizonDays: settings.horizonDays,
    additive: aroundReference(recalibrated(raw, platt), rows),
    trainedOn,
    fit: { iterations: fit.iterations, converged: fit.converged, gradientNorm: fit.gradientNorm, lambda },
    platt,
  };
}

export const probabilityOf = (model: TrainedModel | AdditiveModel, values: readonly number[]) =>
  sigmoid(scoreLogit('additive' in model ? model.additive : model, values));

export interface BacktestMetrics {
  rows: number;
  events: number;
  customers: number;
  base_rate: number;
  auc: number | null;
  auc_ci95: [number, number] | null;
  /** The scorecard's AUC on the same rows, and its interval from the same resamples. */
  prior_auc: number | null;
  prior_auc_ci95: [number, number] | null;
  auc_without_notice: number | null;
  top_decile_lift: number | null;
  brier: number | null;
  ece: number | null;
  calibration_table: Bin[];
  decile_table: Decile[];
  warning?: 'insufficient_events';
}

const finite = (x: number) => (Number.isFinite(x) ? x : null);

/** The report on scored rows; with fewer than 10 events, counts only and a warning. */
export function evaluate(rows: readonly (Snapshot & { probability: number; priorProbability: number })[], seed = 42): BacktestMetrics {
  const scored: Scored[] = rows.map((r) => ({ probability: r.probability, outcome: r.outcome, group: r.customerId }));
  const counts = {
    rows: rows.length,
    events: countEvents(rows),
    customers: countCustomers(rows),
    base_rate: rows.length ? baseRate(scored) : 0,
  };
  if (counts.events < 10) {
    return {
      ...counts,
      auc: null,
      auc_ci95: null,
      prior_auc: null,
      prior_auc_ci95: null,
      auc_without_notice: null,
      top_decile_lift: null,
      brier: null,
      ece: null,
      calibration_table: [],
      decile_table: [],
      warning: 'insufficient_events',
    };
  }
  const withoutNotice = scored.filter((_, i) => !rows[i]!.noticeKnown);
  const prior: Scored[] = rows.map((r) => ({ probability: r.priorProbability, outcome: r.outcome, group: r.customerId }));
  // The same seed draws the same customers for both: the intervals come from the same resamples.
  const interval = aucInterval(scored, { seed });
  const priorInterval = aucInterval(prior, { seed });
  return {
    ...counts,
    auc: finite(auc(scored)),
    auc_ci95: Number.isFinite(interval[0]) ? interval : null,
    prior_auc: finite(auc(prior)),
    prior_auc_ci95: Number.isFinite(priorInterval[0]) ? priorInterval : null,
    auc_without_notice: finite(auc(withoutNotice)),
    top_decile_lift: finite(topDecileLift(scored)),
    brier: brier(scored),
    ece: ece(scored),
    calibration_table: calibrationTable(scored),
    decile_table: decileTable(scored),
  };
}

export interface BacktestResult {
  kind: ModelKind;
  model: TrainedModel;
  metrics: BacktestMetrics;
}

/** Out of time: train on the rows whose label window closed by `cutoff`, test on the rows after it.
 * The tier is the one the training rows allow, unless `kind` names one (promotion compares the
 * candidate with the active model's kind refitted on the same rows). */
export function backtestOutOfTime(
  keys: readonly string[],
  prior: readonly PriorFeature[],
  rows: readonly Snapshot[],
  cutoff: string,
  settings: TrainingSettings & { graceDays: number },
  kind?: ModelKind,
): BacktestResult {
  const { train, test } = splitOutOfTime(rows, cutoff, settings);
  return scoreHeldOut(keys, prior, train, test, settings, kind);
}

export function splitOutOfTime(rows: readonly Snapshot[], cutoff: string, settings: { horizonDays: number; graceDays: number }) {
  const closesBy = (t: string) => addDays(t, settings.horizonDays + settings.graceDays) <= cutoff;
  return { train: rows.filter((r) => closesBy(r.t)), test: rows.filter((r) => r.t > cutoff) };
}

/** Cross-validation: one snapshot per customer, `folds` folds of customers; each fold scored by a
 * model trained on the others. The tier is the one the whole history allows, the one the service
 * would run: chosen per fold, an organisation near 50 events had some folds scored by the
 * recalibrated scorecard and others by the logistic tier, on scales that do not pool (seed 1 of
 * the demo: a pooled AUC of 0.85 from folds of 0.80–0.96). */
export function backtestCrossValidation(
  keys: readonly string[],
  prior: readonly PriorFeature[],
  rows: readonly Snapshot[],
  settings: TrainingSettings,
): BacktestResult {
  const folds = settings.folds ?? 5;
  const foldOf = foldsByCustomer(rows, folds, settings.seed ?? 42);
  const scored: (Snapshot & { probability: number; priorProbability: number })[] = [];
  const base = priorModel(prior, settings);
  const kind = chooseKind(rows);
  for (let k = 0; k < folds; k++) {
    const train = rows.filter((r) => foldOf.get(r.customerId) !== k);
    const model = trainModel(fittable(kind, train), keys, prior, train, settings);
    for (const r of rows)
      if (foldOf.get(r.customerId) === k)
        scored.push({ ...r, probability: probabilityOf(model, r.values), priorProbability: probabilityOf(base, r.values) });
  }
  // The model reported is the one trained on every row, as the service would use it.
  const model = trainModel(kind, keys, prior, rows, settings);
  return { kind: model.kind, model, metrics: evaluate(scored, settings.seed) };
}

function scoreHeldOut(
  keys: readonly string[],
  prior: readonly PriorFeature[],
  train: readonly Snapshot[],
  test: readonly Snapshot[],
  settings: TrainingSettings,
  kind?: ModelKind,
): BacktestResult {
  const model = trainModel(fittable(kind ?? chooseKind(train), train), keys, prior, train, settings);
  const base = priorModel(prior, settings);
  const scored = test.map((r) => ({ ...r, probability: probabilityOf(model, r.values), priorProbability: probabilityOf(base, r.values) }));
  return { kind: model.kind, model, metrics: evaluate(scored, settings.seed) };
}

export interface Promotion {
  status: 'active' | 'rejected';
  reason: string | null;
}

/** Whether a candidate replaces the active model: on the same out-of-time test rows its AUC is not
 * worse by more than 0.01 than the active model's specification refitted on the same training rows,
 * it converged, and — with at least 50 test events — its ECE is at most 0.05. */
export function promotion(
  candidate: { model: TrainedModel; metrics: BacktestMetrics },
  incumbent: { metrics: BacktestMetrics } | null,
): Promotion {
  if (candidate.model.fit && !candidate.model.fit.converged)
    return { status: 'rejected', reason: `the solver did not converge (gradient ${candidate.model.fit.gradientNorm.toExponential(2)})` };
  const m = candidate.metrics;
  if (m.events >= 50 && m.ece !== null && m.ece > 0.05)
    return { status: 'rejected', reason: `calibration error ${m.ece.toFixed(3)} above 0.05 on ${m.events} test events` };
  const mine = m.auc;
  const theirs = incumbent?.metrics.auc ?? null;
  if (mine !== null && theirs !== null && mine < theirs - 0.01) {
    return {
      status: 'rejected',
      reason: `AUC ${mine.toFixed(3)} is worse than the active model's ${theirs.toFixed(3)} (refitted on the same rows) by more than 0.01`,
    };
  }
  return { status: 'active', reason: null };
}

/** `day` (YYYY-MM-DD) plus `days`. */
export function addDays(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}
