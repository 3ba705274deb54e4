import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  date,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { customers } from './customers.ts';
import { timestamptz } from './columns.ts';
import { runColumns } from './runs.ts';

export const MODEL_STATUSES = ['active', 'rejected', 'retired'] as const;
export type ModelStatus = (typeof MODEL_STATUSES)[number];
export const RISK_BANDS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskBand = (typeof RISK_BANDS)[number];

/** An organisation's churn models: the one in force (`active`), those a better one replaced
 * (`retired`) and candidates that lost (`rejected`, with the reason). Parameters are kept whole, so
 * every score a model gave can be reproduced. */
export const predictionModels = pgTable(
  'prediction_models',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<'prior' | 'prior_recalibrated' | 'logistic'>().notNull(),
    status: text('status').$type<ModelStatus>().notNull(),
    horizonDays: integer('horizon_days').notNull(),
    /** The additive form: base, and per feature its key, weight and centre (predictions/logistic.ts). */
    parameters: jsonb('parameters').$type<{ base: number; features: { key: string; weight: number; centre: number }[] }>().notNull(),
    /** How it was trained (rows, events, customers, solver) and how it did in its backtest. */
    metrics: jsonb('metrics').$type<Record<string, unknown>>().notNull().default({}),
    rejectReason: text('reject_reason'),
    trainedAt: timestamptz('trained_at').notNull().defaultNow(),
  },
  (table) => [
    uniqueIndex('prediction_models_one_active').on(table.orgId, table.horizonDays).where(sql`${table.status} = 'active'`),
    index('prediction_models_org_trained_idx').on(table.orgId, table.trainedAt.desc()),
    check('prediction_models_status_check', sql`${table.status} in ('active', 'rejected', 'retired')`),
    check('prediction_models_kind_check', sql`${table.kind} in ('prior', 'prior_recalibrated', 'logistic')`),
  ],
);

export type PredictionModel = typeof predictionModels.$inferSelect;

/** Each scored customer's current prediction, as the model in force made it. */
export const predictions = pgTable(
  'predictions',
  {
    orgId: text('org_id').notNull(),
    customerId: text('customer_id').notNull(),
    modelId: text('model_id')
      .notNull()
      .references(() => predictionModels.id),
    horizonDays: integer('horizon_days').notNull(),
    probability: doublePrecision('probability').notNull(),
    /** σ(base_logit + Σ drivers[].impact) = probability. */
    baseLogit: doublePrecision('base_logit').notNull(),
    risk: text('risk').$type<RiskBand>().notNull(),
    /** The band before the last change of band (null until it changes). */
    previousRisk: text('previous_risk').$type<RiskBand>(),
    /** The ARR the prediction puts at risk is measured on (minor units), in `currency`. */
    arr: bigint('arr', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    /** The earliest end of a counting contract (docs/arr-data.md "Which contracts count"). */
    renewalDate: date('renewal_date', { mode: 'string' }),
    /** False when notice was given on the contract ending on renewal_date; null without one. */
    renewing: boolean('renewing'),
    /** Every feature's {feature, label, value, impact}, by |impact|. */
    /** Grouped by concept with their features (drivers.ts); one per feature before groups. */
    drivers: jsonb('drivers')
      .$type<
        (
          | { group: string; label: string; impact: number; points: number; at_reference: boolean; features?: unknown[] }
          | { feature: string; label: string; value: number; impact: number }
        )[]
      >()
      .notNull(),
    dataCompleteness: real('data_completeness').notNull(),
    missingSignals: jsonb('missing_signals').$type<string[]>().notNull(),
    predictedAt: timestamptz('predicted_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.orgId, table.customerId] }),
    foreignKey({ columns: [table.orgId, table.customerId], foreignColumns: [customers.orgId, customers.id] }).onDelete('cascade'),
    // A band's customers of one organisation (risk = any(…) and org_id = …). Led by the band, not
    // the organisation: an index led by org_id alone ties with the primary key for a chunk's
    // `org_id = $1` when the planner believes the table empty (analysed before the first scores;
    // the embedded database never analyses on its own), and a chunk then scanned every prediction
    // of its organisation (test/modules/predictions-chunk-plans.test.ts).
    index('predictions_risk_org_idx').on(table.risk, table.orgId),
    check('predictions_probability_check', sql`${table.probability} >= 0 and ${table.probability} <= 1`),
    check('predictions_risk_check', sql`${table.risk} in ('low', 'medium', 'high', 'critical')`),
  ],
);

export type Prediction = typeof predictions.$inferSelect;

export { BACKTEST_STATUSES, type BacktestStatus } from './runs.ts';
export const BACKTEST_METHODS = ['out_of_time', 'cross_validation'] as const;
export type BacktestMethod = (typeof BACKTEST_METHODS)[number];

/** Backtests an organisation asked for (or the nightly run made): how its model would have done on
 * its own history. At most one queued or running per organisation. */
export const predictionBacktests = pgTable(
  'prediction_backtests',
  {
    ...runColumns(),
    method: text('method').$type<BacktestMethod>().notNull(),
    horizonDays: integer('horizon_days').notNull(),
    /** cross_validation: the snapshot day. */
    asOf: date('as_of', { mode: 'string' }),
    /** out_of_time: training labels close by this day, test snapshots come after it. */
    cutoff: date('cutoff', { mode: 'string' }),
    /** The tier the training rows gave, and the model's parameters. */
    modelKind: text('model_kind').$type<'prior' | 'prior_recalibrated' | 'logistic'>(),
    model: jsonb('model').$type<Record<string, unknown>>(),
    metrics: jsonb('metrics').$type<Record<string, unknown>>(),
    warning: text('warning'),
  },
  (table) => [
    uniqueIndex('prediction_backtests_one_open').on(table.orgId).where(sql`${table.status} in ('queued', 'running')`),
    index('prediction_backtests_org_created_idx').on(table.orgId, table.createdAt.desc()),
    check('prediction_backtests_status_check', sql`${table.status} in ('queued', 'running', 'succeeded', 'failed')`),
    check('prediction_backtests_method_check', sql`${table.method} in ('out_of_time', 'cross_validation')`),
  ],
);

export type PredictionBacktest = typeof predictionBacktests.$inferSelect;

/** The demo's hidden truth: each demo customer's true probability of churning within the horizon
 * after each month snapshot (demo/truth.ts). Never served by the API; `revintel demo --truth` writes it. */
export const demoTruth = pgTable(
  'demo_truth',
  {
    orgId: text('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    customerId: text('customer_id').notNull(),
    externalId: text('external_id').notNull(),
    asOf: date('as_of', { mode: 'string' }).notNull(),
    horizonDays: integer('horizon_days').notNull(),
    pTrue: doublePrecision('p_true').notNull(),
  },
  (table) => [primaryKey({ columns: [table.orgId, table.customerId, table.asOf] })],
);
