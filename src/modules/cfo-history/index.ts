// The CFO's history routes (docs/cfo.md): the ARR history and its movements, cohorts, and the
// reporting currency with its monthly rates.
import { transaction } from '../../db/transaction.ts';
import { Elysia } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { ok } from '../../lib/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import { refuseUnknownParams } from '../../lib/query.ts';
import { bodyLimit, type RouteDeclaration } from '../../lib/routes.ts';
import { utcToday } from '../../lib/today.ts';
import { requestBody } from '../../lib/validation.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import { readJsonBody } from '../../plugins/body.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { cohorts } from './cohorts.ts';
import { isIsoCurrency } from './currencies.ts';
import { listRates, reportingCurrencyOf, setRates, setReportingCurrency } from './fx.ts';
import { arrHistory, keepSums, type SumsReader } from './history.ts';
import { ArrHistory, Cohorts, FxRate, FxRates, FxRatesQuery, HistoryQuery, ReportingCurrencyBody, SetRatesBody } from './model.ts';
import { monthRange, parseMonth } from './months.ts';
import { t } from 'elysia';

export const CFO_HISTORY_ROUTES = {
  arr: {
    method: 'GET',
    path: '/api/cfo/arr',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: ArrHistory,
    checkedQuery: HistoryQuery,
    summary: 'ARR by month and currency: opening, new, reactivation, expansion, contraction, churn, closing, GRR and NRR',
  },
  cohorts: {
    method: 'GET',
    path: '/api/cfo/cohorts',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: Cohorts,
    checkedQuery: HistoryQuery,
    summary: 'Customers by their first month with ARR: net ARR and logo retention at each month after',
  },
  rates: {
    method: 'GET',
    path: '/api/cfo/fx-rates',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: FxRates,
    checkedQuery: FxRatesQuery,
    summary: "The reporting currency and the organisation's monthly exchange rates",
  },
  setRates: {
    method: 'PUT',
    path: '/api/cfo/fx-rates',
    auth: 'key',
    counted: 'organisation',
    who: 'admin',
    body: 'api',
    checkedBody: { schema: SetRatesBody, required: true },
    response: t.Array(FxRate),
    summary: 'Set monthly exchange rates (a rate already there for its month and currencies is replaced)',
  },
  setReportingCurrency: {
    method: 'PUT',
    path: '/api/cfo/reporting-currency',
    auth: 'key',
    counted: 'organisation',
    who: 'admin',
    body: 'api',
    checkedBody: { schema: ReportingCurrencyBody, required: true },
    response: ReportingCurrencyBody,
    summary: 'Set (or clear, with null) the currency the CFO figures may be converted to',
  },
} as const satisfies Record<string, RouteDeclaration>;

const HISTORY_PARAMS = Object.keys(HistoryQuery.properties);
const RATES_PARAMS = Object.keys(FxRatesQuery.properties);

/** `currency`: an ISO 4217 code or `reporting`; a 400 naming it otherwise. */
function currencyParam(raw: string | undefined, allowReporting: boolean): string | undefined {
  if (raw === undefined || (allowReporting && raw === 'reporting') || isIsoCurrency(raw)) return raw;
  throw new AppError(
    'validation_failed',
    `Invalid query parameter "currency": must be an ISO 4217 currency code such as USD${allowReporting ? ' or "reporting"' : ''}, got "${raw}"`,
  );
}

export function cfoHistoryModule(deps: {
  database: Database;
  states: RequestStates;
  config: Pick<Config, 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook'>;
  /** The month sums kept between requests (the forecast reads the same). */
  readSums?: SumsReader;
}) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  const ratesBody = requestBody(SetRatesBody);
  const reportingBody = requestBody(ReportingCurrencyBody);
  const limit = bodyLimit('api', deps.config);
  const readSums = deps.readSums ?? keepSums();
  return new Elysia({ name: 'revintel/cfo-history' })
    .get(CFO_HISTORY_ROUTES.arr.path, async ({ request, query }) => {
      refuseUnknownParams(request.url, HISTORY_PARAMS);
      const orgId = principalOf(request).org.id;
      const today = utcToday();
      const range = monthRange({ from: query.from, to: query.to, today });
      const currency = currencyParam(query.currency, true);
      const reportingCurrency = await reportingCurrencyOf(db, orgId);
      if (currency === 'reporting' && reportingCurrency === null)
        throw new AppError(
          'unprocessable',
          'Invalid query parameter "currency": the organisation has no reporting currency (PUT /api/cfo/reporting-currency)',
        );
      return ok(await arrHistory(db, { orgId, ...range, today, currency, reportingCurrency }, readSums));
    })
    .get(CFO_HISTORY_ROUTES.cohorts.path, async ({ request, query }) => {
      refuseUnknownParams(request.url, HISTORY_PARAMS);
      const today = utcToday();
      const range = monthRange({ from: query.from, to: query.to, today });
      const currency = currencyParam(query.currency, false);
      return ok(await cohorts(db, { orgId: principalOf(request).org.id, ...range, today, currency }));
    })
    .get(CFO_HISTORY_ROUTES.rates.path, async ({ request, query }) => {
      refuseUnknownParams(request.url, RATES_PARAMS);
      const orgId = principalOf(request).org.id;
      const filters = {
        from: parseMonth(query.from, 'from'),
        to: parseMonth(query.to, 'to'),
        currency: currencyParam(query.currency, false),
      };
      return ok({ reporting_currency: await reportingCurrencyOf(db, orgId), rates: await listRates(db, { orgId, ...filters }) });
    })
    .put(CFO_HISTORY_ROUTES.setRates.path, async ({ request }) => {
      const { rates } = ratesBody((await readJsonBody(request, limit)) ?? undefined);
      const orgId = principalOf(request).org.id;
      return ok(await transaction(db, (tx) => setRates(tx, { orgId, rates })));
    })
    .put(CFO_HISTORY_ROUTES.setReportingCurrency.path, async ({ request }) => {
      const { reporting_currency: currency } = reportingBody((await readJsonBody(request, limit)) ?? undefined);
      const orgId = principalOf(request).org.id;
      return ok({ reporting_currency: await setReportingCurrency(db, { orgId, currency }) });
    });
}
