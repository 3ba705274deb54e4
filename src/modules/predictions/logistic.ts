// The churn model's arithmetic: L2-regularised logistic regression fitted by Newton's method (IRLS)
// on standardised features, Platt calibration of its scores, and the additive form every prediction
// is explained in. Small and deterministic: the same rows give the same model, bit for bit, and a
// fit stops when the gradient of the penalised log-likelihood is below 1e-6.
//
// Why our own solver: the problems are small (tens of features, up to a few hundred thousand rows),
// Newton converges in a handful of iterations on them, and a Cholesky solve of a d×d system is a
// few lines. What matters is that it is exact and explainable, not fast linear algebra.

/** σ(z), without overflow for large |z|. */
export const sigmoid = (z: number): number => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

/** log(p / (1 − p)), with p kept inside (0, 1). */
export const logit = (p: number): number => {
  const q = Math.min(1 - 1e-12, Math.max(1e-12, p));
  return Math.log(q / (1 - q));
};

export interface Standardiser {
  means: number[];
  /** Standard deviations; 1 for a constant column (it then stays 0 after centring). */
  scales: number[];
}

/** Column means and standard deviations of `rows` (population, so a fit is independent of n). */
export function standardiser(rows: readonly number[][]): Standardiser {
  const d = rows[0]?.length ?? 0;
  const means = new Array<number>(d).fill(0);
  const scales = new Array<number>(d).fill(0);
  for (const row of rows) for (let j = 0; j < d; j++) means[j]! += row[j]! / rows.length;
  for (const row of rows) for (let j = 0; j < d; j++) scales[j]! += (row[j]! - means[j]!) ** 2 / rows.length;
  for (let j = 0; j < d; j++) scales[j] = scales[j]! > 1e-24 ? Math.sqrt(scales[j]!) : 1;
  return { means, scales };
}

export const standardise = (s: Standardiser, row: readonly number[]): number[] => row.map((x, j) => (x - s.means[j]!) / s.scales[j]!);

export interface LogisticFit {
  intercept: number;
  coefficients: number[];
  iterations: number;
  converged: boolean;
  /** The largest absolute component of the penalised gradient at the solution. */
  gradientNorm: number;
}

export interface FitOptions {
  /** L2 penalty on the coefficients (not the intercept). */
  lambda?: number;
  maxIterations?: number;
  tolerance?: number;
  /** Row weights (default 1). */
  weights?: readonly number[];
  /** Where Newton starts (intercept first; default 0): a nearby problem's solution converges in
   * fewer steps to the same optimum. */
  start?: readonly number[];
}

/**
 * Maximises Σ w_i [y_i log p_i + (1 − y_i) log(1 − p_i)] − λ/2 ‖β‖² by Newton's method, each step
 * halved until the objective does not fall (so it converges from any start, separable data
 * included: the penalty keeps the optimum finite). `y` may be fractional (Platt's smoothed targets).
 */
export function fitLogistic(X: readonly number[][], y: readonly number[], options: FitOptions = {}): LogisticFit {
  const lambda = options.lambda ?? 1;
  const maxIterations = options.maxIterations ?? 100;
  const tolerance = options.tolerance ?? 1e-6;
  const n = X.length;
  const d = X[0]?.length ?? 0;
  const k = d + 1; // parameter 0 is the intercept
  const weight = (i: number) => options.weights?.[i] ?? 1;
  let beta = options.start?.length === k ? [...options.start] : new Array<number>(k).fill(0);

  const linear = (b: number[], row: readonly number[]) => {
    let z = b[0]!;
    for (let j = 0; j < d; j++) z += b[j + 1]! * row[j]!;
    return z;
  };
  const objective = (b: number[]) => {
    let value = 0;
    for (let i = 0; i < n; i++) {
      const z = linear(b, X[i]!);
      // log σ(z) and log(1 − σ(z)), stable for large |z|
      const logP = -softplus(-z);
      const log1mP = -softplus(z);
      value += weight(i) * (y[i]! * logP + (1 - y[i]!) * log1mP);
    }
    for (let j = 1; j < k; j++) value -= (lambda / 2) * b[j]! ** 2;
    return value;
  };

  let iterations = 0;
  let gradientNorm = Infinity;
  let current = objective(beta);
  for (; iterations < maxIterations; iterations++) {
    const gradient = new Array<number>(k).fill(0);
    const hessian = Array.from({ length: k }, () => new Array<number>(k).fill(0));
    for (let i = 0; i < n; i++) {
      const row = X[i]!;
      const p = sigmoid(linear(beta, row));
      const w = weight(i);
      const residual = w * (y[i]! - p);
      const curvature = w * p * (1 - p);
      gradient[0]! += residual;
      hessian[0]![0]! += curvature;
      for (let a = 0; a < d; a++) {
        gradient[a + 1]! += residual * row[a]!;
        const ca = curvature * row[a]!;
        hessian[a + 1]![0]! += ca;
        for (let b = 0; b <= a; b++) hessian[a + 1]![b + 1]! += ca * row[b]!;
      }
    }
    for (let j = 1; j < k; j++) {
      gradient[j]! -= lambda * beta[j]!;
      hessian[j]![j]! += lambda;
    }
    // Symmetric: fill the upper triangle from the lower.
    for (let a = 0; a < k; a++) for (let b = a + 1; b < k; b++) hessian[a]![b] = hessian[b]![a]!;
    gradientNorm = Math.max(...gradient.map(Math.abs));
    if (gradientNorm < tolerance) break;
    // A tiny ridge on the intercept keeps the system positive definite when every p is 0 or 1.
    hessian[0]![0]! += 1e-12;
    const step = choleskySolve(hessian, gradient);
    let scale = 1;
    let next = beta.map((b, j) => b + step[j]!);
    let value = objective(next);
    // A step may not lower the objective by more than rounding: near the optimum the objective is
    // flat to within float precision while the gradient still has digits to lose.
    const slack = 1e-12 * (1 + Math.abs(current));
    while (value < current - slack && scale > 1e-10) {
      scale /= 2;
      next = beta.map((b, j) => b + scale * step[j]!);
      value = objective(next);
    }
    beta = next;
    current = value;
  }
  return { intercept: beta[0]!, coefficients: beta.slice(1), iterations, converged: gradientNorm < tolerance, gradientNorm };
}

