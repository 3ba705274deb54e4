// The CFO's forecast routes (docs/cfo.md "Forecast"): today's book's ARR at each of the next
// months' closes, its exact bands, and the forecast's backtest on the organisation's own history.
import { Elysia } from 'elysia';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import { refuseUnknownParams } from '../../lib/query.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { utcToday } from '../../lib/today.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { isIsoCurrency } from '../cfo-history/currencies.ts';
import { reportingCurrencyOf } from '../cfo-history/fx.ts';
import { predictionSettings } from '../predictions/settings.ts';
import { cfoForecast } from './forecast.ts';
import { Forecast, ForecastQuery } from './model.ts';

export const CFO_FORECAST_ROUTES = {
  forecast: {
    method: 'GET',
    path: '/api/cfo/forecast',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: Forecast,
    checkedQuery: ForecastQuery,
    summary: "Today's book's ARR at each of the next months' closes: expected, exact 80 % and 90 % bands, churned customers, GRR",
  },
} as const satisfies Record<string, RouteDeclaration>;

const FORECAST_PARAMS = Object.keys(ForecastQuery.properties);
export const MAX_FORECAST_MONTHS = 24;

/** `months`: 1 to 24, 12 when absent; a 400 naming it otherwise. */
export function monthsParam(raw: string | undefined): number {
  if (raw === undefined) return 12;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_FORECAST_MONTHS)
    throw new AppError(
      'validation_failed',
      `Invalid query parameter "months": must be a whole number from 1 to ${MAX_FORECAST_MONTHS}, got "${raw}"`,
    );
  return Number(raw);
}

/** `currency`: an ISO 4217 code or `reporting`; a 400 naming it otherwise. */
export function forecastCurrencyParam(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === 'reporting' || isIsoCurrency(raw)) return raw;
  throw new AppError(
    'validation_failed',
    `Invalid query parameter "currency": must be an ISO 4217 currency code such as USD or "reporting", got "${raw}"`,
  );
}

export function cfoForecastModule(deps: { database: Database; states: RequestStates }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/cfo-forecast' }).get(CFO_FORECAST_ROUTES.forecast.path, async ({ request, query }) => {
    refuseUnknownParams(request.url, FORECAST_PARAMS);
    const orgId = principalOf(request).org.id;
    const months = monthsParam(query.months);
    const currency = forecastCurrencyParam(query.currency);
    const reportingCurrency = await reportingCurrencyOf(db, orgId);
    if (currency === 'reporting' && reportingCurrency === null)
      throw new AppError(
        'unprocessable',
        'Invalid query parameter "currency": the organisation has no reporting currency (PUT /api/cfo/reporting-currency)',
      );
    const settings = predictionSettings();
    return ok(
      await cfoForecast(db, {
        orgId,
        today: utcToday(),
        months,
        currency,
        reportingCurrency,
        graceDays: settings.graceDays,
        priorAnnualChurn: settings.priorAnnualChurn,
      }),
    );
  });
}
