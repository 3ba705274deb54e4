import { Type as t } from '@sinclair/typebox';
import { BACKTEST_METHODS, BACKTEST_STATUSES, RISK_BANDS } from '../../db/schema/index.ts';
import { currency, day, enumOf, instant, nullable } from '../../lib/record-fields.ts';

// The vocabulary below is the API's, and the model, the features and the console take it from here:
// this file imports no code that runs queries, so the console's own typecheck can read it.
/** The concepts drivers are grouped by: each feature belongs to one, a prediction shows one driver
 * per group (its impact the sum of its features'), in this order when impacts tie. */
export const DRIVER_GROUPS = [
  'tenure',
  'renewal',
  'billing',
  'arr_trend',
  'seats_trend',
  'payments',
  'ticket_volume',
  'ticket_tone',
  'churn_signals',
  'cancellation_notice',
  'segment',
] as const;
export type DriverGroup = (typeof DRIVER_GROUPS)[number];

export const MODEL_KINDS = ['prior', 'prior_recalibrated', 'logistic'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

/** What `min_probability` may be (a churn probability). */
export const PROBABILITY_RANGE = { min: 0, max: 1 } as const;

export const PREDICTION_SORTS = ['-arr_at_risk', '-probability', 'renewal_date'] as const;
export type PredictionSort = (typeof PREDICTION_SORTS)[number];

/** Every parameter GET /api/cfo/predictions understands; anything else is a 400 naming it. */
export const ListPredictionsQuery = t.Object({
  /** A comma list of bands; checked by the route (a message that names it). */
  risk: t.Optional(t.String({ maxLength: 100 })),
  /** A number from 0 to 1; checked by the route. */
  min_probability: t.Optional(t.String({ maxLength: 40 })),
  customer_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
  currency: t.Optional(currency),
  csm_email: t.Optional(t.String({ minLength: 3, maxLength: 320 })),
  /** The customer's name, domain or e-mail contains it (as on /api/customers). */
  q: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  sort: t.Optional(t.Union(PREDICTION_SORTS.map((s) => t.Literal(s)))),
  limit: t.Optional(t.String()),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
});
export type ListPredictionsQuery = typeof ListPredictionsQuery.static;

export const PredictionParams = t.Object({ customer_id: t.String({ minLength: 1, maxLength: 300 }) });

const DriverFeature = t.Object(
  {
    feature: t.String({ description: 'the feature key' }),
    label: t.String(),
    value: t.Number(),
    reference: t.Optional(
      t.Number({ description: "the model's reference customer's value (absent on predictions made before drivers were grouped)" }),
    ),
    impact: t.Number({ description: 'logit units' }),
  },
  { additionalProperties: false },
);

const Driver = t.Object(
  {
    group: t.Union(
      [...DRIVER_GROUPS, 'other'].map((g) => t.Literal(g)),
      { description: 'the concept; `other` (list items only) sums the groups after the five strongest' },
    ),
    label: t.String({ description: 'the customer\'s situation in this concept, e.g. "Term ends in 45 days; notice given"' }),
    impact: t.Number({ description: "logit units, the sum of its features' impacts: σ(base_logit + Σ impact) = probability" }),
    points: t.Number({
      description:
        "percentage points this group adds to the probability: the probability minus the one it would have were this group's values the reference customer's, every other group held (positive raises the risk); not additive across drivers",
    }),
    at_reference: t.Boolean({ description: "every feature of the group has the reference customer's value (impact 0)" }),
    features: t.Optional(t.Array(DriverFeature, { description: 'the per-feature detail, strongest first (single prediction only)' })),
  },
  { additionalProperties: false },
);

/** A customer's current churn prediction. A list item carries the five strongest driver groups
 * and `other` (the sum of the rest), a single prediction every group with its features. */
export const Prediction = t.Object(
  {
    customer_id: t.String(),
    customer_name: t.String(),
    probability: t.Number({ minimum: 0, maximum: 1, description: 'of churning within horizon_days' }),
    base_logit: t.Number(),
    risk: enumOf(RISK_BANDS),
    previous_risk: nullable(enumOf(RISK_BANDS)),
    arr: t.Integer({ description: 'minor units' }),
    currency,
    arr_at_risk: t.Integer({ description: 'round(arr × probability), minor units' }),
    horizon_days: t.Integer(),
    renewal_date: t.Union([day, t.Null()], {
      description:
        "The customer's renewal_date: the earliest end of a contract that counts; when renewing is false, the last day of service",
    }),
    renewing: t.Union([t.Boolean(), t.Null()], {
      description: 'false when notice was given on the contract ending on renewal_date; null without a renewal_date',
    }),
    drivers: t.Array(Driver, { description: 'strongest first' }),
    data_completeness: t.Number({ minimum: 0, maximum: 1 }),
    missing_signals: t.Array(t.String()),
    stale: t.Boolean({ description: 'its inputs changed since; a recompute is coming' }),
    model_id: t.String(),
    model_kind: enumOf(MODEL_KINDS),
    predicted_at: instant,
  },
  { additionalProperties: false },
);

const BandTotals = t.Object({ customers: t.Integer(), arr: t.Integer() }, { additionalProperties: false });

/** Per currency, over the whole filtered set (not the page). */
export const PredictionSummary = t.Object(
  {
    currency,
    customers: t.Integer(),
    total_arr: t.Integer(),
    arr_at_risk: t.Integer(),
    expected_churned_customers: t.Number({ description: 'Σ probability' }),
    expected_grr: nullable(t.Number({ description: '1 − arr_at_risk ÷ total_arr' })),
    by_risk: t.Object({ low: BandTotals, medium: BandTotals, high: BandTotals, critical: BandTotals }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

/** POST /api/cfo/predictions/recompute: every scored customer, or those named. */
export const RecomputeBody = t.Object(
  {
    customer_ids: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 300 }), { minItems: 1, maxItems: 10_000 })),
    /** Retrain the model first (in the fitting thread); its rescore follows. */
    retrain: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
);
export type RecomputeBody = typeof RecomputeBody.static;
export const RecomputeAccepted = t.Object(
  { job_id: t.String({ description: 'the rescore, or with retrain the retrain (which queues the rescore when it ends)' }) },
  { additionalProperties: false },
);

export const ModelParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) });
export const ListModelsQuery = t.Object({ limit: t.Optional(t.String()), cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })) });

