// The exact distribution of the ARR a book keeps: Σ aᵢ·Xᵢ with Xᵢ ~ Bernoulli(sᵢ) independent (the
// generalised Poisson-binomial), on a grid of amounts. Never a normal approximation: a book whose
// largest customers hold a fifth of its ARR is far from normal.
//
// Exact when the uncertain amounts' greatest common divisor leaves at most `exactCells` cells: a
// dynamic programme over small groups of customers, the groups' distributions multiplied by FFT
// convolution. Else each amount is rounded to a step s (chosen so the bound below is about
// `errorShare` of the book) and the answer states the bound E, with every exact quantile within E of
// the band reported. With D = Σ eᵢXᵢ the rounding (eᵢ = aᵢ − âᵢ, |eᵢ| ≤ s/2), S = Ŝ + D, and:
//   - D lies in [Σ min(eᵢ, 0), Σ max(eᵢ, 0)] always, and within t = √(Σeᵢ²·ln(2/η)/2) of its mean
//     Σeᵢpᵢ but with probability η = 10⁻⁹ (Hoeffding) — √n·s instead of n·s: at 100,000 customers,
//     the difference between a useless bound and one of 0.01 % of the book;
//   - the convolutions drop tails of at most 10⁻¹⁰ in all, and FFT round-off is allowed for by the
//     standard bound (8·ε·log₂N per cell, summed);
// so the exact α-quantile lies between the grid's quantiles at α ∓ (η + dropped + round-off), moved
// by D's range. Both intervals hold; the answer takes their intersection.

export const LEVELS = { p05: 0.05, p10: 0.1, p50: 0.5, p90: 0.9, p95: 0.95 } as const;
export type Quantiles = Record<keyof typeof LEVELS, number>;

export interface Retained {
  quantiles: Quantiles;
  /** The grid step in minor units (1 or the amounts' common divisor: exact). */
  step: number;
  /** The largest difference between a quantile reported and the exact one, in minor units. */
  errorBound: number;
}

export interface GridLimits {
  /** The common divisor's grid is used (exact) while the uncertain ARR spans at most this many cells. */
  exactCells: number;
  /** Else the step is chosen for a bound of about this share of the book… */
  errorShare: number;
  /** …but never more cells than this (memory and time: the bound then grows, and says so). */
  maxCells: number;
  /** Customers per group of the dynamic programme (GROUP); the bench sets it to all of them to time
   * the dynamic programme alone. */
  groupSize?: number;
}

/** Exact up to 2¹⁶ cells; else a bound near 0.1 % of the book, on at most 2¹⁸ cells. A forecast
 * computes 12 months × its currencies of these: at 0.01 % one took 0.2–0.6 s (400–10,000 customers),
 * 7–22 s a forecast; at 0.1 %, 19–44 ms. The single capped programme before it bounded 2–5 %. */
export const DEFAULT_LIMITS: GridLimits = { exactCells: 1 << 16, errorShare: 1e-3, maxCells: 1 << 18 };

const gcd = (a: number, b: number): number => {
  let x = a;
  let y = b;
  while (y) [x, y] = [y, x % y];
  return x;
};

/** Cumulative sums a hair below a level still reach it: a probability summed over many cells carries
 * rounding of this order, never a real mass. */
const TOLERANCE = 1e-12;
/** The chance the rounding strays further than t from its mean (Hoeffding). */
const ETA = 1e-9;
/** The probability all the convolutions' dropped tails may hold, in all. */
const TAILS = 1e-10;
/** Customers per group of the dynamic programme, whose distributions the FFT then multiplies. */
const GROUP = 16;

/**
 * Quantiles of the kept ARR of a book: `amounts` (positive integers, minor units) each kept with
 * probability `keep`. The amounts certain to be kept (or lost) add a constant (or nothing).
 */
