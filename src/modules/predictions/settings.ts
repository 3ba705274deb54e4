// The churn predictions' settings (docs/predictions.md → Settings), read from the configuration and
// passed down with the agent actions' settings as one value (src/settings.ts).
import type { Config } from '../../config.ts';

export interface PredictionSettings {
  /** PREDICTION_HORIZON_DAYS: the days ahead a prediction speaks of. */
  horizonDays: number;
  /** CHURN_GRACE_DAYS: a contract that ends is churn unless another starts within these days. */
  graceDays: number;
  /** PRIOR_ANNUAL_CHURN: the scorecard's base, for an organisation without history. */
  priorAnnualChurn: number;
  /** RISK_BANDS: the upper bounds of low, medium and high. */
  riskBands: [number, number, number];
  /** TRAIN_LOOKBACK_DAYS: how far back training snapshots go. */
  lookbackDays: number;
  /** TRAIN_MAX_CUSTOMERS: above this, training reads a fixed sample of the customers. */
  trainMaxCustomers: number;
  /** PREDICTION_DEBOUNCE_S: a stale customer is rescored this long after its first mark. */
  debounceSeconds: number;
  /** PREDICTION_NIGHTLY_AT: when (HH:MM, UTC) the nightly retrain and rescore run. */
  nightlyAt: string;
}

/** The horizon of the second model every retrain keeps: the CFO forecast reads churn within a year. */
export const YEAR_HORIZON_DAYS = 365;

export const DEFAULT_PREDICTION_SETTINGS: PredictionSettings = {
  horizonDays: 90,
  graceDays: 30,
  priorAnnualChurn: 0.12,
  riskBands: [0.05, 0.15, 0.35],
  lookbackDays: 730,
  trainMaxCustomers: 25_000,
  debounceSeconds: 5,
  nightlyAt: '02:00',
};

export const predictionSettingsOf = (config: Config): PredictionSettings => ({
  horizonDays: config.predictionHorizonDays,
  graceDays: config.churnGraceDays,
  priorAnnualChurn: config.priorAnnualChurn,
  riskBands: config.riskBands,
  lookbackDays: config.trainLookbackDays,
  trainMaxCustomers: config.trainMaxCustomers,
  debounceSeconds: config.predictionDebounceS,
  nightlyAt: config.predictionNightlyAt,
});
