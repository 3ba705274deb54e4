// The forecast's bands against brute-force enumeration of every outcome: exact on books of up to 16
// customers, the stated error bound holding when the grid is coarse, and a book two customers
// dominate (where a normal approximation would be wrong). Larger books, whose groups' distributions
// are multiplied by FFT, against a plain dynamic programme over every minor unit.
import { describe, expect, test } from 'bun:test';
import { DEFAULT_LIMITS, LEVELS, quantileOf, type Quantiles, retainedDistribution } from '../../src/modules/cfo-forecast/distribution.ts';
import { seededRandom } from '../../src/modules/demo/generate.ts';

const quantilesOf = (outcomes: { value: number; probability: number }[]): Quantiles => ({
  p05: quantileOf(outcomes, LEVELS.p05),
  p10: quantileOf(outcomes, LEVELS.p10),
  p50: quantileOf(outcomes, LEVELS.p50),
  p90: quantileOf(outcomes, LEVELS.p90),
  p95: quantileOf(outcomes, LEVELS.p95),
});

/** Every outcome of a small book: 2ⁿ (kept ARR, probability) pairs. */
function enumerate(amounts: number[], keep: number[]) {
  const outcomes: { value: number; probability: number }[] = [];
  for (let mask = 0; mask < 1 << amounts.length; mask++) {
    let value = 0;
    let probability = 1;
    amounts.forEach((a, i) => {
      const kept = (mask >> i) & 1;
      value += kept ? a : 0;
      probability *= kept ? keep[i]! : 1 - keep[i]!;
    });
    outcomes.push({ value, probability });
  }
  return outcomes;
}

function exactQuantiles(amounts: number[], keep: number[]) {
  const outcomes = enumerate(amounts, keep);
  return quantilesOf(outcomes);
}

/** The quantiles of a book by a plain dynamic programme over every minor unit (the reference for
 * books too large to enumerate). */
function referenceQuantiles(amounts: number[], keep: number[]): Quantiles {
  const mass = new Float64Array(amounts.reduce((s, a) => s + a, 0) + 1);
  mass[0] = 1;
  let top = 0;
  amounts.forEach((a, i) => {
    for (let s = top; s >= 0; s--) {
      mass[s + a] = mass[s + a]! + mass[s]! * keep[i]!;
      mass[s] = mass[s]! * (1 - keep[i]!);
    }
    top += a;
  });
  const outcomes = Array.from(mass, (probability, value) => ({ value, probability })).filter((o) => o.probability > 0);
  return quantilesOf(outcomes);
}

function randomBook(seed: number, n: number, largest: number) {
  const random = seededRandom(seed).next;
  const amounts = Array.from({ length: n }, () => 1 + Math.floor(random() * largest));
  const keep = Array.from({ length: n }, () => 0.05 + 0.9 * random());
  return { amounts, keep };
}

