// GET /api/cfo/predictions and GET /api/cfo/predictions/:customer_id (docs/predictions.md):
// the current churn prediction of each scored customer of the caller's organisation, explained by
// its drivers, with the summary a CFO reads (ARR at risk per currency and band).
import { Elysia, t } from 'elysia';
import type { Database } from '../../db/client.ts';
import { transaction } from '../../db/transaction.ts';
import { RISK_BANDS, type BacktestMethod, type RiskBand } from '../../db/schema/index.ts';
import { ok } from '../../lib/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import { listResponse } from '../../lib/list-response.ts';
import type { ListCache } from '../../lib/list-cache.ts';
import { bodyLimit, optional, type RouteDeclaration } from '../../lib/routes.ts';
import type { Config } from '../../config.ts';
import { requestBody } from '../../lib/validation.ts';
import { readJsonBody } from '../../plugins/body.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import {
  Backtest,
  BacktestBody,
  BacktestParams,
  ListModelsQuery,
  ListPredictionsQuery,
  ModelParams,
  Prediction,
  PredictionModel,
  PredictionParams,
  PROBABILITY_RANGE,
  RecomputeAccepted,
  RecomputeBody,
} from './model.ts';
import { getBacktest, latestBacktest, requestBacktest } from './backtests.ts';
import { backtestJob } from './jobs/backtest.ts';
import { requestRecompute } from './requests.ts';
import { utcToday } from '../../lib/today.ts';
import type { PredictionSettings } from './settings.ts';
import {
  getModel,
  getPrediction,
  listModels,
  listPredictions,
  predictionsMeta,
  predictionsVersion,
  presentModel,
  presentPrediction,
  presentPredictionItem,
  type PredictionFilters,
} from './read.ts';

export const PREDICTION_ROUTES = {
  list: {
    method: 'GET',
    path: '/api/cfo/predictions',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: t.Array(Prediction),
    summary: "Every scored customer's churn prediction, with the summary per currency in meta",
  },
  get: {
    method: 'GET',
    path: '/api/cfo/predictions/:customer_id',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: Prediction,
    summary: "A customer's churn prediction with all its drivers",
  },
  recompute: {
    method: 'POST',
    path: '/api/cfo/predictions/recompute',
    auth: 'key',
    counted: 'organisation',
    body: 'api',
    checkedBody: optional(RecomputeBody),
    response: RecomputeAccepted,
    summary: 'Rescore every customer, or those named (202, a job)',
  },
  models: {
    method: 'GET',
    path: '/api/cfo/models',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: t.Array(PredictionModel),
    summary: "The organisation's churn models, newest first",
  },
  model: {
    method: 'GET',
    path: '/api/cfo/models/:id',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: PredictionModel,
    summary: 'A churn model with its parameters and metrics',
  },
  backtest: {
    method: 'POST',
    path: '/api/cfo/backtests',
    auth: 'key',
    counted: 'organisation',
    body: 'api',
    checkedBody: optional(BacktestBody),
    response: Backtest,
    summary: "Run a backtest of the churn model on the organisation's history (202, queued)",
  },
  latestBacktest: {
    method: 'GET',
    path: '/api/cfo/backtests/latest',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: Backtest,
    summary: 'The newest finished backtest',
  },
  getBacktest: {
    method: 'GET',
    path: '/api/cfo/backtests/:id',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: Backtest,
    summary: 'A backtest: its status, and its report once it has succeeded',
  },
} as const satisfies Record<string, RouteDeclaration>;

/** `risk`: a comma list of bands. */
function riskList(raw: string | undefined): RiskBand[] | undefined {
  if (raw === undefined) return undefined;
  const values = raw.split(',').map((v) => v.trim());
  const wrong = values.find((v) => !(RISK_BANDS as readonly string[]).includes(v));
  if (wrong !== undefined)
    throw new AppError(
      'validation_failed',
      `Invalid query parameter "risk": must be a comma list of ${RISK_BANDS.join(', ')}, got "${wrong}"`,
    );
  return values as RiskBand[];
}

/** `min_probability`: a number within PROBABILITY_RANGE. */
function probabilityBound(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN;
  const { min, max } = PROBABILITY_RANGE;
  if (!(value >= min && value <= max))
    throw new AppError(
      'validation_failed',
      `Invalid query parameter "min_probability": must be a number from ${min} to ${max}, got "${raw}"`,
    );
  return value;
}

