// The server's answers as the console reads them, derived from the TypeBox models the routes
// declare (the same ones OpenAPI publishes): a field renamed or retyped on the server fails the
// console's typecheck instead of showing `undefined`. Types only — no server code is bundled.
// The model files import no code that touches a database, so this tsconfig (DOM, no Bun) can read them.
import type { Static } from '@sinclair/typebox';
import type { Action as ActionModel, Csm as CsmModel } from '../modules/agent-actions/model.ts';
import type { ConnectorView, TicketEvent as TicketEventModel } from '../modules/tickets/connectors/model.ts';
import type { BillingConnectorStatusView, BillingConnectorView } from '../modules/billing/model.ts';
import type { Customer as CustomerModel } from '../modules/customers/model.ts';
import type { CreatedKey as CreatedKeyModel, PublicKeyView } from '../modules/keys/model.ts';
import type { Me as MeModel } from '../modules/me/model.ts';
import type {
  Backtest as BacktestModel,
  Prediction as PredictionModel,
  PredictionSummary as PredictionSummaryModel,
} from '../modules/predictions/model.ts';
import type { AucFigures } from '../modules/predictions/backtest-words.ts';
import type { InvitedUser, UserView } from '../modules/users/model.ts';
import type { ArrHistory as ArrHistoryModel, Cohorts as CohortsModel, FxRates as FxRatesModel } from '../modules/cfo-history/model.ts';
import type {
  Forecast as ForecastModel,
  ForecastBacktest as ForecastBacktestModel,
  ForecastBacktestRun as ForecastBacktestRunModel,
} from '../modules/cfo-forecast/model.ts';

/** GET /api/me: `user` and `csrf_token` are null when a key (not a session) calls. */
export type Me = Static<typeof MeModel>;

export type Customer = Static<typeof CustomerModel>;

/** A customer's churn prediction; a list item's drivers end with `other` (the sum of the rest). */
export type Prediction = Static<typeof PredictionModel>;
export type Driver = Prediction['drivers'][number];
/** One currency's totals in a predictions list's `meta.summary`. */
export type PredictionSummary = Static<typeof PredictionSummaryModel>;

/** The server publishes a backtest's metrics as an open record; the console reads these of them. */
export interface BacktestMetrics extends AucFigures {
  ece?: number | null;
  base_rate?: number;
  customers?: number;
  calibration_table?: { bin: number; n: number; mean_predicted: number; observed_rate: number }[];
}
export type Backtest = Omit<Static<typeof BacktestModel>, 'metrics'> & { metrics: BacktestMetrics | null };

export type Action = Static<typeof ActionModel>;
export type Csm = Static<typeof CsmModel>;

export type User = Static<typeof UserView>;
/** POST /api/users: the user and their one-time sign-in link (shown this once). */
export type Invited = Static<typeof InvitedUser>;

export type Key = Static<typeof PublicKeyView>;
/** POST /api/keys: the key, and its secret (this once). */
export type CreatedKey = Static<typeof CreatedKeyModel>;

export type Connector = Static<typeof ConnectorView>;
export type TicketEvent = Static<typeof TicketEventModel>;

export type ArrHistory = Static<typeof ArrHistoryModel>;
/** GET /api/cfo/cohorts */
export type Cohorts = Static<typeof CohortsModel>;
/** GET /api/cfo/fx-rates: the reporting currency and the monthly rates. */
export type FxRates = Static<typeof FxRatesModel>;
export type Forecast = Static<typeof ForecastModel>;
export type ForecastBacktest = Static<typeof ForecastBacktestModel>;
export type BillingConnector = Static<typeof BillingConnectorView>;
/** GET /api/billing/connectors/:id/status */
export type BillingStatus = Static<typeof BillingConnectorStatusView>;
export type ForecastBacktestRun = Static<typeof ForecastBacktestRunModel>;
