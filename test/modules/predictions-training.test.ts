// Training and judging churn models on synthetic histories whose true churn probability is known:
// the tier follows the amount of history, a backtest beats the untrained scorecard without beating
// the truth (which would mean leakage), is calibrated, and reproducible; a worse candidate is
// rejected with its reason.
import { describe, expect, test } from 'bun:test';
import { seededRandom } from '../../src/modules/demo/generate.ts';
import { explain, sigmoid } from '../../src/modules/predictions/logistic.ts';
import { auc } from '../../src/modules/predictions/metrics.ts';
import {
  addDays,
  backtestCrossValidation,
  backtestOutOfTime,
  chooseKind,
  countEvents,
  evaluate,
  foldsByCustomer,
  priorBase,
  promotion,
  trainModel,
  type PriorFeature,
  type Snapshot,
} from '../../src/modules/predictions/training.ts';

const KEYS = ['renewal_due_no_autorenew', 'negative_tickets', 'arr_log', 'seats_contraction'];
// The scorecard knows the directions but not the sizes, and gives nothing for a signal that
// matters in this organisation (seats contraction), as hand-weighted points do.
const PRIOR: PriorFeature[] = [
  { key: 'renewal_due_no_autorenew', weight: 0.8, neutral: 0 },
  { key: 'negative_tickets', weight: 0.3, neutral: 0 },
  { key: 'arr_log', weight: -0.1, neutral: 8 },
  { key: 'seats_contraction', weight: 0, neutral: 0 },
];
const SETTINGS = { horizonDays: 90, priorAnnualChurn: 0.12, graceDays: 30, seed: 42 };

/** Customers observed every 30 days for `months`; each snapshot churns within the horizon with the
 * true probability σ(−3.2 + 1.6·renewal − 0.5·(arr−8) + 0.45·tickets + 1.5·contraction); a churned
 * customer leaves. */
function history(customers: number, months: number, seed: number): (Snapshot & { truth: number })[] {
  const random = seededRandom(seed);
  const rows: (Snapshot & { truth: number })[] = [];
  for (let c = 0; c < customers; c++) {
    const arr = 6 + random.next() * 4;
    let tickets = Math.floor(random.next() * 3);
    for (let m = 0; m < months; m++) {
      const t = addDays('2024-01-01', m * 30);
      const renewal = random.next() < 0.25 ? 1 : 0;
      tickets = Math.max(0, tickets + (random.next() < 0.5 ? -1 : 1));
      const contraction = random.next() < 0.2 ? 1 : 0;
      const values = [renewal, tickets, arr, contraction];
      const truth = sigmoid(-3.2 + 1.6 * renewal - 0.5 * (arr - 8) + 0.45 * tickets + 1.5 * contraction);
      const churned = random.next() < truth;
      rows.push({
        customerId: `cus_${seed}_${c}`,
        t,
        values,
        outcome: churned ? 1 : 0,
        churnDay: churned ? addDays(t, 45) : null,
        noticeKnown: churned && random.next() < 0.2,
        truth,
      });
      if (churned) break;
    }
  }
  return rows;
}

