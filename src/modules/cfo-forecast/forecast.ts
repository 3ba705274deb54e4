// The CFO's forecast (GET /api/cfo/forecast, docs/cfo.md "Forecast"): how much of today's book —
// no new customers — is still there at each of the next months' closes, from each customer's
// chance to churn within a year. A customer with a committed term churns, if it does, at the end of
// that term (and of each yearly renewal after it); a monthly or evergreen one at a constant monthly
// hazard 1 − (1 − p)^(1/12). Bands are quantiles of the exact distribution (distribution.ts).
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';
import { featuresAt, type FeatureRow } from '../predictions/features.ts';
import type { AdditiveModel } from '../predictions/logistic.ts';
import { PRIOR_SCORECARD } from '../predictions/features.ts';
import { YEAR_HORIZON_DAYS } from '../predictions/settings.ts';
import { priorModel, probabilityOf } from '../predictions/training.ts';
import { convertExact, roundExact } from '../cfo-history/currencies.ts';
import { ratesFor, type MissingRate } from '../cfo-history/fx.ts';
import { arrHistory, type SumsReader } from '../cfo-history/history.ts';
import { lastDayOf, monthIndex, monthOf, type Month } from '../cfo-history/months.ts';
import { DEFAULT_LIMITS, retainedDistribution, type GridLimits, type Quantiles } from './distribution.ts';

/** The churn probabilities the forecast reads speak of a year. */
export const FORECAST_HORIZON_DAYS = YEAR_HORIZON_DAYS;

export interface ForecastModel {
  /** Null: the scorecard at a year, not stored (the organisation has no trained 365-day model). */
  id: string | null;
  kind: string;
  parameters: AdditiveModel;
}

/** The organisation's model in force at a 365-day horizon, or else the scorecard brought to a year. */
export async function forecastModel(db: Db, orgId: string, priorAnnualChurn: number): Promise<ForecastModel> {
  const [found] = await queryRows<{ id: string; kind: string; parameters: AdditiveModel }>(
    db,
    sql`select id, kind, parameters from prediction_models
        where org_id = ${orgId} and horizon_days = ${FORECAST_HORIZON_DAYS} and status = 'active'`,
  );
  if (found) return found;
  return { id: null, kind: 'prior', parameters: priorModel(PRIOR_SCORECARD, { horizonDays: FORECAST_HORIZON_DAYS, priorAnnualChurn }) };
}

export interface BookCustomer {
  customerId: string;
  currency: string;
  /** Minor units of `currency`. */
  arr: number;
  /** Of churning within a year (FORECAST_HORIZON_DAYS). */
  probability: number;
  /** The end of its committed term (the earliest service end of its counting contracts); null:
   * monthly or evergreen. */
  termEnd: string | null;
}

/** The customers with ARR at `day`, as they were that day (features read nothing dated later), each
 * with its probability by `model`. */
export async function bookAt(
  db: Db,
  input: { orgId: string; day: string; graceDays: number; model: AdditiveModel; customerIds?: string[] },
): Promise<BookCustomer[]> {
  const rows = await featuresAt(db, {
    orgId: input.orgId,
    day: input.day,
    horizonDays: FORECAST_HORIZON_DAYS,
    population: 'active',
    graceDays: input.graceDays,
    labels: false,
    ...(input.customerIds ? { customerIds: input.customerIds } : {}),
  });
  return bookOf(rows, input.model);
}

/** Reads the book at a day: bookAt, or the stored features (stored-features.ts). */
export type BookReader = (
  db: Db,
  input: { orgId: string; day: string; graceDays: number; model: AdditiveModel },
) => Promise<BookCustomer[]>;

/** The customers of `rows` (features at a day, horizon a year) with ARR, each with its probability by `model`. */
export function bookOf(
  rows: readonly Pick<FeatureRow, 'customerId' | 'currency' | 'arr' | 'renewalDate' | 'values'>[],
  model: AdditiveModel,
): BookCustomer[] {
  return rows
    .filter((row) => row.arr > 0)
    .map((row) => ({
      customerId: row.customerId,
      currency: row.currency,
      arr: Math.round(row.arr),
      probability: probabilityOf(model, row.values),
      termEnd: row.renewalDate,
    }));
}

/** `day` plus `months` calendar months, the day of the month kept where the month has it. */
function addMonths(day: string, months: number): string {
  const index = monthIndex(day.slice(0, 7)) + months;
  const last = lastDayOf(monthOf(index));
  const candidate = `${monthOf(index)}-${day.slice(8, 10)}`;
  return candidate > last ? last : candidate;
}

/** A committed term's end and its yearly renewals after it that fall before `close`, in order.
 * Renewed terms are taken as a year each; 24 months ahead hold at most three ends. */
function termEndsBefore(termEnd: string, close: string): string[] {
  const ends: string[] = [];
  for (let k = 0; k < 30; k++) {
    const end = addMonths(termEnd, 12 * k);
    if (end >= close) break;
    ends.push(end);
  }
  return ends;
}