export function retainedDistribution(amounts: readonly number[], keep: readonly number[], limits: GridLimits = DEFAULT_LIMITS): Retained {
  let certain = 0;
  let book = 0;
  const uncertainAmounts: number[] = [];
  const p: number[] = [];
  let divisor = 0;
  let uncertainTotal = 0;
  amounts.forEach((amount, i) => {
    if (amount <= 0) return;
    book += amount;
    const chance = keep[i]!;
    if (chance >= 1) certain += amount;
    else if (chance > 0) {
      uncertainAmounts.push(amount);
      p.push(chance);
      divisor = gcd(divisor, amount);
      uncertainTotal += amount;
    }
  });
  const n = p.length;
  if (n === 0) return { quantiles: constant(certain), step: 1, errorBound: 0 };

  let step = divisor;
  if (uncertainTotal / divisor > limits.exactCells) {
    // t ≈ s·√(n·ln(2/η)/24) for errors spread evenly over ±s/2, plus a cell for the grid's quantile.
    const spread = Math.sqrt((n * Math.log(2 / ETA)) / 24) + 1;
    step = Math.max(1, Math.floor((limits.errorShare * book) / spread), Math.ceil(uncertainTotal / limits.maxCells));
    if (step <= divisor) step = divisor;
  }
  const cells = new Int32Array(n);
  let below = 0; // Σ min(eᵢ, 0)
  let above = 0; // Σ max(eᵢ, 0)
  let shift = 0; // E[D] = Σ eᵢpᵢ
  let squares = 0; // Σ eᵢ²
  for (let i = 0; i < n; i++) {
    const c = Math.round(uncertainAmounts[i]! / step);
    const e = uncertainAmounts[i]! - c * step;
    cells[i] = c;
    if (e < 0) below += e;
    else above += e;
    shift += e * p[i]!;
    squares += e * e;
  }
  const spread = Math.sqrt((squares * Math.log(2 / ETA)) / 2);
  // Groups hold half to all of groupSize customers: fewer than 2n / groupSize convolutions, each
  // with two tails.
  const groupSize = Math.max(1, limits.groupSize ?? GROUP);
  const state: Product = { dropped: 0, roundoff: 0, tail: TAILS / (4 * Math.ceil(n / groupSize)), groupSize };
  const grid = product(cells, p, 0, n, state);
  // The grid's F̃ kept: F̂ − dropped − round-off ≤ F̃ ≤ F̂ + round-off.
  const down = state.dropped + state.roundoff;
  const up = state.roundoff;
  const exact = below === 0 && above === 0;

  const quantiles = {} as Quantiles;
  let errorBound = 0;
  for (const [name, alpha] of Object.entries(LEVELS) as [keyof Quantiles, number][]) {
    const at = (level: number) => certain + step * quantileOfGrid(grid, level);
    if (exact && down <= TOLERANCE) {
      quantiles[name] = at(alpha);
      continue;
    }
    // Each interval holds the exact quantile; so does their intersection.
    const lower = Math.max(at(alpha - down) + below, at(alpha - down - ETA) + shift - spread);
    const upper = Math.min(at(alpha + up) + above, at(alpha + up + ETA) + shift + spread);
    const reported = Math.min(Math.max(Math.round(at(alpha) + shift), Math.ceil(lower)), Math.floor(upper));
    quantiles[name] = reported;
    errorBound = Math.max(errorBound, Math.ceil(Math.max(reported - lower, upper - reported)));
  }
  return { quantiles, step, errorBound };
}

/** A distribution on the grid: P(Ŝ = offset + k) = mass[k] (tails dropped as the product goes). */
interface Grid {
  offset: number;
  mass: Float64Array;
}

/** What a product has lost so far: tails dropped, and the FFTs' round-off allowance (both as
 * probability), and the tail each convolution may still drop on each side. */
interface Product {
  dropped: number;
  roundoff: number;
  tail: number;
  groupSize: number;
}

/** The smallest grid value k with P(Ŝ ≤ k) ≥ level (the top when the mass kept never reaches it). */
function quantileOfGrid(grid: Grid, level: number): number {
  let cumulative = 0;
  for (let k = 0; k < grid.mass.length; k++) {
    cumulative += grid.mass[k]!;
    if (cumulative >= level - TOLERANCE) return grid.offset + k;
  }
  return grid.offset + grid.mass.length - 1;
}

/** The distribution of Σ cells[i]·Xᵢ over customers [from, to): by dynamic programme for a group,
 * else the product of its halves' distributions. */
function product(cells: Int32Array, p: readonly number[], from: number, to: number, state: Product): Grid {
  if (to - from <= state.groupSize) return group(cells, p, from, to);
  const middle = (from + to) >>> 1;
  return truncate(convolve(product(cells, p, from, middle, state), product(cells, p, middle, to, state), state), state);
}

function group(cells: Int32Array, p: readonly number[], from: number, to: number): Grid {
  let size = 1;
  for (let i = from; i < to; i++) size += cells[i]!;
  const mass = new Float64Array(size);
  mass[0] = 1;
  let top = 0;
  for (let i = from; i < to; i++) {
    const c = cells[i]!;
    // An amount under half a step rounds to no cell: kept or lost, the grid sees the same sum.
    if (c === 0) continue;
    const kept = p[i]!;
    const lost = 1 - kept;
    // From the top down, so each outcome is moved once: kept (shift by c) with p, lost with 1 − p.
    for (let s = top; s >= 0; s--) {
      const m = mass[s]!;
      if (m === 0) continue;
      mass[s + c] = mass[s + c]! + m * kept;
      mass[s] = m * lost;
    }
    top += c;
  }
  return { offset: 0, mass };
}

/** The distribution of the sum of two independent grid variables: directly when small or sparse,
 * else by FFT. */