describe('tiers', () => {
  const withEvents = (events: number, customers: number): Snapshot[] =>
    Array.from({ length: customers }, (_, i) => ({
      customerId: `c${i}`,
      t: '2025-01-01',
      values: [0, 0, 8, 0],
      outcome: (i < events ? 1 : 0) as 0 | 1,
      churnDay: i < events ? '2025-02-01' : null,
    }));

  test('0, 15 and 80 churn events give the prior, the recalibrated prior and the logistic model', () => {
    expect(chooseKind(withEvents(0, 300))).toBe('prior');
    expect(chooseKind(withEvents(15, 300))).toBe('prior_recalibrated');
    expect(chooseKind(withEvents(80, 300))).toBe('logistic');
    // 50+ events but fewer than 200 customers: not enough to fit every weight.
    expect(chooseKind(withEvents(80, 150))).toBe('prior_recalibrated');
  });

  test('events are distinct (customer, churn day) pairs, not positive rows', () => {
    const rows: Snapshot[] = [
      { customerId: 'a', t: '2025-01-01', values: [], outcome: 1, churnDay: '2025-03-01' },
      { customerId: 'a', t: '2025-01-31', values: [], outcome: 1, churnDay: '2025-03-01' },
      { customerId: 'b', t: '2025-01-01', values: [], outcome: 1, churnDay: '2025-02-10' },
    ];
    expect(countEvents(rows)).toBe(2);
  });

  test("the prior's base is the annual rate brought to the horizon", () => {
    expect(sigmoid(priorBase({ horizonDays: 90, priorAnnualChurn: 0.12 }))).toBeCloseTo(1 - 0.88 ** (90 / 365), 12);
    expect(sigmoid(priorBase({ horizonDays: 365, priorAnnualChurn: 0.12 }))).toBeCloseTo(0.12, 12);
  });

  test('folds hold whole customers, and the same seed deals them the same way', () => {
    const rows = history(200, 12, 3);
    const folds = foldsByCustomer(rows, 5, 42);
    expect(new Set(folds.values())).toEqual(new Set([0, 1, 2, 3, 4]));
    expect(foldsByCustomer(rows, 5, 42)).toEqual(folds);
    const sizes = [0, 1, 2, 3, 4].map((k) => [...folds.values()].filter((f) => f === k).length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  });
});

describe('backtests on a history with a known truth', () => {
  const rows = history(3_000, 24, 42);
  const cutoff = '2025-01-01';

  test('out of time: better than the scorecard, not better than the truth, calibrated, reproducible', () => {
    const result = backtestOutOfTime(KEYS, PRIOR, rows, cutoff, SETTINGS);
    const m = result.metrics;
    expect(result.kind).toBe('logistic');
    expect(m.warning).toBeUndefined();
    expect(m.events).toBeGreaterThan(100);
    const test = rows.filter((r) => r.t > cutoff);
    const truthAuc = auc(test.map((r) => ({ probability: r.truth, outcome: r.outcome })));
    expect(m.auc!).toBeGreaterThan(m.prior_auc! + 0.02);
    // A learned model above the truth on the same rows would be reading the future.
    expect(m.auc!).toBeLessThanOrEqual(truthAuc + 0.02);
    expect(m.auc_ci95![0]).toBeLessThan(m.auc!);
    expect(m.auc_ci95![1]).toBeGreaterThan(m.auc!);
    expect(m.ece!).toBeLessThan(0.03);
    expect(m.top_decile_lift!).toBeGreaterThan(2);
    expect(m.calibration_table).toHaveLength(10);
    expect(m.decile_table[0]!.decile).toBe(1);
    expect(result.model.fit!.converged).toBe(true);
    expect(backtestOutOfTime(KEYS, PRIOR, rows, cutoff, SETTINGS)).toEqual(result);
  });

  test('cross-validation on one snapshot per customer reaches the same quality', () => {
    const oneEach = new Map<string, Snapshot>();
    for (const r of rows) if (!oneEach.has(r.customerId) || r.outcome === 1) oneEach.set(r.customerId, r);
    const result = backtestCrossValidation(KEYS, PRIOR, [...oneEach.values()], SETTINGS);
    expect(result.metrics.customers).toBe(oneEach.size);
    expect(result.metrics.auc!).toBeGreaterThan(result.metrics.prior_auc!);
  });

  test("every prediction's drivers add up to its probability", () => {
    const model = trainModel('logistic', KEYS, PRIOR, rows, SETTINGS);
    for (const r of rows.slice(0, 300)) {
      const { probability, base, drivers } = explain(model.additive, r.values);
      expect(Math.abs(sigmoid(base + drivers.reduce((s, d) => s + d.impact, 0)) - probability)).toBeLessThan(1e-9);
    }
  });

  test('too few test events: counts only, and a warning', () => {
    const few = rows
      .filter((r) => r.outcome === 0)
      .slice(0, 200)
      .concat(rows.filter((r) => r.outcome === 1).slice(0, 3));
    const metrics = evaluate(few.map((r) => ({ ...r, probability: 0.1, priorProbability: 0.1 })));
    expect(metrics).toMatchObject({ rows: 203, events: 3, warning: 'insufficient_events', auc: null, ece: null });
  });
});

describe('promotion', () => {
  const rows = history(1_500, 24, 7);
  const good = backtestOutOfTime(KEYS, PRIOR, rows, '2025-01-01', SETTINGS);

  test('a candidate as good as the incumbent is promoted', () => {
    expect(promotion(good, { metrics: good.metrics })).toEqual({ status: 'active', reason: null });
  });

  test('a worse candidate is rejected with the reason', () => {
    // A candidate that ignores its features: the prior alone.
    const weak = { model: good.model, metrics: { ...good.metrics, auc: good.metrics.prior_auc } };
    const decision = promotion(weak, { metrics: good.metrics });
    expect(decision.status).toBe('rejected');
    expect(decision.reason).toMatch(/^AUC 0\.\d{3} is worse than the active model's 0\.\d{3}/);
  });

  test('an unconverged or miscalibrated candidate is rejected', () => {
    const unconverged = { model: { ...good.model, fit: { ...good.model.fit!, converged: false } }, metrics: good.metrics };
    expect(promotion(unconverged, null).reason).toMatch(/did not converge/);
    const miscalibrated = { model: good.model, metrics: { ...good.metrics, events: 60, ece: 0.08 } };
    expect(promotion(miscalibrated, null).reason).toMatch(/calibration error 0\.080 above 0\.05/);
  });
});