/** The chance a customer still has its ARR at a close: a term's end before the close (a contract
 * counts through its end date) is one draw of p; a monthly customer draws every month. */
export function survival(customer: Pick<BookCustomer, 'probability' | 'termEnd'>, close: string, m: number): number {
  const keep = 1 - customer.probability;
  if (customer.termEnd === null) return keep ** (m / 12);
  return keep ** termEndsBefore(customer.termEnd, close).length;
}

export interface ForecastMonth {
  month: Month;
  m: number;
  expected_arr: number;
  p05: number;
  p10: number;
  p50: number;
  p90: number;
  p95: number;
  expected_churned_customers: number;
  grr_forecast: number | null;
  /** Labelled apart: the expected ARR grown at the trailing twelve months' net expansion rate. */
  expected_arr_with_expansion: number | null;
  /** The largest difference between a band reported and the exact one, in minor units. */
  error_bound: number;
  grid_step: number;
}

/** The forecast of one currency's book for months 1..`months` after `today`'s. */
export function forecastBook(
  book: readonly Pick<BookCustomer, 'arr' | 'probability' | 'termEnd'>[],
  input: { today: string; months: number; expansionRate: number | null; limits?: GridLimits },
): ForecastMonth[] {
  const total = book.reduce((s, c) => s + c.arr, 0);
  const amounts = book.map((c) => c.arr);
  const current = monthIndex(input.today.slice(0, 7));
  // Each customer's term ends over the whole horizon, once: date arithmetic per customer and month
  // was half the forecast's CPU at 100,000 customers.
  const lastClose = lastDayOf(monthOf(current + input.months));
  const ends = book.map((c) => (c.termEnd === null ? null : termEndsBefore(c.termEnd, lastClose)));
  const out: ForecastMonth[] = [];
  for (let m = 1; m <= input.months; m++) {
    const month = monthOf(current + m);
    const close = lastDayOf(month);
    // As survival(c, close, m).
    const keep = book.map((c, i) => {
      const kept = 1 - c.probability;
      const before = ends[i];
      if (!before) return kept ** (m / 12);
      let n = 0;
      while (n < before.length && before[n]! < close) n++;
      return kept ** n;
    });
    let expected = 0;
    let churned = 0;
    keep.forEach((s, i) => {
      expected += amounts[i]! * s;
      churned += 1 - s;
    });
    const retained = retainedDistribution(amounts, keep, input.limits ?? DEFAULT_LIMITS);
    const q: Quantiles = retained.quantiles;
    out.push({
      month,
      m,
      expected_arr: Math.round(expected),
      ...q,
      expected_churned_customers: Math.round(churned * 1000) / 1000,
      grr_forecast: total > 0 ? Math.round((expected / total) * 1e6) / 1e6 : null,
      expected_arr_with_expansion: input.expansionRate === null ? null : Math.round(expected * (1 + input.expansionRate) ** (m / 12)),
      error_bound: retained.errorBound,
      grid_step: retained.step,
    });
  }
  return out;
}

/** forecastBook, or a memo of it (keepForecasts). */
export type BookForecaster = typeof forecastBook;

/**
 * forecastBook's answers kept, the `keep` most recently asked: the bands are most of a forecast's
 * CPU once the book is stored (100,000 demo customers: 36 distributions of 21,000 customers), and a
 * currency whose book did not change since — the same customers in the same order, amounts, chances
 * and term ends, on the same day, months and rate — has the same months to the unit. The book is
 * compared whole, not by a hash: a kept answer is never another book's.
 */
export function keepForecasts(keep = 16): BookForecaster {
  const kept = new Map<string, { book: Float64Array; months: ForecastMonth[] }>();
  return (book, input) => {
    const key = new Float64Array(book.length * 3);
    book.forEach((c, i) => {
      key[3 * i] = c.arr;
      key[3 * i + 1] = c.probability;
      key[3 * i + 2] = c.termEnd === null ? -1 : Date.parse(c.termEnd);
    });
    const id = `${input.today} ${input.months} ${input.expansionRate} ${JSON.stringify(input.limits ?? null)} ${book.length} ${Bun.hash(key)}`;
    const hit = kept.get(id);
    if (hit?.book.every((x, i) => x === key[i])) {
      kept.delete(id);
      kept.set(id, hit);
      return hit.months;
    }
    const months = forecastBook(book, input);
    kept.set(id, { book: key, months });
    if (kept.size > keep) kept.delete(kept.keys().next().value!);
    return months;
  };
}

export interface ForecastSeries {
  currency: string;
  customers: number;
  book_arr: number;
  /** Σ(expansion − contraction) of the twelve months before this one ÷ the ARR at their opening. */
  net_expansion_rate_12m: number | null;
  months: ForecastMonth[];
}

