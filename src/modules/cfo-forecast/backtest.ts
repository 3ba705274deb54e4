// The forecast's backtest (docs/cfo.md "How good the forecast is"): at each of the last months'
// starts, the forecast as it would have been made that day — the book as recorded then, the
// features of that day, a model trained only on churn known by then — against the ARR that book
// actually kept at each later close: WAPE, bias, and how often the 80 % and 90 % bands held it.
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';
import { featuresAt, FEATURE_KEYS, PRIOR_SCORECARD, type FeatureRow } from '../predictions/features.ts';
import { churnDays, labelled } from '../predictions/labels.ts';
import { addDays, chooseKind, fittable, trainModel, type FitStarts, type Snapshot } from '../predictions/training.ts';
import { lastDayOf, monthIndex, monthOf } from '../cfo-history/months.ts';
import { bookOf, FORECAST_HORIZON_DAYS, forecastBook, type ForecastMonth } from './forecast.ts';

export interface BacktestSettings {
  graceDays: number;
  priorAnnualChurn: number;
  /** How far back a model's training snapshots go before its origin (TRAIN_LOOKBACK_DAYS). */
  lookbackDays: number;
}

export interface OriginResult {
  origin: string;
  model_kind: string;
  customers: number;
  book_arr: number;
  /** Per forecast month whose close has passed: the forecast and what the book kept. */
  months: { m: number; month: string; expected_arr: number; p05: number; p10: number; p90: number; p95: number; actual_arr: number }[];
}

export interface HorizonScore {
  m: number;
  origins: number;
  /** Σ|forecast − actual| ÷ Σ actual over the origins. */
  wape: number | null;
  /** Σ(forecast − actual) ÷ Σ actual: positive when the forecast kept too much. */
  bias: number | null;
  coverage_80: number | null;
  coverage_90: number | null;
}

export interface BacktestSeries {
  currency: string;
  origins: OriginResult[];
  horizons: HorizonScore[];
}

export interface ForecastBacktest {
  as_of: string;
  origins: number;
  horizon: number;
  nominal: { coverage_80: number; coverage_90: number };
  series: BacktestSeries[];
}

/** Each customer's ARR at a day's close, as recorded that day (the one ARR rule, point in time),
 * as [customer, ARR] pairs: what crosses a thread or socket is plain JSON. */
export async function arrAt(db: Db, orgId: string, day: string): Promise<[string, number][]> {
  const rows = await queryRows<{ customer_id: string; arr: string | number }>(
    db,
    sql`select customer_id, coalesce(sum(arr) filter (where counted), 0)::bigint as arr
        from revintel_contracts_at(${orgId}, ${day}::date) group by customer_id`,
  );
  return rows.map((r) => [r.customer_id, Number(r.arr)]);
}

/** What the backtest reads, each a short query: straight from the database, or through the
 * fitting thread's units (runs.ts) so that no read holds the embedded database for long. */
export interface BacktestReader {
  /** The active customers' features at a month start (no labels), as of that day. */
  features(day: string): Promise<FeatureRow[]>;
  /** Churn days known by the origin, as [customer, days] pairs. */
  churn(origin: string): Promise<[string, string[]][]>;
  arrAt(day: string): Promise<[string, number][]>;
}

export const featureQuery = (orgId: string, day: string, graceDays: number) => ({
  orgId,
  day,
  horizonDays: FORECAST_HORIZON_DAYS,
  population: 'active' as const,
  graceDays,
  labels: false,
});

export function databaseReader(db: Db, orgId: string, graceDays: number): BacktestReader {
  return {
    features: (day) => featuresAt(db, featureQuery(orgId, day, graceDays)),
    churn: async (origin) => [...(await churnDays(db, { orgId, today: origin, graceDays })).entries()],
    arrAt: (day) => arrAt(db, orgId, day),
  };
}

/** The snapshot days of a model trained at `origin`: month starts whose year-ahead label (and its
 * grace) is over by the origin, back to the lookback. Month starts, so origins share them. */
export function trainingDays(origin: string, settings: BacktestSettings): string[] {
  const last = addDays(origin, -(FORECAST_HORIZON_DAYS + settings.graceDays));
  const first = addDays(origin, -settings.lookbackDays);
  const days: string[] = [];
  for (let k = monthIndex(last.slice(0, 7)); `${monthOf(k)}-01` >= first; k--)
    if (`${monthOf(k)}-01` <= last) days.push(`${monthOf(k)}-01`);
  return days;
}

/**
 * Runs the backtest over the `origins` month starts before this month's, `horizon` months each (a
 * month counts only once its close has passed), each currency apart (or the one asked for). `features` caches each snapshot
 * day's features (they read nothing after their day, so every origin may share them).
 */
export function forecastBacktest(db: Db, input: BacktestInput): Promise<ForecastBacktest> {
  return backtestWith(databaseReader(db, input.orgId, input.settings.graceDays), input);
}

