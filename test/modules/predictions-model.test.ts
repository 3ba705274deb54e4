// The churn model's arithmetic: the solver converges to the penalised optimum (gradient < 1e-6),
// gives the same answer twice, recovers known coefficients, stays finite on separable data; Platt
// calibrates; every explanation adds up to its probability; the metrics match hand-computed values.
import { describe, expect, test } from 'bun:test';
import { seededRandom } from '../../src/modules/demo/generate.ts';
import {
  additiveFromFit,
  choleskySolve,
  explain,
  fitLogistic,
  fitPlatt,
  logit,
  sigmoid,
  standardise,
  standardiser,
} from '../../src/modules/predictions/logistic.ts';
import {
  auc,
  aucInterval,
  brier,
  calibrationTable,
  decileTable,
  ece,
  topDecileLift,
  type Scored,
} from '../../src/modules/predictions/metrics.ts';

/** n rows of d standard-normal-ish features and outcomes drawn from σ(b0 + b·x). */
function synthetic(n: number, trueBeta: number[], intercept: number, seed = 7) {
  const random = seededRandom(seed);
  const normal = () => {
    const u = Math.max(1e-12, random.next());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.next());
  };
  const X: number[][] = [];
  const y: (0 | 1)[] = [];
  for (let i = 0; i < n; i++) {
    const row = trueBeta.map(() => normal());
    X.push(row);
    y.push(random.next() < sigmoid(intercept + row.reduce((s, x, j) => s + x * trueBeta[j]!, 0)) ? 1 : 0);
  }
  return { X, y };
}

describe('logistic regression by Newton/IRLS', () => {
  test('converges to the penalised optimum: the gradient is below 1e-6, in a few iterations', () => {
    const { X, y } = synthetic(5_000, [1.2, -0.8, 0.3, 0], -1.5);
    const fit = fitLogistic(X, y, { lambda: 1 });
    expect(fit.converged).toBe(true);
    expect(fit.gradientNorm).toBeLessThan(1e-6);
    expect(fit.iterations).toBeLessThan(15);
    // The gradient recomputed independently at the answer is zero too (what "optimum" means).
    const grad = [0, 0, 0, 0, 0];
    X.forEach((row, i) => {
      const r = y[i]! - sigmoid(fit.intercept + row.reduce((s, x, j) => s + x * fit.coefficients[j]!, 0));
      grad[0]! += r;
      row.forEach((x, j) => (grad[j + 1]! += r * x));
    });
    fit.coefficients.forEach((b, j) => (grad[j + 1]! -= b));
    expect(Math.max(...grad.map(Math.abs))).toBeLessThan(1e-5);
  });

  test('recovers known coefficients from enough data', () => {
    const truth = [1.2, -0.8, 0.3, 0];
    const { X, y } = synthetic(40_000, truth, -1.5, 11);
    const fit = fitLogistic(X, y, { lambda: 0.01 });
    expect(fit.intercept).toBeCloseTo(-1.5, 1);
    fit.coefficients.forEach((b, j) => expect(Math.abs(b - truth[j]!)).toBeLessThan(0.06));
  });

  test('the same rows give the same model, bit for bit', () => {
    const { X, y } = synthetic(2_000, [0.5, -1], 0.2, 3);
    expect(fitLogistic(X, y)).toEqual(fitLogistic(X, y));
  });

  test('perfectly separable data stays finite under the penalty, and converges', () => {
    const X = Array.from({ length: 200 }, (_, i) => [i < 100 ? -1 - i / 100 : 1 + i / 100]);
    const y = X.map(([x]) => (x! > 0 ? 1 : 0));
    const fit = fitLogistic(X, y, { lambda: 1 });
    expect(fit.converged).toBe(true);
    expect(Number.isFinite(fit.coefficients[0]!)).toBe(true);
    expect(fit.coefficients[0]!).toBeGreaterThan(1);
    expect(fit.coefficients[0]!).toBeLessThan(50);
    // Without any penalty the optimum is at infinity: the solver stops at its limit, unconverged, finite.
    const unpenalised = fitLogistic(X, y, { lambda: 0, maxIterations: 30 });
    expect(Number.isFinite(unpenalised.coefficients[0]!)).toBe(true);
  });

  test('Cholesky solves a symmetric positive definite system', () => {
    const x = choleskySolve(
      [
        [4, 2, 0.4],
        [2, 5, 1],
        [0.4, 1, 3],
      ],
      [1, 2, 3],
    );
    expect(4 * x[0]! + 2 * x[1]! + 0.4 * x[2]!).toBeCloseTo(1, 12);
    expect(2 * x[0]! + 5 * x[1]! + 1 * x[2]!).toBeCloseTo(2, 12);
    expect(0.4 * x[0]! + 1 * x[1]! + 3 * x[2]!).toBeCloseTo(3, 12);
    expect(() => choleskySolve([[0]], [1])).toThrow(/positive definite/);
  });
});

