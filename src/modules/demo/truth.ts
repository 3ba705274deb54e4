// The demo's truth: each active customer's true probability of churning within H days after a day,
// from its hidden state that day (health.ts) — its health, its contract, the decisions already made
// — by (quasi-)Monte Carlo over the health paths that can follow. Kept in demo_truth, never served: a
// backtest of the demo compares its AUC with the truth's on the same rows (above it means leakage).
import { decisionB, decisionProbability, PHI, SHOCK, SHOCK_CHANCE, SIGMA } from './health.ts';
import type { demoTruth } from '../../db/schema/index.ts';

export type TruthInsert = typeof demoTruth.$inferInsert;

/** The horizon of the truth, and the days it is kept for: today and every 30 days back through the
 * history (the model's training snapshots fall on these days). */
export const TRUTH_HORIZON_DAYS = 90;
export const TRUTH_EVERY_DAYS = 30;

/** One churn decision still to come after the day: `months` health months ahead (0: this month,
 * whose health is known), with its logit c. */
export interface PendingDecision {
  months: number;
  c: number;
}

/** The Gaussian part of the paths: 32 stratified draws per month, the strata of months 2 and 3
 * permuted (a rank-1 lattice), symmetric around 0. */
const DRAWS = 32;
const LATTICE = [1, 13, 21] as const;

/** The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

const MAX_MONTHS = LATTICE.length;
/** The drift added in month m (1…3) on path (shock pattern s, draw q), at [(s·DRAWS + q)·3 + m − 1]. */
const increments = new Float64Array((1 << MAX_MONTHS) * DRAWS * MAX_MONTHS);
for (let s = 0; s < 1 << MAX_MONTHS; s++) {
  for (let q = 0; q < DRAWS; q++) {
    for (let m = 0; m < MAX_MONTHS; m++) {
      increments[(s * DRAWS + q) * MAX_MONTHS + m] =
        SIGMA * normalQuantile((((q * LATTICE[m]!) % DRAWS) + 0.5) / DRAWS) + (s & (1 << m) ? SHOCK : 0);
    }
  }
}

/** How many health paths the truth averages over: every pattern of shocks in the (up to) three
 * months ahead, with its exact probability, times 32 stratified Gaussian draws. */
export const TRUTH_PATHS = (1 << MAX_MONTHS) * DRAWS;

/**
 * P(at least one of `decisions` churns), from the health μ + x now: the mean over the paths of the
 * drift of each path's chance that none does (the product of its decisions' chances not to churn;
 * quasi-Monte Carlo: a fixed, weighted set of paths, the same for every customer, so no random draw
 * and the same answer every time). Decisions are at most 3 months ahead (H = 90 days).
 */
export function churnChance(mu: number, x: number, decisions: readonly PendingDecision[]): number {
  if (decisions.length === 0) return 0;
  // A decision does not churn with 1 − σ(c − B·(μ + x)) = 1 / (1 + e^(c − B·μ) · e^(−B·x)).
  let now = 1;
  let horizon = 0;
  for (const d of decisions) {
    if (d.months === 0) now *= 1 - decisionProbability(d.c, mu + x);
    else if (d.months > MAX_MONTHS) throw new Error(`a decision ${d.months} months ahead: the truth looks ${MAX_MONTHS} ahead at most`);
    else horizon = Math.max(horizon, d.months);
  }
  if (horizon === 0) return 1 - now;
  // One term per decision: e^(c − B·μ), and the month it falls in.
  const factors: number[] = [];
  const months: number[] = [];
  for (const d of decisions) {
    if (d.months === 0) continue;
    factors.push(Math.exp(d.c - decisionB * mu));
    months.push(d.months);
  }
  const e = [1, 0, 0, 0];
  let survival = 0;
  // Patterns differing only in months after the horizon are the same paths: the first 2^horizon
  // patterns, each with the probability of its shocks up to the horizon.
  for (let s = 0; s < 1 << horizon; s++) {
    let weight = 1;
    for (let m = 0; m < horizon; m++) weight *= s & (1 << m) ? SHOCK_CHANCE : 1 - SHOCK_CHANCE;
    let sum = 0;
    for (let q = 0, at = s * DRAWS * MAX_MONTHS; q < DRAWS; q++, at += MAX_MONTHS) {
      let path = x;
      for (let m = 1; m <= horizon; m++) {
        path = PHI * path + increments[at + m - 1]!;
        e[m] = Math.exp(-decisionB * path);
      }
      let alive = now;
      for (let k = 0; k < factors.length; k++) alive /= 1 + factors[k]! * e[months[k]!]!;
      sum += alive;
    }
    survival += (weight * sum) / DRAWS;
  }
  return 1 - survival;
}