export interface Forecast {
  as_of: string;
  months: number;
  currency: string;
  reporting_currency: string | null;
  converted: boolean;
  missing_rates: MissingRate[];
  model: { id: string | null; kind: string; horizon_days: number };
  series: ForecastSeries[];
}

/** The trailing twelve full months' net expansion of each currency (or of the reporting currency,
 * under its name): one read of the history for every currency, kept by `readSums` when given. */
async function expansionRates(
  db: Db,
  input: { orgId: string; today: string; currency: string | undefined; reportingCurrency: string | null },
  readSums?: SumsReader,
): Promise<Map<string, number | null>> {
  const current = monthIndex(input.today.slice(0, 7));
  const reporting = input.currency === 'reporting';
  const history = await arrHistory(
    db,
    {
      orgId: input.orgId,
      from: monthOf(current - 12),
      to: monthOf(current - 1),
      today: input.today,
      ...(input.currency === undefined ? {} : { currency: input.currency }),
      reportingCurrency: input.reportingCurrency,
    },
    readSums,
  );
  const rates = new Map<string, number | null>();
  if (reporting && !history.converted) return rates;
  for (const series of history.series) {
    const opening = series.months[0]?.start_arr ?? 0;
    const net = series.months.reduce((s, x) => s + x.expansion - x.contraction, 0);
    rates.set(series.currency, opening > 0 ? Math.round((net / opening) * 1e6) / 1e6 : null);
  }
  return rates;
}

export async function cfoForecast(
  db: Db,
  input: {
    orgId: string;
    today: string;
    months: number;
    currency?: string;
    reportingCurrency: string | null;
    graceDays: number;
    priorAnnualChurn: number;
    limits?: GridLimits;
  },
  readSums?: SumsReader,
  readBook: BookReader = bookAt,
  forecastOf: BookForecaster = forecastBook,
): Promise<Forecast> {
  // With kept sums (the routes, whose `db` is a pool), the history read for the expansion rate starts
  // now, beside the features read — on PostgreSQL two connections at once; the embedded database
  // runs them one after the other — and expansionRates below finds it under way.
  if (readSums)
    readSums(db, { orgId: input.orgId, today: input.today, currency: input.currency === 'reporting' ? undefined : input.currency }).catch(
      () => {},
    );
  const model = await forecastModel(db, input.orgId, input.priorAnnualChurn);
  const book = await readBook(db, { orgId: input.orgId, day: input.today, graceDays: input.graceDays, model: model.parameters });
  const answer: Forecast = {
    as_of: input.today,
    months: input.months,
    currency: input.currency ?? 'all',
    reporting_currency: input.reportingCurrency,
    converted: false,
    missing_rates: [],
    model: { id: model.id, kind: model.kind, horizon_days: FORECAST_HORIZON_DAYS },
    series: [],
  };
  const seriesOf = (currency: string, customers: BookCustomer[], rates: Map<string, number | null>): ForecastSeries => {
    const rate = rates.get(currency) ?? null;
    return {
      currency,
      customers: customers.length,
      book_arr: customers.reduce((s, c) => s + c.arr, 0),
      net_expansion_rate_12m: rate,
      months: forecastOf(customers, { ...input, expansionRate: rate }),
    };
  };
  const byCurrency = new Map<string, BookCustomer[]>();
  for (const c of book) {
    if (input.currency && input.currency !== 'reporting' && c.currency !== input.currency) continue;
    const list = byCurrency.get(c.currency);
    if (list) list.push(c);
    else byCurrency.set(c.currency, [c]);
  }
  const currencies = [...byCurrency.keys()].sort();
  const perCurrency = async () => {
    const rates = await expansionRates(db, { ...input, currency: input.currency === 'reporting' ? undefined : input.currency }, readSums);
    return currencies.map((c) => seriesOf(c, byCurrency.get(c)!, rates));
  };
  if (input.currency !== 'reporting' || !input.reportingCurrency) return { ...answer, series: await perCurrency() };

  // Converted at this month's rate, kept for the months ahead (constant currency: no FX forecast).
  const reporting = input.reportingCurrency;
  const month = input.today.slice(0, 7);
  const needed = currencies.filter((c) => c !== reporting).map((currency) => ({ currency, month }));
  const { rates, missing } = await ratesFor(db, { orgId: input.orgId, quote: reporting, needed });
  if (missing.length > 0) return { ...answer, missing_rates: missing, series: await perCurrency() };
  const converted = book
    .filter((c) => byCurrency.has(c.currency))
    .map((c) => {
      const rate = rates.get(`${c.currency} ${month}`);
      return rate === undefined ? c : { ...c, arr: roundExact(convertExact(c.arr, rate, c.currency, reporting)), currency: reporting };
    });
  const expansion = await expansionRates(db, { ...input, currency: 'reporting' }, readSums);
  return { ...answer, converted: true, series: [seriesOf(reporting, converted, expansion)] };
}
