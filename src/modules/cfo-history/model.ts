// The answers and bodies of the CFO's history routes, in TypeBox: the OpenAPI document and the
// checks read these.
import { t } from 'elysia';
import { RATE_PATTERN } from './currencies.ts';

const minor = (description: string) => t.Integer({ description: `${description}, in minor units` });
const month = t.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM', error: 'must be a month, YYYY-MM' });
const currencyCode = (description?: string) =>
  t.String({ pattern: '^[A-Z]{3}$', error: 'must be an ISO 4217 currency code such as USD', ...(description ? { description } : {}) });
const ratio = (description: string) => t.Union([t.Number(), t.Null()], { description });

/** Every parameter of the two history routes; anything else is a 400 naming it. */
export const HistoryQuery = t.Object({
  from: t.Optional(t.String({ maxLength: 20, description: 'the first month, YYYY-MM (default: 11 months before `to`)' })),
  to: t.Optional(t.String({ maxLength: 20, description: 'the last month, YYYY-MM, at most this one (default: this month)' })),
  currency: t.Optional(
    t.String({
      maxLength: 20,
      description:
        'an ISO 4217 code (that currency only), or `reporting` (converted to the reporting currency); default every currency apart',
    }),
  ),
});
export type HistoryQuery = typeof HistoryQuery.static;

export const ArrMonth = t.Object(
  {
    month,
    start_arr: minor("the ARR at the previous month's close"),
    new: minor('ARR of customers with ARR for the first time'),
    reactivation: minor('ARR of customers who had ARR before, then none, and have it again'),
    expansion: minor('ARR added by customers who had ARR and have more'),
    contraction: minor('ARR lost by customers who still have ARR'),
    churn: minor('ARR of customers who had ARR and have none'),
    end_arr: minor(
      "the ARR at the month's close (its last day; today for this month): start + new + reactivation + expansion − contraction − churn",
    ),
    customers_start: t.Integer(),
    customers_end: t.Integer(),
    new_customers: t.Integer(),
    reactivated_customers: t.Integer(),
    churned_customers: t.Integer(),
    arr_12m_ago: minor('the ARR at the close twelve months before (the retention base)'),
    retained_arr_capped: minor("those customers' ARR now, each at most what it was"),
    retained_arr: minor("those customers' ARR now"),
    grr_12m: ratio('retained_arr_capped ÷ arr_12m_ago; null without ARR twelve months before'),
    nrr_12m: ratio('retained_arr ÷ arr_12m_ago; null without ARR twelve months before'),
    partial: t.Boolean({ description: 'the month under way: its close is today' }),
  },
  { additionalProperties: false },
);

const MissingRate = t.Object({ currency: t.String(), month }, { additionalProperties: false });

export const ArrHistory = t.Object(
  {
    from: month,
    to: month,
    as_of: t.String({ description: 'the day the answer was computed (UTC)' }),
    currency: t.String({ description: 'what was asked: `all`, a currency or `reporting`' }),
    reporting_currency: t.Union([t.String(), t.Null()]),
    converted: t.Boolean({ description: 'the one series is in the reporting currency, each month at its own rate' }),
    missing_rates: t.Array(MissingRate, { description: 'the rates a conversion lacked; the series then stay per currency' }),
    series: t.Array(t.Object({ currency: t.String(), months: t.Array(ArrMonth) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const Cohorts = t.Object(
  {
    from: month,
    to: month,
    as_of: t.String(),
    currency: t.String(),
    cohorts: t.Array(
      t.Object(
        {
          currency: t.String(),
          month: t.String({ description: 'the first month whose close shows these customers with ARR' }),
          customers: t.Integer(),
          start_arr: minor("the cohort's ARR at its first month's close"),
          ages: t.Array(
            t.Object(
              {
                k: t.Integer({ description: 'months after the first' }),
                month,
                arr: minor("the cohort's ARR at this month's close"),
                customers: t.Integer({ description: 'cohort customers with ARR then' }),
                net_arr_retention: t.Number(),
                logo_retention: t.Number(),
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

export const FxRate = t.Object(
  {
    month,
    currency: t.String({ description: 'the currency converted' }),
    quote_currency: t.String({ description: 'the currency it converts to (the reporting currency when written)' }),
    rate: t.String({ description: 'major units of quote_currency per major unit of currency, exact decimal' }),
  },
  { additionalProperties: false },
);

export const FxRates = t.Object(
  { reporting_currency: t.Union([t.String(), t.Null()]), rates: t.Array(FxRate) },
  { additionalProperties: false },
);

export const FxRatesQuery = t.Object({
  from: t.Optional(t.String({ maxLength: 20, description: 'Only rates of this month or later, YYYY-MM' })),
  to: t.Optional(t.String({ maxLength: 20, description: 'Only rates of this month or earlier, YYYY-MM' })),
  currency: t.Optional(t.String({ maxLength: 20, description: 'Only rates for this currency (ISO 4217 code)' })),
});

export const SetRatesBody = t.Object(
  {
    rates: t.Array(
      t.Object(
        {
          month,
          currency: currencyCode(),
          quote_currency: t.Optional(currencyCode('default: the reporting currency')),
          rate: t.String({ pattern: RATE_PATTERN, error: 'must be a positive decimal such as 1.0842, at most 12 decimals' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 10_000 },
    ),
  },
  { additionalProperties: false },
);
export type SetRatesBody = typeof SetRatesBody.static;

export const ReportingCurrencyBody = t.Object(
  { reporting_currency: t.Union([currencyCode(), t.Null()], { description: 'null: none' }) },
  { additionalProperties: false },
);
export type ReportingCurrencyBody = typeof ReportingCurrencyBody.static;
