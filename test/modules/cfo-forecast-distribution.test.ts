// The forecast's bands against brute-force enumeration of every outcome: exact on books of up to 16
// customers, the stated error bound holding when the grid is coarse, and a book two customers
// dominate (where a normal approximation would be wrong).
import { describe, expect, test } from 'bun:test';
import { LEVELS, quantileOf, type Quantiles, retainedDistribution } from '../../src/modules/cfo-forecast/distribution.ts';
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
      const result = retainedDistribution(amounts, keep, { work: 16 * 1_500_000, maxStepShare: 0.001 });
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
      // 1,000 cells: the coarsest grid the rule allows (a step of at most 0.1 % of the book).
      const result = retainedDistribution(amounts, keep, { work: 16, maxStepShare: 0.001 });
      expect(result.step).toBeGreaterThan(1);
      expect(result.step).toBeLessThanOrEqual(book * 0.001);
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
});