export interface BacktestInput {
  orgId: string;
  today: string;
  origins: number;
  horizon: number;
  currency?: string;
  settings: BacktestSettings;
}

export async function backtestWith(reader: BacktestReader, input: BacktestInput): Promise<ForecastBacktest> {
  const current = monthIndex(input.today.slice(0, 7));
  const features = new Map<string, FeatureRow[]>();
  const featuresOf = async (day: string) => {
    let rows = features.get(day);
    if (!rows) {
      rows = await reader.features(day);
      features.set(day, rows);
    }
    return rows;
  };
  const closes = new Map<string, Map<string, number>>();
  // Each origin's fits start from the origin before's: their snapshots mostly overlap.
  const starts: FitStarts = new Map();
  const byCurrency = new Map<string, OriginResult[]>();
  for (let j = input.origins; j >= 1; j--) {
    const origin = `${monthOf(current - j)}-01`;
    const observable = Math.min(input.horizon, j - 1);
    if (observable < 1) continue;
    // Days no later origin reads (training days only move forward with the origin) leave the cache:
    // at 100,000 customers every day kept held the run at 3 GB.
    const firstNeeded = trainingDays(origin, input.settings).at(-1) ?? origin;
    for (const day of features.keys()) if (day < firstNeeded) features.delete(day);
    // Labels known by the origin: churn days whose grace had passed by then.
    const churn = new Map(await reader.churn(origin));
    const rows: Snapshot[] = [];
    for (const day of trainingDays(origin, input.settings))
      for (const row of await featuresOf(day)) rows.push(labelled(row, day, churn.get(row.customerId), FORECAST_HORIZON_DAYS));
    const kind = rows.length > 0 ? fittable(chooseKind(rows), rows) : 'prior';
    const training = { horizonDays: FORECAST_HORIZON_DAYS, priorAnnualChurn: input.settings.priorAnnualChurn, seed: 42 };
    const model = trainModel(kind, FEATURE_KEYS, PRIOR_SCORECARD, rows, training, starts);
    // The origin is a month start, as the training days are: its features are usually read already.
    const book = bookOf(await featuresOf(origin), model.additive);
    const currencies = [...new Set(book.map((c) => c.currency))].filter((c) => input.currency === undefined || c === input.currency).sort();
    for (const currency of currencies) {
      const customers = book.filter((c) => c.currency === currency);
      const forecast: ForecastMonth[] = forecastBook(customers, { today: origin, months: observable, expansionRate: null });
      const months: OriginResult['months'] = [];
      for (const f of forecast) {
        const close = lastDayOf(f.month);
        let arr = closes.get(close);
        if (!arr) {
          arr = new Map(await reader.arrAt(close));
          closes.set(close, arr);
        }
        const kept = arr;
        const actual = customers.reduce((s, c) => s + ((kept.get(c.customerId) ?? 0) > 0 ? c.arr : 0), 0);
        months.push({
          m: f.m,
          month: f.month,
          expected_arr: f.expected_arr,
          p05: f.p05,
          p10: f.p10,
          p90: f.p90,
          p95: f.p95,
          actual_arr: actual,
        });
      }
      const result = {
        origin,
        model_kind: model.kind,
        customers: customers.length,
        book_arr: customers.reduce((s, c) => s + c.arr, 0),
        months,
      };
      byCurrency.set(currency, [...(byCurrency.get(currency) ?? []), result]);
    }
  }
  return {
    as_of: input.today,
    origins: input.origins,
    horizon: input.horizon,
    nominal: { coverage_80: 0.8, coverage_90: 0.9 },
    series: [...byCurrency.keys()].sort().map((currency) => {
      const origins = byCurrency.get(currency)!;
      return { currency, origins, horizons: scoreHorizons(origins, input.horizon) };
    }),
  };
}

const share = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 1e4) / 1e4 : null);

export function scoreHorizons(origins: readonly OriginResult[], horizon: number): HorizonScore[] {
  const out: HorizonScore[] = [];
  for (let m = 1; m <= horizon; m++) {
    const at = origins.flatMap((o) => o.months.filter((x) => x.m === m));
    if (at.length === 0) continue;
    const actual = at.reduce((s, x) => s + x.actual_arr, 0);
    out.push({
      m,
      origins: at.length,
      wape: share(
        at.reduce((s, x) => s + Math.abs(x.expected_arr - x.actual_arr), 0),
        actual,
      ),
      bias: share(
        at.reduce((s, x) => s + x.expected_arr - x.actual_arr, 0),
        actual,
      ),
      coverage_80: share(at.filter((x) => x.p10 <= x.actual_arr && x.actual_arr <= x.p90).length, at.length),
      coverage_90: share(at.filter((x) => x.p05 <= x.actual_arr && x.actual_arr <= x.p95).length, at.length),
    });
  }
  return out;
}