describe('Platt calibration and the additive explanation', () => {
  test('Platt maps over-confident scores onto the observed rate', () => {
    // Scores three times too steep: the truth is σ(s / 3).
    const random = seededRandom(5);
    const scores = Array.from({ length: 20_000 }, () => (random.next() - 0.5) * 12);
    const outcomes = scores.map((s) => (random.next() < sigmoid(s / 3) ? 1 : 0) as 0 | 1);
    const platt = fitPlatt(scores, outcomes);
    expect(platt.slope).toBeGreaterThan(0.28);
    expect(platt.slope).toBeLessThan(0.39);
    expect(Math.abs(platt.offset)).toBeLessThan(0.08);
    const calibrated = scores.map((s, i) => ({ probability: sigmoid(platt.slope * s + platt.offset), outcome: outcomes[i]! }));
    expect(ece(calibrated)).toBeLessThan(0.02);
  });

  test('σ(base + Σ impacts) is the probability, to 1e-9, for every row; drivers sorted by |impact|', () => {
    const { X, y } = synthetic(3_000, [1, -2, 0.5], -1, 21);
    const raw = X.map((row) => [row[0]! * 100 + 5_000, row[1]!, row[2]! * 0.01]); // unstandardised scales
    const standard = standardiser(raw);
    const fit = fitLogistic(
      raw.map((r) => standardise(standard, r)),
      y,
    );
    const platt = fitPlatt(
      raw.map((r) => fit.intercept + standardise(standard, r).reduce((s, z, j) => s + z * fit.coefficients[j]!, 0)),
      y,
    );
    const model = additiveFromFit(['arr', 'tickets', 'overdue'], fit, standard, platt);
    for (const row of raw.slice(0, 500)) {
      const { probability, base, drivers } = explain(model, row);
      expect(Math.abs(sigmoid(base + drivers.reduce((s, d) => s + d.impact, 0)) - probability)).toBeLessThan(1e-9);
      const direct = sigmoid(
        platt.slope * (fit.intercept + standardise(standard, row).reduce((s, z, j) => s + z * fit.coefficients[j]!, 0)) + platt.offset,
      );
      expect(Math.abs(direct - probability)).toBeLessThan(1e-9);
      for (let i = 1; i < drivers.length; i++)
        expect(Math.abs(drivers[i - 1]!.impact)).toBeGreaterThanOrEqual(Math.abs(drivers[i]!.impact));
    }
  });

  test('logit and sigmoid are inverses and do not overflow', () => {
    for (const p of [1e-9, 0.01, 0.5, 0.97]) expect(sigmoid(logit(p))).toBeCloseTo(p, 12);
    expect(sigmoid(1_000)).toBe(1);
    expect(sigmoid(-1_000)).toBe(0);
    expect(Number.isFinite(logit(0))).toBe(true);
  });
});

describe('metrics', () => {
  const rows = (pairs: [number, 0 | 1][], groups?: string[]): Scored[] =>
    pairs.map(([probability, outcome], i) => ({ probability, outcome, group: groups?.[i] }));

  test('AUC counts pairs ranked right, ties as half', () => {
    expect(
      auc(
        rows([
          [0.1, 0],
          [0.4, 0],
          [0.35, 1],
          [0.8, 1],
        ]),
      ),
    ).toBe(0.75);
    expect(
      auc(
        rows([
          [0.5, 0],
          [0.5, 1],
        ]),
      ),
    ).toBe(0.5);
    expect(
      auc(
        rows([
          [0.9, 0],
          [0.1, 1],
        ]),
      ),
    ).toBe(0);
    expect(
      auc(
        rows([
          [0.2, 0],
          [0.3, 0],
        ]),
      ),
    ).toBeNaN();
  });

  test('the bootstrap interval is seeded and resamples customers', () => {
    const random = seededRandom(9);
    const many = Array.from({ length: 400 }, (_, i) => {
      const outcome = (random.next() < 0.3 ? 1 : 0) as 0 | 1;
      return { probability: outcome ? 0.3 + random.next() * 0.7 : random.next() * 0.7, outcome, group: `cus_${i % 100}` };
    });
    const [low, high] = aucInterval(many, { seed: 1 });
    expect(aucInterval(many, { seed: 1 })).toEqual([low, high]);
    expect(low).toBeLessThan(auc(many));
    expect(high).toBeGreaterThan(auc(many));
  });

  test('Brier, ECE, the calibration and decile tables on hand-checked rows', () => {
    const data = rows(Array.from({ length: 20 }, (_, i): [number, 0 | 1] => [(i + 0.5) / 20, i >= 15 ? 1 : 0]));
    expect(
      brier(
        rows([
          [0.2, 0],
          [0.6, 1],
        ]),
      ),
    ).toBeCloseTo((0.04 + 0.16) / 2, 12);
    const table = calibrationTable(data);
    expect(table).toHaveLength(10);
    expect(table.every((b) => b.n === 2)).toBe(true);
    expect(table[9]).toEqual({ bin: 10, n: 2, mean_predicted: (18.5 + 19.5) / 40, observed_rate: 1 });
    const expectedEce = table.reduce((s, b) => s + (b.n / 20) * Math.abs(b.mean_predicted - b.observed_rate), 0);
    expect(ece(data)).toBeCloseTo(expectedEce, 12);
    const deciles = decileTable(data);
    expect(deciles[0]).toMatchObject({ decile: 1, n: 2, events: 2, observed_rate: 1, lift: 4 });
    expect(topDecileLift(data)).toBe(4);
  });
});