function convolve(a: Grid, b: Grid, state: Product): Grid {
  const length = a.mass.length + b.mass.length - 1;
  let size = 1;
  while (size < length) size <<= 1;
  const [short, long] = a.mass.length <= b.mass.length ? [a.mass, b.mass] : [b.mass, a.mass];
  let nonzero = 0;
  for (let i = 0; i < short.length; i++) if (short[i] !== 0) nonzero++;
  const offset = a.offset + b.offset;
  if (nonzero * long.length <= 12 * size * Math.log2(size)) {
    const mass = new Float64Array(length);
    const longLength = long.length;
    for (let i = 0; i < short.length; i++) {
      const m = short[i]!;
      if (m === 0) continue;
      for (let j = 0; j < longLength; j++) mass[i + j] = mass[i + j]! + m * long[j]!;
    }
    return { offset, mass };
  }
  // Both in one complex transform: z = a + i·b, and A·B = (Z_k² − conj(Z_{N−k})²) / 4i.
  const re = new Float64Array(size);
  const im = new Float64Array(size);
  re.set(a.mass);
  im.set(b.mass);
  fft(re, im, false);
  const pr = new Float64Array(size);
  const pi = new Float64Array(size);
  for (let k = 0; k < size; k++) {
    const j = (size - k) & (size - 1);
    const zr = re[k]!;
    const zi = im[k]!;
    const wr = re[j]!;
    const wi = im[j]!;
    pr[k] = (zr * zi + wr * wi) / 2;
    pi[k] = -(zr * zr - zi * zi - wr * wr + wi * wi) / 4;
  }
  fft(pr, pi, true);
  const mass = new Float64Array(length);
  for (let k = 0; k < length; k++) mass[k] = Math.max(0, pr[k]! / size);
  // Round-off of a floating-point FFT convolution: at most about c·ε·log₂N per cell for inputs of
  // total mass 1 (c = 8 allowed), counted over every cell.
  state.roundoff += size * 8 * Number.EPSILON * Math.log2(size);
  return { offset, mass };
}

/** Drops each tail while it holds less than the state's allowance, and counts what it dropped. */
function truncate(grid: Grid, state: Product): Grid {
  const { mass } = grid;
  let lo = 0;
  let lost = 0;
  while (lo < mass.length - 1 && lost + mass[lo]! <= state.tail) lost += mass[lo++]!;
  let hi = mass.length - 1;
  let lostHigh = 0;
  while (hi > lo && lostHigh + mass[hi]! <= state.tail) lostHigh += mass[hi--]!;
  state.dropped += lost + lostHigh;
  if (lo === 0 && hi === mass.length - 1) return grid;
  return { offset: grid.offset + lo, mass: mass.slice(lo, hi + 1) };
}

/** cos and sin of 2πk/N (k < N/2) for each size N transformed, every level's in one contiguous run:
 * level `length` reads entries [length/2, length) — no strided reads through one large table. */
const twiddles = new Map<number, { cos: Float64Array; sin: Float64Array }>();

function twiddlesOf(n: number) {
  let table = twiddles.get(n);
  if (!table) {
    const cos = new Float64Array(n);
    const sin = new Float64Array(n);
    for (let length = 2; length <= n; length <<= 1) {
      const half = length >> 1;
      for (let k = 0; k < half; k++) {
        cos[half + k] = Math.cos((2 * Math.PI * k) / length);
        sin[half + k] = Math.sin((2 * Math.PI * k) / length);
      }
    }
    table = { cos, sin };
    twiddles.set(n, table);
  }
  return table;
}

/** In place, radix 2 (`re.length` a power of two); the inverse unscaled. */
function fft(re: Float64Array, im: Float64Array, inverse: boolean): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      const r = re[i]!;
      re[i] = re[j]!;
      re[j] = r;
      const m = im[i]!;
      im[i] = im[j]!;
      im[j] = m;
    }
  }
  const { cos, sin } = twiddlesOf(n);
  const sign = inverse ? 1 : -1;
  for (let length = 2; length <= n; length <<= 1) {
    const half = length >> 1;
    for (let start = 0; start < n; start += length)
      for (let k = 0; k < half; k++) {
        const wr = cos[half + k]!;
        const wi = sign * sin[half + k]!;
        const a = start + k;
        const b = a + half;
        const xr = re[b]! * wr - im[b]! * wi;
        const xi = re[b]! * wi + im[b]! * wr;
        re[b] = re[a]! - xr;
        im[b] = im[a]! - xi;
        re[a] = re[a]! + xr;
        im[a] = im[a]! + xi;
      }
  }
}

const constant = (value: number): Quantiles => ({ p05: value, p10: value, p50: value, p90: value, p95: value });

/** The q-quantile (smallest x with P(S ≤ x) ≥ q) of a distribution given as (value, probability)
 * pairs: the reference the tests enumerate against. */
export function quantileOf(outcomes: readonly { value: number; probability: number }[], q: number): number {
  const sorted = [...outcomes].sort((a, b) => a.value - b.value);
  let cumulative = 0;
  for (const o of sorted) {
    cumulative += o.probability;
    if (cumulative >= q - TOLERANCE) return o.value;
  }
  return sorted.at(-1)?.value ?? 0;
}
