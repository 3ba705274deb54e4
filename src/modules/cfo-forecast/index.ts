// The CFO's forecast routes (docs/cfo.md "Forecast"): today's book's ARR at each of the next
// months' closes, its exact bands, and the forecast's backtest on the organisation's own history.
import { Elysia } from 'elysia';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import { refuseUnknownParams } from '../../lib/query.ts';
import { bodyLimit, optional, type RouteDeclaration } from '../../lib/routes.ts';
import { requestBody } from '../../lib/validation.ts';
import { readJsonBody } from '../../plugins/body.ts';
import { transaction } from '../../db/transaction.ts';
import type { Config } from '../../config.ts';
import { utcToday } from '../../lib/today.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { isIsoCurrency } from '../cfo-history/currencies.ts';
import { reportingCurrencyOf } from '../cfo-history/fx.ts';
import type { PredictionSettings } from '../predictions/settings.ts';
import { cfoForecast, keepForecasts } from './forecast.ts';
import { Forecast, ForecastBacktestBody, ForecastBacktestParams, ForecastBacktestRun, ForecastQuery } from './model.ts';
import { forecastBacktestJob } from './jobs/backtest.ts';
import { getForecastBacktest, latestForecastBacktest, requestForecastBacktest } from './runs.ts';
import type { SumsReader } from '../cfo-history/history.ts';
import { storedBooks } from './book-reader.ts';

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
  requestBacktest: {
    method: 'POST',
    path: '/api/cfo/forecast-backtests',
    auth: 'key',
    counted: 'organisation',
    body: 'api',
    checkedBody: optional(ForecastBacktestBody),
    response: ForecastBacktestRun,
    summary:
      'Run the forecast made at each of the last month starts, point in time, against the ARR its book kept (202, queued; the same question pending answers that run)',
  },
  latestBacktest: {
    method: 'GET',
    path: '/api/cfo/forecast-backtests/latest',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: ForecastBacktestRun,
    summary: 'The newest forecast backtest that succeeded: WAPE, bias and band coverage per horizon',
  },
  getBacktest: {
    method: 'GET',
    path: '/api/cfo/forecast-backtests/:id',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: ForecastBacktestRun,
    summary: 'A forecast backtest: its state, and its report once it has succeeded',
  },
} as const satisfies Record<string, RouteDeclaration>;

const FORECAST_PARAMS = Object.keys(ForecastQuery.properties);
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

export function cfoForecastModule(deps: {
  database: Database;
  states: RequestStates;
  config: Pick<Config, 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook'>;
  settings: PredictionSettings;
  wakeJobs?: () => void;
  /** The ARR history's month sums kept between requests (the expansion rate reads them). */
  readSums?: SumsReader;
}) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  const backtestBody = requestBody(ForecastBacktestBody);
  const backtestLimit = bodyLimit(CFO_FORECAST_ROUTES.requestBacktest.body, deps.config);
  const readBook = storedBooks();
  const forecastOf = keepForecasts();
  return new Elysia({ name: 'revintel/cfo-forecast' })
    .post(CFO_FORECAST_ROUTES.requestBacktest.path, async ({ request, set }) => {
      const orgId = principalOf(request).org.id;
      const { origins = 12, horizon = 12, currency = null } = backtestBody((await readJsonBody(request, backtestLimit)) ?? {});
      const { run } = await transaction(db, (tx) =>
        requestForecastBacktest(tx, forecastBacktestJob, { orgId, question: { origins, horizon, currency }, requestedBy: 'api' }),
      );
      deps.wakeJobs?.();
      set.status = 202;
      return ok(run);
    })
    .get(CFO_FORECAST_ROUTES.latestBacktest.path, async ({ request }) => ok(await latestForecastBacktest(db, principalOf(request).org.id)))
    .get(
      CFO_FORECAST_ROUTES.getBacktest.path,
      async ({ request, params }) => ok(await getForecastBacktest(db, principalOf(request).org.id, params.id)),
      { params: ForecastBacktestParams },
    )
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
      const settings = deps.settings;
      return ok(
        await cfoForecast(
          db,
          {
            orgId,
            today: utcToday(),
            months,
            currency,
            reportingCurrency,
            graceDays: settings.graceDays,
            priorAnnualChurn: settings.priorAnnualChurn,
          },
          deps.readSums,
          readBook,
          forecastOf,
        ),
      );
    });
}
