// The answers of the CFO's forecast routes, in TypeBox: the OpenAPI document and the checks read these.
import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { BACKTEST_STATUSES } from '../../db/schema/index.ts';
import { enumOf, instant, nullable } from '../../lib/record-fields.ts';

const minor = (description: string) => t.Integer({ description: `${description}, in minor units` });
const month = t.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM' });

/** Every parameter of GET /api/cfo/forecast; anything else is a 400 naming it. */
export const ForecastQuery = t.Object({
  months: t.Optional(t.String({ maxLength: 20, description: 'how many months ahead, 1 to 24 (default 12)' })),
  currency: t.Optional(
    t.String({
      maxLength: 20,
      description: "an ISO 4217 code (that currency only), or `reporting` (converted at this month's rate); default every currency apart",
    }),
  ),
});
export type ForecastQuery = typeof ForecastQuery.static;

export const ForecastMonth = t.Object(
  {
    month,
    m: t.Integer({ description: 'months after this one' }),
    expected_arr: minor(
      "today's book's expected ARR at the month's close: Σ ARR × chance still a customer (no expansion, no new customers)",
    ),
    p05: minor('5th percentile of the ARR kept, from its exact distribution'),
    p10: minor('10th percentile: the 80 % band is p10–p90'),
    p50: minor('median'),
    p90: minor('90th percentile'),
    p95: minor('95th percentile: the 90 % band is p05–p95'),
    expected_churned_customers: t.Number({ description: 'Σ chance of having churned by the close' }),
    grr_forecast: t.Union([t.Number(), t.Null()], { description: 'expected_arr ÷ the book today' }),
    expected_arr_with_expansion: t.Union([t.Integer(), t.Null()], {
      description: 'labelled apart: expected_arr grown at net_expansion_rate_12m (null without twelve months of history)',
    }),
    error_bound: minor('the most any band reported differs from the exact quantile (0: exact)'),
    grid_step: minor('the amounts were counted on multiples of this (their common divisor when exact)'),
  },
  { additionalProperties: false },
);

export const Forecast = t.Object(
  {
    as_of: t.String({ description: 'the day of the book (UTC)' }),
    months: t.Integer(),
    currency: t.String({ description: 'what was asked: `all`, a currency or `reporting`' }),
    reporting_currency: t.Union([t.String(), t.Null()]),
    converted: t.Boolean({ description: "one series in the reporting currency, at this month's rate" }),
    missing_rates: t.Array(t.Object({ currency: t.String(), month }, { additionalProperties: false })),
    model: t.Object(
      {
        id: t.Union([t.String(), t.Null()], { description: 'null: the scorecard at a year (no trained 365-day model)' }),
        kind: t.String(),
        horizon_days: t.Integer(),
      },
      { additionalProperties: false },
    ),
    series: t.Array(
      t.Object(
        {
          currency: t.String(),
          customers: t.Integer({ description: 'customers with ARR today' }),
          book_arr: minor('their ARR today'),
          net_expansion_rate_12m: t.Union([t.Number(), t.Null()], {
            description: 'Σ(expansion − contraction) of the twelve months before this one ÷ the ARR at their opening',
          }),
          months: t.Array(ForecastMonth),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** POST /api/cfo/forecast-backtests: the question; anything else is a 400 naming it. */
export const ForecastBacktestBody = t.Object(
  {
    origins: t.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 36,
        error: 'must be a whole number from 1 to 36',
        description: 'month starts back to forecast from (default 12)',
      }),
    ),
    horizon: t.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 24,
        error: 'must be a whole number from 1 to 24',
        description: 'months forecast from each origin (default 12)',
      }),
    ),
    currency: t.Optional(
      t.String({
        pattern: '^[A-Z]{3}$',
        error: 'must be an ISO 4217 currency code such as USD',
        description: 'that currency only; default every currency apart',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ForecastBacktestBody = typeof ForecastBacktestBody.static;
export const ForecastBacktestParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) });

const share = (description: string) => t.Union([t.Number(), t.Null()], { description });

export const ForecastBacktest = t.Object(
  {
    as_of: t.String(),
    origins: t.Integer(),
    horizon: t.Integer(),
    nominal: t.Object({ coverage_80: t.Number(), coverage_90: t.Number() }, { additionalProperties: false }),
    series: t.Array(
      t.Object(
        {
          currency: t.String(),
          origins: t.Array(
            t.Object(
              {
                origin: t.String({ description: 'the first day of a past month: the forecast as made that day' }),
                model_kind: t.String({ description: 'the tier trained on the churn known by the origin' }),
                customers: t.Integer(),
                book_arr: minor('the book at the origin'),
                months: t.Array(
                  t.Object(
                    {
                      m: t.Integer(),
                      month,
                      expected_arr: t.Integer(),
                      p05: t.Integer(),
                      p10: t.Integer(),
                      p90: t.Integer(),
                      p95: t.Integer(),
                      actual_arr: minor("the origin's book's ARR of the customers still with ARR at the close"),
                    },
                    { additionalProperties: false },
                  ),
                ),
              },
              { additionalProperties: false },
            ),
          ),
          horizons: t.Array(
            t.Object(
              {
                m: t.Integer(),
                origins: t.Integer(),
                wape: share('Σ|forecast − actual| ÷ Σ actual'),
                bias: share('Σ(forecast − actual) ÷ Σ actual: above 0, the forecast kept too much'),
                coverage_80: share('share of origins whose actual fell within p10–p90 (nominal 0.8)'),
                coverage_90: share('share within p05–p95 (nominal 0.9)'),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** A forecast backtest run: its question, its state, and its report once it succeeded. */
export const ForecastBacktestRun = t.Object(
  {
    id: t.String(),
    status: enumOf(BACKTEST_STATUSES),
    origins: t.Integer(),
    horizon: t.Integer(),
    currency: nullable(t.String({ description: 'null: every currency apart' })),
    report: nullable(ForecastBacktest),
    error: nullable(t.String()),
    requested_by: t.String({ description: '`api` or `cli`' }),
    created_at: instant,
    started_at: nullable(instant),
    finished_at: nullable(instant),
  },
  { additionalProperties: false },
);