export function predictionsModule(deps: {
  database: Database;
  states: RequestStates;
  config: Pick<Config, 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook'>;
  settings: PredictionSettings;
  listCache: ListCache;
  wakeJobs?: () => void;
}) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  const recomputeBody = requestBody(RecomputeBody);
  const backtestBody = requestBody(BacktestBody);
  const recomputeLimit = bodyLimit(PREDICTION_ROUTES.recompute.body, deps.config);
  const backtestLimit = bodyLimit(PREDICTION_ROUTES.backtest.body, deps.config);
  const horizonDays = deps.settings.horizonDays;
  return new Elysia({ name: 'revintel/predictions' })
    .get(
      PREDICTION_ROUTES.list.path,
      ({ query, request, set }) => {
        const orgId = principalOf(request).org.id;
        const filters: PredictionFilters = {
          risk: riskList(query.risk),
          minProbability: probabilityBound(query.min_probability),
          customerId: query.customer_id,
          currency: query.currency,
          csmEmail: query.csm_email,
          q: query.q,
        };
        const sort = query.sort ?? '-arr_at_risk';
        return listResponse({
          // Kept until the organisation's ARR data or its predictions, marks or models change.
          cached: { cache: deps.listCache, db, orgId, version: predictionsVersion },
          request,
          set,
          known: Object.keys(ListPredictionsQuery.properties),
          limit: query.limit,
          sort,
          fetch: (limit) => listPredictions(db, { orgId, filters, sort, limit, cursor: query.cursor }),
          positionOf: (row) => ({ value: row.sort_value!, id: row.customer_id }),
          present: presentPredictionItem,
          // The summary covers the whole filtered set, not the page.
          meta: async () => ({ ...(await predictionsMeta(db, orgId, filters, horizonDays)) }),
        });
      },
      { query: ListPredictionsQuery },
    )
    .get(
      PREDICTION_ROUTES.get.path,
      async ({ request, params }) => ok(presentPrediction(await getPrediction(db, principalOf(request).org.id, params.customer_id))),
      { params: PredictionParams },
    )
    .post(PREDICTION_ROUTES.recompute.path, async ({ request, set }) => {
      const orgId = principalOf(request).org.id;
      const { customer_ids: customerIds, retrain } = recomputeBody((await readJsonBody(request, recomputeLimit)) ?? {});
      const job = await transaction(db, (tx) => requestRecompute(tx, { orgId, customerIds, retrain }));
      deps.wakeJobs?.();
      set.status = 202;
      return ok({ job_id: job.id });
    })
    .get(
      PREDICTION_ROUTES.models.path,
      ({ query, request, set }) =>
        listResponse({
          request,
          set,
          known: Object.keys(ListModelsQuery.properties),
          limit: query.limit,
          sort: 'trained_at',
          fetch: (limit) => listModels(db, { orgId: principalOf(request).org.id, limit, cursor: query.cursor }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentModel,
        }),
      { query: ListModelsQuery },
    )
    .get(
      PREDICTION_ROUTES.model.path,
      async ({ request, params }) => ok(presentModel(await getModel(db, principalOf(request).org.id, params.id))),
      { params: ModelParams },
    )
    .post(PREDICTION_ROUTES.backtest.path, async ({ request, set }) => {
      const orgId = principalOf(request).org.id;
      const { method, horizon_days: horizonDays, as_of: asOf, cutoff } = backtestBody((await readJsonBody(request, backtestLimit)) ?? {});
      const backtest = await transaction(db, (tx) =>
        requestBacktest(
          tx,
          backtestJob,
          {
            orgId,
            request: { method: method as BacktestMethod | undefined, horizonDays, asOf, cutoff },
            today: utcToday(),
            requestedBy: 'api',
          },
          deps.settings,
        ),
      );
      deps.wakeJobs?.();
      set.status = 202;
      return ok(backtest);
    })
    .get(PREDICTION_ROUTES.latestBacktest.path, async ({ request }) => ok(await latestBacktest(db, principalOf(request).org.id)))
    .get(
      PREDICTION_ROUTES.getBacktest.path,
      async ({ request, params }) => ok(await getBacktest(db, principalOf(request).org.id, params.id)),
      { params: BacktestParams },
    );
}
