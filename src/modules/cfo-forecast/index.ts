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
import { BacktestQuery, Forecast, ForecastBacktest, ForecastQuery } from './model.ts';
import { forecastBacktest, type ForecastBacktest as Backtest } from './backtest.ts';
import { dataVersion } from './kept.ts';

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
  backtest: {
    method: 'GET',
    path: '/api/cfo/forecast-backtest',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: ForecastBacktest,
    checkedQuery: BacktestQuery,
    summary: 'The forecast made at each of the last month starts, point in time, against the ARR its book kept: WAPE, bias, band coverage',
  },
} as const satisfies Record<string, RouteDeclaration>;

const FORECAST_PARAMS = Object.keys(ForecastQuery.properties);
const BACKTEST_PARAMS = Object.keys(BacktestQuery.properties);
export const MAX_FORECAST_MONTHS = 24;
export const MAX_BACKTEST_ORIGINS = 36;

/** A whole-number parameter from 1 to `max`, `fallback` when absent; a 400 naming it otherwise. */
export function countParam(raw: string | undefined, name: string, max: number, fallback = 12): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > max)
    throw new AppError('validation_failed', `Invalid query parameter "${name}": must be a whole number from 1 to ${max}, got "${raw}"`);
  return Number(raw);
}

/** `currency`: an ISO 4217 code or `reporting`; a 400 naming it otherwise. */
export function forecastCurrencyParam(raw: string | undefined, allowReporting = true): string | undefined {
  if (raw === undefined || (allowReporting && raw === 'reporting') || isIsoCurrency(raw)) return raw;
  throw new AppError(
    'validation_failed',
    `Invalid query parameter "currency": must be an ISO 4217 currency code such as USD${allowReporting ? ' or "reporting"' : ''}, got "${raw}"`,
  );
}

export function cfoForecastModule(deps: { database: Database; states: RequestStates }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  // A backtest reads every origin's history: kept per organisation, data version, day and question,
  // since a board deck asks for the same one again and again and any write bumps the version.
  const keptBacktests = new Map<string, Backtest>();
  return new Elysia({ name: 'revintel/cfo-forecast' })
    .get(CFO_FORECAST_ROUTES.backtest.path, async ({ request, query }) => {
      refuseUnknownParams(request.url, BACKTEST_PARAMS);
      const orgId = principalOf(request).org.id;
      const origins = countParam(query.origins, 'origins', MAX_BACKTEST_ORIGINS);
      const horizon = countParam(query.horizon, 'horizon', MAX_FORECAST_MONTHS);
      const currency = forecastCurrencyParam(query.currency, false);
      const today = utcToday();
      const keyOf = `${orgId} ${await dataVersion(db, orgId)} ${today} ${origins} ${horizon} ${currency ?? ''}`;
      let answer = keptBacktests.get(keyOf);
      if (!answer) {
        const settings = predictionSettings();
        answer = await forecastBacktest(db, { orgId, today, origins, horizon, currency, settings });
        keptBacktests.set(keyOf, answer);
        if (keptBacktests.size > 16) keptBacktests.delete(keptBacktests.keys().next().value!);
      }
      return ok(answer);
    })
    .get(CFO_FORECAST_ROUTES.forecast.path, async ({ request, query }) => {
      refuseUnknownParams(request.url, FORECAST_PARAMS);
      const orgId = principalOf(request).org.id;
      const months = countParam(query.months, 'months', MAX_FORECAST_MONTHS);
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
