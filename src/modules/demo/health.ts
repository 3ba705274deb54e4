// The demo's hidden health process: what makes its customers churn, and what they show before they
// do. Each customer has a health h = μ + x in logit space: μ its own long-run level, x a monthly
// AR(1) drift (x' = φ·x + σ·ε) with occasional shocks (a champion leaves, a budget is cut). Health
// moves a customer's tickets, its payments and its seats at renewals, and every churn decision is
// σ(c − B·h − T·min(tenure, 3) …): a monthly contract's at each billing day, a term contract's at its
// notice day (a notice, weeks before the end) and, without auto-renew, at its end (it lapses). The
// same functions make the data (generate.ts) and the truth (truth.ts).

/** Health changes once a month of the customer's life: month m holds days [origin + 30m, origin + 30m + 29]. */
export const HEALTH_MONTH_DAYS = 30;
export const PHI = 0.85;
export const SIGMA = 0.5;
export const SHOCK_CHANCE = 0.04;
export const SHOCK = -1.8;
/** How strongly health moves every churn decision (logit per unit of health). */
export const decisionB = 1.2;
/** Tenure lowers the risk, up to three years. */
const TENURE = 0.45;

export type Random = { next(): number; int(min: number, max: number): number; pick<T>(items: readonly T[]): T; chance(p: number): boolean };

export const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** A standard normal draw (Box–Muller, one of the pair). */
export const gaussian = (random: Random) => Math.sqrt(-2 * Math.log(1 - random.next())) * Math.cos(2 * Math.PI * random.next());

/** One month of drift. */
export const nextX = (random: Random, x: number) => PHI * x + SIGMA * gaussian(random) + (random.next() < SHOCK_CHANCE ? SHOCK : 0);

const tenureTerm = (tenureDays: number) => TENURE * Math.min(tenureDays / 365, 3);

/** The decisions, as the logit c of σ(c − B·h): the part that does not depend on health. */
export const decisionLogit = {
  /** A monthly contract, at each billing day. */
  monthly: (tenureDays: number) => -2.3 - tenureTerm(tenureDays),
  /** A term contract, at its notice day: notice to leave at the end. */
  notice: (tenureDays: number, autoRenew: boolean) => -0.6 - tenureTerm(tenureDays) + (autoRenew ? 0 : 0.2),
  /** A term contract, at its end, without notice: it lapses (rarely when it renews automatically). */
  lapse: (tenureDays: number, autoRenew: boolean) => (autoRenew ? -4.5 : -1.3) - tenureTerm(tenureDays),
};

export const decisionProbability = (c: number, h: number) => sigmoid(c - decisionB * h);

/** Signals health moves, per month or per invoice. */
export const signals = {
  /** Expected tickets a month. */
  ticketRate: (segmentRate: number, h: number) => segmentRate * Math.exp(-0.9 * h),
  /** A ticket is a complaint (a bug, an outage, a billing dispute, a competitor, a downgrade). */
  negative: (h: number) => sigmoid(-0.6 - 1.5 * h),
  /** A complaint speaks of leaving (competitor, downgrade, refund). */
  leaving: (h: number) => sigmoid(-1.2 - 0.9 * h),
  /** An invoice is never paid. */
  unpaid: (h: number) => sigmoid(-4.8 - 1.3 * h),
  /** An invoice is paid after its due date. */
  late: (h: number) => sigmoid(-2.2 - 1.7 * h),
  /** The log change of seats at a renewal. */
  seatsLogChange: (h: number, noise: number) => 0.04 + 0.1 * Math.min(2, Math.max(-3, h - 1)) + 0.06 * noise,
  /** A healthy customer buys an add-on this month; an unhealthy one drops it. */
  addOn: (h: number) => sigmoid(-6 + 0.9 * h),
  dropAddOn: (h: number) => sigmoid(-4.5 - 1.0 * h),
};