/** log(1 + e^x) without overflow. */
const softplus = (x: number) => (x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x)));

/** Solves A x = b for a symmetric positive definite A (Cholesky, A = L Lᵀ). */
export function choleskySolve(A: readonly number[][], b: readonly number[]): number[] {
  const n = b.length;
  const L = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = A[i]![j]!;
      for (let m = 0; m < j; m++) sum -= L[i]![m]! * L[j]![m]!;
      if (i === j) {
        if (sum <= 0) throw new Error('matrix is not positive definite');
        L[i]![i] = Math.sqrt(sum);
      } else L[i]![j] = sum / L[j]![j]!;
    }
  }
  const z = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    let sum = b[i]!;
    for (let m = 0; m < i; m++) sum -= L[i]![m]! * z[m]!;
    z[i] = sum / L[i]![i]!;
  }
  const x = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    let sum = z[i]!;
    for (let m = i + 1; m < n; m++) sum -= L[m]![i]! * x[m]!;
    x[i] = sum / L[i]![i]!;
  }
  return x;
}

export interface Platt {
  /** Calibrated logit = slope · score + offset. */
  slope: number;
  offset: number;
}

/** Platt scaling of raw logit scores against outcomes, with Platt's smoothed targets (so a score
 * that separates the outcomes perfectly still gets a finite slope). */
export function fitPlatt(scores: readonly number[], outcomes: readonly (0 | 1)[]): Platt {
  const positives = outcomes.filter((o) => o === 1).length;
  const negatives = outcomes.length - positives;
  const high = (positives + 1) / (positives + 2);
  const low = 1 / (negatives + 2);
  const fit = fitLogistic(
    scores.map((s) => [s]),
    outcomes.map((o) => (o === 1 ? high : low)),
    { lambda: 1e-6 },
  );
  return { slope: fit.coefficients[0]!, offset: fit.intercept };
}

export interface Driver {
  feature: string;
  impact: number;
}

/** A linear model in the additive form: logit p = base + Σ weight_j · (x_j − centre_j). With
 * standardised features and Platt on top, weight_j = slope · β_j / scale_j, centre_j = mean_j and
 * base = slope · β_0 + offset: a driver's impact is its push away from the average customer of the
 * training rows. */
export interface AdditiveModel {
  base: number;
  features: { key: string; weight: number; centre: number }[];
}

export function additiveFromFit(
  keys: readonly string[],
  fit: LogisticFit,
  standard: Standardiser,
  platt: Platt = { slope: 1, offset: 0 },
): AdditiveModel {
  return {
    base: platt.slope * fit.intercept + platt.offset,
    features: keys.map((key, j) => ({
      key,
      weight: (platt.slope * fit.coefficients[j]!) / standard.scales[j]!,
      centre: standard.means[j]!,
    })),
  };
}

/** The probability and its drivers, sorted by |impact|: σ(base + Σ impact) is the probability. */
export function explain(model: AdditiveModel, values: readonly number[]): { probability: number; base: number; drivers: Driver[] } {
  const drivers = model.features.map((f, j) => ({ feature: f.key, impact: f.weight * (values[j]! - f.centre) }));
  const z = drivers.reduce((sum, d) => sum + d.impact, model.base);
  drivers.sort((a, b) => Math.abs(b.impact) - Math.abs(a.impact) || (a.feature < b.feature ? -1 : 1));
  return { probability: sigmoid(z), base: model.base, drivers };
}
