// What the fitting thread does with an organisation's labelled history: a backtest report, or a
// retrained candidate judged against the model in force. Pure: the same rows give the same result.
import { FEATURE_KEYS, PRIOR_SCORECARD } from './features.ts';
import type { AdditiveModel } from './logistic.ts';
import { snapshotDays } from './labels.ts';
import {
  addDays,
  backtestCrossValidation,
  backtestOutOfTime,
  chooseKind,
  fittable,
  promotion,
  trainModel,
  type BacktestMetrics,
  type ModelKind,
  type Promotion,
  type TrainedModel,
} from './training.ts';
import type { History, LostHistory } from './history.ts';
import type { BacktestMethod } from '../../db/schema/index.ts';

export interface FittingSettings {
  horizonDays: number;
  graceDays: number;
  priorAnnualChurn: number;
  /** How far back training snapshots go (TRAIN_LOOKBACK_DAYS). */
  lookbackDays: number;
}

export interface BacktestPlan {
  method: BacktestMethod;
  horizonDays: number;
  /** cross_validation: the one snapshot day. */
  asOf: string | null;
  /** out_of_time: the split. */
  cutoff: string | null;
}

/** The backtest's defaults (docs/predictions.md "Backtests"): out of time with the cutoff H + 180 days before
 * today; cross-validation at the last day whose outcome is known, H + grace days before today (at
 * H days before, churn at a period end in the last grace days would not be recognised yet and its
 * customer would count as staying). */
export function planBacktest(
  request: { method?: BacktestMethod; horizonDays?: number; asOf?: string; cutoff?: string },
  today: string,
  defaultHorizon: number,
  graceDays: number,
): BacktestPlan {
  const method = request.method ?? 'out_of_time';
  const horizonDays = request.horizonDays ?? defaultHorizon;
  if (method === 'cross_validation')
    return { method, horizonDays, asOf: request.asOf ?? addDays(today, -horizonDays - graceDays), cutoff: null };
  return { method, horizonDays, asOf: null, cutoff: request.cutoff ?? addDays(today, -horizonDays - 180) };
}

/** The snapshot days a plan reads. */
export function backtestDays(plan: BacktestPlan, today: string, settings: FittingSettings): string[] {
  if (plan.method === 'cross_validation') return [plan.asOf!];
  return snapshotDays({ today, horizonDays: plan.horizonDays, graceDays: settings.graceDays, lookbackDays: settings.lookbackDays });
}

/** The days of the nightly training: every labelled snapshot of the lookback. */
export const trainingDays = (today: string, settings: FittingSettings) =>
  snapshotDays({ today, horizonDays: settings.horizonDays, graceDays: settings.graceDays, lookbackDays: settings.lookbackDays });

export interface ModelSummary {
  kind: ModelKind;
  horizon_days: number;
  parameters: AdditiveModel;
  trained_on: { rows: number; events: number; customers: number };
  fit: TrainedModel['fit'] | null;
  platt: TrainedModel['platt'] | null;
}

export const summariseModel = (model: TrainedModel): ModelSummary => ({
  kind: model.kind,
  horizon_days: model.horizonDays,
  parameters: model.additive,
  trained_on: model.trainedOn,
  fit: model.fit ?? null,
  platt: model.platt ?? null,
});

export interface BacktestReport {
  model: ModelSummary;
  metrics: BacktestMetrics & { sampled_customers: number; total_customers: number; lost_history: LostHistory };
  warnings: string[];
}

export function runBacktest(history: History, plan: BacktestPlan, settings: FittingSettings, seed = 42): BacktestReport {
  const training = { horizonDays: plan.horizonDays, priorAnnualChurn: settings.priorAnnualChurn, seed };
  const result =
    plan.method === 'cross_validation'
      ? backtestCrossValidation(FEATURE_KEYS, PRIOR_SCORECARD, history.rows, training)
      : backtestOutOfTime(FEATURE_KEYS, PRIOR_SCORECARD, history.rows, plan.cutoff!, { ...training, graceDays: settings.graceDays });
  const warnings = [
    ...(result.metrics.warning ? [result.metrics.warning] : []),
    ...(history.noRevisionHistory ? ['no_revision_history'] : []),
  ];
  return {
    model: summariseModel(result.model),
    metrics: {
      ...result.metrics,
      sampled_customers: history.sampled,
      total_customers: history.customers,
      lost_history: history.lostHistory,
    },
    warnings,
  };
}

export interface RetrainResult {
  candidate: ModelSummary;
  /** The candidate's tier and the incumbent's, each trained on the split's training rows and
   * scored on its test rows. */
  backtest: { cutoff: string; candidate: BacktestMetrics; incumbent: BacktestMetrics | null };
  promotion: Promotion;
  warnings: string[];
  lostHistory: LostHistory;
}

/** Trains the tier the organisation's history allows on every labelled row, and decides on the
 * out-of-time split (cutoff H + 180 days before today) whether it replaces the model in force. */
export function retrain(
  history: History,
  incumbentKind: ModelKind | null,
  today: string,
  settings: FittingSettings,
  seed = 42,
): RetrainResult {
  const training = { horizonDays: settings.horizonDays, priorAnnualChurn: settings.priorAnnualChurn, seed, graceDays: settings.graceDays };
  const kind = fittable(chooseKind(history.rows), history.rows);
  const cutoff = addDays(today, -settings.horizonDays - 180);
  const candidateTest = backtestOutOfTime(FEATURE_KEYS, PRIOR_SCORECARD, history.rows, cutoff, training, kind);
  const incumbentTest = incumbentKind
    ? backtestOutOfTime(FEATURE_KEYS, PRIOR_SCORECARD, history.rows, cutoff, training, incumbentKind)
    : null;
  const model = trainModel(kind, FEATURE_KEYS, PRIOR_SCORECARD, history.rows, training);
  return {
    candidate: summariseModel(model),
    backtest: { cutoff, candidate: candidateTest.metrics, incumbent: incumbentTest?.metrics ?? null },
    promotion: promotion({ model, metrics: candidateTest.metrics }, incumbentTest ? { metrics: incumbentTest.metrics } : null),
    warnings: history.noRevisionHistory ? ['no_revision_history'] : [],
    lostHistory: history.lostHistory,
  };
}