/** A model the organisation's predictions were or could have been made by, with everything needed
 * to reproduce its scores. */
export const PredictionModel = t.Object(
  {
    id: t.String(),
    kind: enumOf(MODEL_KINDS),
    status: enumOf(['active', 'rejected', 'retired'] as const),
    horizon_days: t.Integer(),
    parameters: t.Object({
      base: t.Number({ description: 'logit' }),
      features: t.Array(t.Object({ key: t.String(), weight: t.Number(), centre: t.Number() })),
    }),
    metrics: t.Record(t.String(), t.Unknown()),
    reject_reason: nullable(t.String()),
    trained_at: instant,
  },
  { additionalProperties: false },
);

/** POST /api/cfo/backtests: how the organisation's model would have done on its own history. */
export const BacktestBody = t.Object(
  {
    method: t.Optional(enumOf(BACKTEST_METHODS)),
    horizon_days: t.Optional(t.Integer({ minimum: 7, maximum: 365, error: 'must be a whole number of days from 7 to 365' })),
    as_of: t.Optional(day),
    cutoff: t.Optional(day),
  },
  { additionalProperties: false },
);
export type BacktestBody = typeof BacktestBody.static;
export const BacktestParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) });

export const Backtest = t.Object(
  {
    id: t.String(),
    status: enumOf(BACKTEST_STATUSES),
    method: enumOf(BACKTEST_METHODS),
    horizon_days: t.Integer(),
    as_of: nullable(day),
    cutoff: nullable(day),
    model_kind: nullable(enumOf(MODEL_KINDS)),
    model: nullable(
      t.Record(t.String(), t.Unknown(), { description: 'the model trained for the test: kind, parameters, what it was trained on' }),
    ),
    metrics: nullable(
      t.Record(t.String(), t.Unknown(), {
        description:
          'auc, auc_ci95, prior_auc, auc_without_notice, top_decile_lift, brier, ece, base_rate, rows, events, customers, calibration_table, decile_table; `progress` while running',
      }),
    ),
    warning: nullable(t.String()),
    warnings: t.Array(t.String()),
    error: nullable(t.String()),
    requested_by: t.String(),
    created_at: instant,
    started_at: nullable(instant),
    finished_at: nullable(instant),
  },
  { additionalProperties: false },
);