describe('the distribution of the ARR kept', () => {
  test('three customers: the quantiles are those of the 2³ outcomes', () => {
    const amounts = [120_000, 24_000, 60_000];
    const keep = [0.7, 0.9, 0.5];
    const result = retainedDistribution(amounts, keep);
    expect(result.errorBound).toBe(0);
    expect(result.quantiles).toEqual(exactQuantiles(amounts, keep));
  });

  test('sixteen customers of arbitrary amounts: exact, to the minor unit', () => {
    for (const seed of [1, 2, 3]) {
      const { amounts, keep } = randomBook(seed, 16, 90_000);
      // Enough work for one cell per minor unit: exact.
      const result = retainedDistribution(amounts, keep, { ...DEFAULT_LIMITS, exactCells: 16 * 90_000 });
      expect([result.step, result.errorBound]).toEqual([1, 0]);
      expect(result.quantiles).toEqual(exactQuantiles(amounts, keep));
    }
  });

  test('customers certain to stay or to go add a constant or nothing', () => {
    const amounts = [10_000, 20_000, 30_000, 40_000];
    const result = retainedDistribution(amounts, [1, 0, 0.5, 0.5]);
    expect(result.quantiles).toEqual(exactQuantiles(amounts, [1, 0, 0.5, 0.5]));
    expect(result.quantiles.p05).toBe(10_000);
    expect(result.quantiles.p95).toBe(80_000);
  });

  test('on a coarse grid each band is within the stated error bound of the exact quantile', () => {
    for (const seed of [4, 5, 6]) {
      const { amounts, keep } = randomBook(seed, 16, 1_000_003);
      const book = amounts.reduce((s, a) => s + a, 0);
      // At most 1,000 cells: a step of about 0.1 % of the book.
      const result = retainedDistribution(amounts, keep, { exactCells: 0, errorShare: 0.001, maxCells: 1_000 });
      expect(result.step).toBeGreaterThan(1);
      expect(result.step).toBeLessThanOrEqual(book * 0.002);
      expect(result.errorBound).toBeGreaterThan(0);
      const exact = exactQuantiles(amounts, keep);
      for (const name of Object.keys(LEVELS) as (keyof typeof LEVELS)[])
        expect(Math.abs(result.quantiles[name] - exact[name]!)).toBeLessThanOrEqual(result.errorBound);
    }
  });

  test('a book two customers dominate: exact bands, far from a normal approximation', () => {
    // Two customers hold 80 % of the ARR, fourteen small ones the rest.
    const amounts = [400_000, 400_000, ...Array.from({ length: 14 }, (_, i) => 10_000 + 1_000 * i)];
    const keep = amounts.map((_, i) => (i < 2 ? 0.8 : 0.9));
    const result = retainedDistribution(amounts, keep);
    const exact = exactQuantiles(amounts, keep);
    expect(result.errorBound).toBe(0);
    expect(result.quantiles).toEqual(exact);
    // The normal approximation's 5th percentile: mean − 1.645 sd.
    const mean = amounts.reduce((s, a, i) => s + a * keep[i]!, 0);
    const sd = Math.sqrt(amounts.reduce((s, a, i) => s + a * a * keep[i]! * (1 - keep[i]!), 0));
    const normalP05 = mean - 1.645 * sd;
    // The exact p05 is one large customer lost: the normal one misses it by tens of thousands.
    expect(exact.p05!).toBeLessThan(600_000);
    expect(Math.abs(normalP05 - exact.p05!)).toBeGreaterThan(20_000);
  });

  test('two hundred customers: the groups multiplied by FFT give the quantiles of every minor unit', () => {
    const { amounts, keep } = randomBook(7, 200, 1_000);
    const result = retainedDistribution(amounts, keep, { ...DEFAULT_LIMITS, exactCells: 1 << 20 });
    // Exact grid; the FFT's round-off allowance (~10⁻⁸ of probability) may move a band by a unit.
    expect(result.step).toBe(1);
    expect(result.errorBound).toBeLessThanOrEqual(1);
    const exact = referenceQuantiles(amounts, keep);
    for (const name of Object.keys(LEVELS) as (keyof typeof LEVELS)[])
      expect(Math.abs(result.quantiles[name] - exact[name])).toBeLessThanOrEqual(result.errorBound);
  });

  test('two hundred customers on a coarse grid: within the stated bound, and the bound far under Σ|rounding|', () => {
    for (const seed of [9]) {
      const { amounts, keep } = randomBook(seed, 200, 1_001);
      const book = amounts.reduce((s, a) => s + a, 0);
      const result = retainedDistribution(amounts, keep, { exactCells: 0, errorShare: 0.002, maxCells: 1 << 22 });
      const exact = referenceQuantiles(amounts, keep);
      expect(result.step).toBeGreaterThan(1);
      for (const name of Object.keys(LEVELS) as (keyof typeof LEVELS)[])
        expect(Math.abs(result.quantiles[name] - exact[name])).toBeLessThanOrEqual(result.errorBound);
      // The old bound, Σ|aᵢ − âᵢ|, is about n·step/4; this one grows as √n·step.
      const rounding = amounts.reduce((s, a) => s + Math.abs(a - Math.round(a / result.step) * result.step), 0);
      expect(result.errorBound).toBeLessThan(rounding / 2);
      expect(result.errorBound).toBeLessThanOrEqual(book * 0.003);
    }
  });

  test('fifty thousand customers in one currency: a bound within 0.2 % of the book', () => {
    const { amounts, keep } = randomBook(11, 50_000, 5_000_000);
    const book = amounts.reduce((s, a) => s + a, 0);
    const result = retainedDistribution(amounts, keep);
    expect(result.errorBound).toBeGreaterThan(0);
    expect(result.errorBound).toBeLessThanOrEqual(book * 0.002);
    // The bands are ordered and around the mean (within 6 standard deviations).
    const mean = amounts.reduce((s, a, i) => s + a * keep[i]!, 0);
    const sd = Math.sqrt(amounts.reduce((s, a, i) => s + a * a * keep[i]! * (1 - keep[i]!), 0));
    const q = result.quantiles;
    expect([q.p05 <= q.p10, q.p10 <= q.p50, q.p50 <= q.p90, q.p90 <= q.p95]).toEqual([true, true, true, true]);
    expect(Math.abs(q.p50 - mean)).toBeLessThan(sd);
    expect(q.p95 - q.p05).toBeGreaterThan(3 * sd);
    expect(q.p95 - q.p05).toBeLessThan(4 * sd);
  }, 300_000);
});
