// The forecast's bands on the demo book against a seeded Monte Carlo of 200,000 draws of the same
// book (each customer kept at a close with its survival chance, independently). The exact quantile
// x of level α is the smallest x with F(x) ≥ α, so F(x) ≥ α and P(S < x) < α (each within the
// stated error bound E when the grid is coarse). The draws' empirical F̂ at a point is a binomial
// share: its standard error is √(F(1 − F)/N), at most √(α(1 − α)/N) = 0.00049 at α = 0.05 and
// 0.00112 at α = 0.5 for N = 200,000. Each band passes when F̂(x + E) ≥ α − 5·se and
// F̂⁻(x − E) ≤ α + 5·se (5 standard errors: ~3·10⁻⁷ a check, 180 checks). Embedded database only:
// what is checked is the arithmetic of the bands; the book's read is tested on both backends in
// cfo-forecast.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { utcToday } from '../../src/lib/today.ts';
import { lastDayOf } from '../../src/modules/cfo-history/months.ts';
import { LEVELS } from '../../src/modules/cfo-forecast/distribution.ts';
import { bookAt, cfoForecast, forecastModel, survival, type ForecastSeries } from '../../src/modules/cfo-forecast/forecast.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { seededRandom } from '../../src/modules/demo/generate.ts';
import { openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';

const today = utcToday();
const DRAWS = 200_000;
const MONTHS = 12;
const Z = 5;
const SETTINGS = { graceDays: 30, priorAnnualChurn: 0.12 };

/**
 * DRAWS outcomes of a book at each of months 1..MONTHS: row m − 1 of the answer holds each draw's
 * kept ARR at month m. One uniform per customer and draw serves every month (kept at m while
 * u < survival at m, which only falls with m): each month's outcome has the right distribution.
 */
function simulate(arr: readonly number[], keep: readonly Float64Array[], seed: number): Float64Array[] {
  const random = seededRandom(seed).next;
  const kept = Array.from({ length: MONTHS }, () => new Float64Array(DRAWS));
  const bins = new Float64Array(MONTHS + 1);
  for (let d = 0; d < DRAWS; d++) {
    bins.fill(0);
    for (let i = 0; i < arr.length; i++) {
      const u = random();
      const s = keep[i]!;
      // How many months it is kept: most customers are kept through the last, so count down.
      let k = MONTHS;
      while (k > 0 && u >= s[k - 1]!) k--;
      bins[k] = bins[k]! + arr[i]!;
    }
    let sum = 0;
    for (let m = MONTHS; m >= 1; m--) {
      sum += bins[m]!;
      kept[m - 1]![d] = sum;
    }
  }
  return kept;
}

/** The draws' F̂(x) (at or below) and F̂⁻(x) (strictly below). */
function shares(draws: Float64Array, x: number) {
  let atOrBelow = 0;
  let below = 0;
  for (let d = 0; d < draws.length; d++) {
    const v = draws[d]!;
    if (v <= x) atOrBelow++;
    if (v < x) below++;
  }
  return { atOrBelow: atOrBelow / draws.length, below: below / draws.length };
}

/** The levels a band of the draws fails at (empty when it is a quantile of level α within Z standard errors). */
function misfit(draws: Float64Array, band: number, bound: number, alpha: number): string[] {
  const se = Math.sqrt((alpha * (1 - alpha)) / draws.length);
  const { atOrBelow } = shares(draws, band + bound);
  const { below } = shares(draws, band - bound);
  const out: string[] = [];
  if (atOrBelow < alpha - Z * se) out.push(`F̂(x + E) = ${atOrBelow} < ${alpha} − ${Z}·${se.toFixed(5)}`);
  if (below > alpha + Z * se) out.push(`F̂⁻(x − E) = ${below} > ${alpha} + ${Z}·${se.toFixed(5)}`);
  return out;
}

describe('the forecast of the demo book against a Monte Carlo of 200,000 draws', () => {
  let database: TestDatabase;
  let series: ForecastSeries[];
  /** The same forecast on a grid ten times finer (a bound near 0.01 % of the book, not 0.1 %): the
   * p10 band stands out of the 5th percentile's bound in every month and currency. */
  let fineSeries: ForecastSeries[];
  const draws = new Map<string, Float64Array[]>();

  beforeAll(async () => {
    database = await openTestDatabase('embedded');
    const demo = await database.db.transaction((tx) =>
      loadDemo(tx as never, { orgName: uniqueName('demo-mc'), customers: 400, seed: 11, today, actor: 'test' }, DEFAULT_ACTION_SETTINGS),
    );
    const orgId = demo.org.id;
    const input = { orgId, today, months: MONTHS, reportingCurrency: null, ...SETTINGS };
    series = (await cfoForecast(database.db, input)).series;
    fineSeries = (await cfoForecast(database.db, { ...input, limits: { exactCells: 1 << 20, errorShare: 1e-4, maxCells: 1 << 22 } }))
      .series;
    const model = await forecastModel(database.db, orgId, SETTINGS.priorAnnualChurn);
    const book = await bookAt(database.db, { orgId, day: today, graceDays: SETTINGS.graceDays, model: model.parameters });
    series.forEach((s, k) => {
      const customers = book.filter((c) => c.currency === s.currency);
      const keep = customers.map((c) => Float64Array.from(s.months, (x) => survival(c, lastDayOf(x.month), x.m)));
      draws.set(
        s.currency,
        simulate(
          customers.map((c) => c.arr),
          keep,
          1000 + k,
        ),
      );
    });
  }, 300_000);
  afterAll(() => database.dispose());

  test('every band of every month and currency is its quantile within the draws’ standard error', () => {
    expect(series.map((s) => s.currency)).toEqual(['EUR', 'GBP', 'USD']);
    const failures: string[] = [];
    let uncertain = 0;
    for (const s of series) {
      expect(s.months).toHaveLength(MONTHS);
      for (const x of s.months) {
        const kept = draws.get(s.currency)![x.m - 1]!;
        // The mean of the draws against the expected ARR, within 5 of its standard errors.
        let mean = 0;
        let square = 0;
        for (const v of kept) {
          mean += v / DRAWS;
          square += (v * v) / DRAWS;
        }
        const se = Math.sqrt((square - mean * mean) / DRAWS);
        expect(Math.abs(mean - x.expected_arr)).toBeLessThanOrEqual(Z * se + 1);
        if (x.p05 < x.p95) uncertain++;
        for (const [name, alpha] of Object.entries(LEVELS) as [keyof typeof LEVELS, number][])
          for (const why of misfit(kept, x[name], x.error_bound, alpha)) failures.push(`${s.currency} m${x.m} ${name}: ${why}`);
      }
    }
    expect(failures).toEqual([]);
    // Bands with width: the check compared distributions, not constants.
    expect(uncertain).toBeGreaterThan(MONTHS * 2);
  });

  test('the check can fail: the p10 band taken for the 5th percentile is refused (the finer grid)', () => {
    let refused = 0;
    let checked = 0;
    for (const s of fineSeries) {
      for (const x of s.months) {
        if (x.p10 === x.p05) continue;
        checked++;
        if (misfit(draws.get(s.currency)![x.m - 1]!, x.p10, x.error_bound, LEVELS.p05).length > 0) refused++;
      }
    }
    expect(checked).toBeGreaterThan(0);
    expect(refused).toBe(checked);
  });
});
