// Deterministic, realistic demo data: the same seed and day give the same organisation, row for
// row. 36 months of history lived by customers with a hidden health (health.ts): customers across
// segments and currencies with CSMs arrive every month (those that started before the history and
// were still there at its start come with it, so the population is about as large and as risky at
// every month); annual terms renew as a new contract each, with seats that shrink or grow with
// health, or end — after a notice weeks before (cancelled, cancelled_at the day it was given) or
// silently; monthly contracts stop on a billing day; add-ons come and go; invoices are paid on
// time, late or never; tickets come more often and angrier as health falls. Every churn decision
// and signal is dated when it happened, and nothing is dated before what caused it. With the data,
// the truth (truth.ts): each active customer's true chance to churn within 90 days, every 30 days.
import type { contracts, customers, invoices } from '../../db/schema/index.ts';
import { decisionLogit, decisionProbability, gaussian, HEALTH_MONTH_DAYS, nextX, signals, type Random } from './health.ts';
import { moodFor, ticketRows, type TicketDraft, type TicketInsert } from './tickets.ts';
import { churnChance, TRUTH_EVERY_DAYS, TRUTH_HORIZON_DAYS, type PendingDecision, type TruthInsert } from './truth.ts';

type CustomerInsert = typeof customers.$inferInsert;
type ContractInsert = typeof contracts.$inferInsert;
type InvoiceInsert = typeof invoices.$inferInsert;

/** mulberry32: a small, fast, well-distributed PRNG; good for demo data, not for secrets. */
export function seededRandom(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  };
}

const SEGMENTS = [
  // mu: the segment's long-run health; tickets: a month, at health 0; autoRenew: the share of terms
  // that renew automatically; intervals: how its contracts bill (month: month-to-month, no end date;
  // quarter and year: terms of 12 months, or 24 for some enterprises).
  {
    name: 'enterprise',
    weight: 0.15,
    seats: [200, 2000],
    perSeatYear: [30_000, 60_000],
    mu: 1.6,
    tickets: 0.7,
    autoRenew: 0.45,
    intervals: { month: 0, quarter: 0, year: 1 },
  },
  {
    name: 'mid-market',
    weight: 0.35,
    seats: [40, 200],
    perSeatYear: [20_000, 40_000],
    mu: 1.3,
    tickets: 0.4,
    autoRenew: 0.65,
    intervals: { month: 0.25, quarter: 0.2, year: 0.55 },
  },
  {
    name: 'smb',
    weight: 0.5,
    seats: [3, 40],
    perSeatYear: [12_000, 24_000],
    mu: 1.0,
    tickets: 0.22,
    autoRenew: 0.75,
    intervals: { month: 0.6, quarter: 0.15, year: 0.25 },
  },
] as const;
const CURRENCIES = [
  { code: 'USD', country: ['US', 'CA'] },
  { code: 'EUR', country: ['DE', 'FR', 'NL', 'ES'] },
  { code: 'GBP', country: ['GB'] },
] as const;
const CSMS = [
  { name: 'Dana Whitfield', email: 'dana@revintel.demo', phone: '+15550100', slack_user_id: 'U01DANA' },
  { name: 'Marco Rossi', email: 'marco@revintel.demo', phone: '+393330100', slack_user_id: 'U01MARCO' },
  { name: 'Aiko Tanaka', email: 'aiko@revintel.demo', phone: '+815550100', slack_user_id: 'U01AIKO' },
  { name: 'Sam Okafor', email: 'sam@revintel.demo', phone: '+445550100', slack_user_id: 'U01SAM' },
] as const;
const NAME_PARTS = {
  first: [
    'Acme',
    'Northwind',
    'Globex',
    'Initech',
    'Umbrella',
    'Stark',
    'Wayne',
    'Hooli',
    'Vandelay',
    'Soylent',
    'Tyrell',
    'Cyberdyne',
    'Aperture',
    'Massive',
    'Pied',
    'Blue',
    'Red',
    'Silver',
    'Bright',
    'Quantum',
  ],
  second: [
    'Analytics',
    'Logistics',
    'Health',
    'Labs',
    'Systems',
    'Retail',
    'Energy',
    'Foods',
    'Capital',
    'Robotics',
    'Media',
    'Cloud',
    'Bio',
    'Motors',
    'Software',
  ],
};
const PLANS = ['Starter', 'Growth', 'Business', 'Enterprise'] as const;

const INTERVAL_MONTHS = { month: 1, quarter: 3, year: 12 } as const;
type Interval = keyof typeof INTERVAL_MONTHS;

/** The history the data shows: 36 months of invoices and tickets (contracts back to each customer's
 * start). Customers arrive evenly over it and over the four years before; of those, the ones still
 * customers when it starts are kept. */
export const HISTORY_DAYS = 1_095;
const BEFORE_DAYS = 4 * 365;

const DAY_MS = 86_400_000;
const dayOf = (text: string) => Math.round(Date.parse(`${text}T00:00:00Z`) / DAY_MS);
/** YYYY-MM-DD of a day number; a few thousand distinct days make millions of dates, so each is
 * formatted once. */
const texts = new Map<number, string>();
const textOf = (day: number) => {
  let text = texts.get(day);
  if (text === undefined) texts.set(day, (text = new Date(day * DAY_MS).toISOString().slice(0, 10)));
  return text;
};
const plusMonths = (day: number, months: number) => {
  const d = new Date(day * DAY_MS);
  d.setUTCMonth(d.getUTCMonth() + months);
  return Math.round(d.getTime() / DAY_MS);
};

export interface DemoData {
  customers: CustomerInsert[];
  contracts: ContractInsert[];
  invoices: InvoiceInsert[];
  tickets: TicketInsert[];
  truth: TruthInsert[];
}

/** Ids are derived from the organisation, the seed and the position: a refresh gives the same ids,
 * and two demo organisations never collide (ids are unique across organisations). */
const demoIds = (orgId: string, seed: number) => {
  const org = (Bun.hash(orgId) as bigint).toString(36).slice(0, 8);
  return (prefix: string, ...parts: number[]) => `${prefix}_demo${org}${seed.toString(36)}x${parts.map((p) => p.toString(36)).join('x')}`;
};

export interface DemoOptions {
  orgId: string;
  /** The demo help desk the tickets came through. */
  connectorId: string;
  customers: number;
  seed: number;
  today: string;
}

/** How many customers (with all their rows) one chunk holds. Measured with the 3-month demo (1.9
 * contracts and 7.6 invoices a customer) against chunks of 2,000: on PostgreSQL 4% slower for 85 MB
 * of RSS instead of 127 MB; on PGlite as fast, 290 MB instead of 435 MB, and the server's event
 * loop held for under 0.8 s at a time instead of 2.8 s (PGlite runs each statement synchronously
 * in the server's thread). */
export const DEMO_CHUNK_CUSTOMERS = 500;

/** The random streams, each consumed in customer order: the concatenated chunks are the same rows
 * for any chunk size. Tickets draw from a stream of their own. */
interface Streams {
  random: Random;
  tickets: Random;
}

/**
 * The demo data in chunks of `chunkCustomers` customers with all their rows, so that a large
 * organisation is never held in memory whole. A function is asked for each chunk's size as the
 * chunk is made (chunks sized by the time the last one took to store).
 */
export function* generateDemoChunks(
  options: DemoOptions,
  chunkCustomers: number | (() => number) = DEMO_CHUNK_CUSTOMERS,
): Generator<DemoData> {
  const streams: Streams = { random: seededRandom(options.seed), tickets: seededRandom(options.seed ^ 0x5eed71c) };
  const demoId = demoIds(options.orgId, options.seed);
  const nextSize = typeof chunkCustomers === 'number' ? () => chunkCustomers : chunkCustomers;
  for (let from = 0, size = nextSize(); from < options.customers; from += size, size = nextSize()) {
    const chunk: DemoData = { customers: [], contracts: [], invoices: [], tickets: [], truth: [] };
    const to = Math.min(options.customers, from + size);
    for (let i = from; i < to; i++) generateCustomer(chunk, i, streams, demoId, options);
    yield chunk;
  }
}

/** The whole organisation at once (tests, small demos). */
export function generateDemoData(options: DemoOptions): DemoData {
  const data: DemoData = { customers: [], contracts: [], invoices: [], tickets: [], truth: [] };
  for (const chunk of generateDemoChunks(options)) {
    for (const row of chunk.customers) data.customers.push(row);
    for (const row of chunk.contracts) data.contracts.push(row);
    for (const row of chunk.invoices) data.invoices.push(row);
    for (const row of chunk.tickets) data.tickets.push(row);
    for (const row of chunk.truth) data.truth.push(row);
  }
  return data;
}

/** A term of a term contract (one contract row) and what became of it by today. */
interface Term {
  start: number;
  end: number;
  /** The day its notice would come (a notice ends it at `end`). */
  notice: number;
  autoRenew: boolean;
  seats: number;
  perSeatYear: number;
  outcome: 'renewed' | 'notice' | 'lapsed' | 'open';
}

/** A customer's life: who it is, its hidden health, and its contracts' story up to today. */
interface Life {
  segment: (typeof SEGMENTS)[number];
  currency: (typeof CURRENCIES)[number];
  name: string;
  country: string;
  csm: (typeof CSMS)[number] | null;
  plan: (typeof PLANS)[number];
  /** The first contract's start (or the trial's). */
  origin: number;
  trial: boolean;
  interval: Interval;
  mu: number;
  /** The drift of health, month by month of its life (HEALTH_MONTH_DAYS). */
  xs: number[];
  terms: Term[];
  /** A monthly contract's stop (the billing day it cancelled on). */
  stop: number | null;
  /** The day it churns (it counted through the day before), whether by today or, after a notice, later. */
  churnDay: number | null;
  /** Its contracts stop counting after this day; add-ons stop by it. */
  lastDay: number | null;
  /** The day a notice to leave was given. */
  noticeDay: number | null;
}

const monthOf = (life: Life, day: number) => Math.floor((day - life.origin) / HEALTH_MONTH_DAYS);

/** Health on `day`, drawing the drift as far as needed. */
function healthOn(life: Life, random: Random, day: number): number {
  const m = monthOf(life, day);
  while (life.xs.length <= m) life.xs.push(nextX(random, life.xs[life.xs.length - 1]!));
  return life.mu + life.xs[m]!;
}

function pickInterval(random: Random, segment: (typeof SEGMENTS)[number]): Interval {
  const roll = random.next();
  return roll < segment.intervals.month ? 'month' : roll < segment.intervals.month + segment.intervals.quarter ? 'quarter' : 'year';
}

/** Draws a customer and lives its contracts up to today; one that started before the history and
 * had left by its start is drawn again. */
function live(random: Random, i: number, today: number): Life {
  for (;;) {
    const segmentRoll = random.next();
    const segment =
      segmentRoll < SEGMENTS[0].weight ? SEGMENTS[0] : segmentRoll < SEGMENTS[0].weight + SEGMENTS[1].weight ? SEGMENTS[1] : SEGMENTS[2];
    const currency = random.pick(CURRENCIES);
    const life: Life = {
      segment,
      currency,
      name: `${random.pick(NAME_PARTS.first)} ${random.pick(NAME_PARTS.second)} ${i + 1}`,
      country: random.pick(currency.country),
      csm: segment.name === 'smb' && random.chance(0.5) ? null : random.pick(CSMS),
      plan: random.pick(PLANS),
      origin: today - random.int(0, HISTORY_DAYS + BEFORE_DAYS - 1),
      trial: false,
      interval: pickInterval(random, segment),
      mu: segment.mu + 0.9 * gaussian(random),
      xs: [0.9 * gaussian(random)],
      terms: [],
      stop: null,
      churnDay: null,
      lastDay: null,
      noticeDay: null,
    };
    if (life.origin > today - 60 && random.chance(0.6)) return { ...life, trial: true };
    const seats = random.int(segment.seats[0], segment.seats[1]);
    const perSeatYear = random.int(segment.perSeatYear[0], segment.perSeatYear[1]);
    if (life.interval === 'month') liveMonthly(life, random, today);
    else liveTerms(life, random, today, seats, perSeatYear);
    if (life.churnDay !== null && life.churnDay < today - HISTORY_DAYS) continue;
    // The drift as far as the data reaches: what follows only reads it.
    healthOn(life, random, Math.min(today, life.lastDay ?? today));
    return life;
  }
}

/** Month-to-month: on each billing day it may cancel (and counts that day, no more). */
function liveMonthly(life: Life, random: Random, today: number): void {
  for (let k = 1; ; k++) {
    const day = plusMonths(life.origin, k);
    if (day > today) return;
    if (random.chance(decisionProbability(decisionLogit.monthly(day - life.origin), healthOn(life, random, day)))) {
      life.stop = day;
      life.lastDay = day;
      life.noticeDay = day;
      life.churnDay = day + 1;
      return;
    }
  }
}

/** Terms of 12 months (24 for some enterprises), each renewed as a new contract or ended: by a
 * notice 20–75 days before its end, or silently at its end. Decisions after today are not made. */
function liveTerms(life: Life, random: Random, today: number, firstSeats: number, firstPerSeatYear: number): void {
  const termMonths = life.segment.name === 'enterprise' && random.chance(0.3) ? 24 : 12;
  let seats = firstSeats;
  let perSeatYear = firstPerSeatYear;
  for (let start = life.origin; ; ) {
    const end = plusMonths(start, termMonths) - 1;
    const term: Term = {
      start,
      end,
      notice: end - random.int(20, 75),
      autoRenew: random.chance(life.segment.autoRenew),
      seats,
      perSeatYear,
      outcome: 'open',
    };
    life.terms.push(term);
    if (term.notice > today) return;
    if (
      random.chance(
        decisionProbability(decisionLogit.notice(term.notice - life.origin, term.autoRenew), healthOn(life, random, term.notice)),
      )
    ) {
      term.outcome = 'notice';
      life.noticeDay = term.notice;
      life.lastDay = end;
      life.churnDay = end + 1;
      return;
    }
    if (end + 1 > today) return;
    if (random.chance(decisionProbability(decisionLogit.lapse(end + 1 - life.origin, term.autoRenew), healthOn(life, random, end + 1)))) {
      term.outcome = 'lapsed';
      life.lastDay = end;
      life.churnDay = end + 1;
      return;
    }
    term.outcome = 'renewed';
    seats = Math.max(1, Math.round(seats * Math.exp(signals.seatsLogChange(healthOn(life, random, end + 1), gaussian(random)))));
    perSeatYear = Math.round(perSeatYear * 1.03);
    start = end + 1;
  }
}

const periodAmount = (seats: number, perSeatYear: number, interval: Interval) =>
  Math.round((seats * perSeatYear) / (12 / INTERVAL_MONTHS[interval]) / 100) * 100;

/** Customer number `i` (0-based) and all its rows, appended to `data`. */
function generateCustomer(data: DemoData, i: number, streams: Streams, demoId: ReturnType<typeof demoIds>, options: DemoOptions): void {
  const { random } = streams;
  const today = dayOf(options.today);
  const historyStart = today - HISTORY_DAYS;
  const life = live(random, i, today);
  const slug = life.name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const customerId = demoId('cus', i);
  const churned = life.churnDay !== null && life.churnDay <= today;
  data.customers.push({
    id: customerId,
    orgId: options.orgId,
    externalId: `demo-${i + 1}`,
    name: life.name,
    domain: `${slug}.example`,
    email: `billing@${slug}.example`,
    status: churned ? 'churned' : life.trial ? 'trial' : 'active',
    churnedAt: churned ? textOf(life.churnDay!) : null,
    segment: life.segment.name,
    country: life.country,
    currency: life.currency.code,
    csm: life.csm ? { ...life.csm } : null,
    metadata: { source: 'demo', seed: options.seed },
  });
  const base = { orgId: options.orgId, customerId, currency: life.currency.code };

  /** An invoice issued on `issued` (shown from the history's start), paid as health makes it. */
  const invoice = (contractId: string, term: number, period: number, issued: number, amount: number) => {
    if (issued < historyStart) return;
    const h = healthOn(life, random, issued);
    const due = issued + 30;
    let paid: number | null = null;
    let status: 'paid' | 'open' | 'void' = 'open';
    if (random.chance(0.01)) status = 'void';
    else if (!random.chance(signals.unpaid(h))) {
      paid = random.chance(signals.late(h))
        ? due + 1 + Math.floor(-Math.log(1 - random.next()) * (20 + 25 * Math.max(0, -h)))
        : issued + random.int(1, 29);
      if (paid <= today) status = 'paid';
    }
    data.invoices.push({
      id: demoId('inv', i, term, period),
      orgId: options.orgId,
      customerId,
      contractId,
      externalId: `demo-inv-${i + 1}-${term + 1}-${period + 1}`,
      number: `DEMO-${String(i + 1).padStart(5, '0')}-${term + 1}${String(period + 1).padStart(2, '0')}`,
      status,
      currency: life.currency.code,
      amountDue: amount,
      amountPaid: status === 'paid' ? amount : 0,
      issuedAt: new Date(`${textOf(issued)}T09:00:00Z`),
      dueDate: textOf(due),
      paidAt: status === 'paid' ? new Date(`${textOf(paid!)}T12:00:00Z`) : null,
      metadata: { source: 'demo' },
    });
  };

  if (!life.trial && life.interval === 'month') {
    const contractId = demoId('ctr', i, 0);
    const seats = random.int(life.segment.seats[0], life.segment.seats[1]);
    const amount = periodAmount(seats, random.int(life.segment.perSeatYear[0], life.segment.perSeatYear[1]), 'month');
    data.contracts.push({
      ...base,
      id: contractId,
      externalId: `demo-sub-${i + 1}-1`,
      name: life.plan,
      status: life.stop !== null ? 'cancelled' : 'active',
      startDate: textOf(life.origin),
      endDate: null,
      autoRenew: true,
      billingInterval: 'month',
      amount,
      seats,
      cancelledAt: life.stop !== null ? textOf(life.stop) : null,
      metadata: { source: 'demo' },
    });
    // A bill each month it stayed (none on the day it cancelled).
    for (
      let k = 0, issued = life.origin;
      issued <= today && (life.stop === null || issued < life.stop);
      k++, issued = plusMonths(life.origin, k)
    )
      invoice(contractId, 0, k, issued, amount);
  }
  life.terms.forEach((term, n) => {
    const contractId = demoId('ctr', i, n);
    const amount = periodAmount(term.seats, term.perSeatYear, life.interval);
    data.contracts.push({
      ...base,
      id: contractId,
      externalId: `demo-sub-${i + 1}-${n + 1}`,
      name: life.plan,
      status: term.outcome === 'notice' ? 'cancelled' : term.outcome === 'open' ? 'active' : 'ended',
      startDate: textOf(term.start),
      endDate: textOf(term.end),
      autoRenew: term.autoRenew,
      billingInterval: life.interval,
      amount,
      seats: term.seats,
      cancelledAt: term.outcome === 'notice' ? textOf(term.notice) : null,
      metadata: { source: 'demo' },
    });
    const every = INTERVAL_MONTHS[life.interval];
    for (let p = 0, issued = term.start; issued <= today && issued <= term.end; p++, issued = plusMonths(term.start, p * every))
      invoice(contractId, n, p, issued, amount);
  });
  if (!life.trial) addOns(data, i, life, random, demoId, base, today);
  tickets(data, i, life, streams.tickets, demoId, options, customerId, slug, today);
  if (!life.trial) truth(data, life, options, customerId, `demo-${i + 1}`, today);
}

/** Add-ons: a healthy customer buys one (month-to-month), an unhealthy one drops it; all stop when
 * the customer gives notice or leaves. At most two a customer. */
function addOns(
  data: DemoData,
  i: number,
  life: Life,
  random: Random,
  demoId: ReturnType<typeof demoIds>,
  base: { orgId: string; customerId: string; currency: string },
  today: number,
) {
  const until = life.noticeDay ?? life.churnDay ?? null;
  const last = Math.min(today, until ?? today);
  let open: { start: number; amount: number } | null = null;
  let made = 0;
  const push = (start: number, amount: number, stop: number | null) => {
    data.contracts.push({
      ...base,
      id: demoId('ctr', i, 90 + made),
      externalId: `demo-addon-${i + 1}-${made + 1}`,
      name: 'Analytics add-on',
      status: stop === null ? 'active' : 'cancelled',
      startDate: textOf(start),
      endDate: null,
      autoRenew: true,
      billingInterval: 'month',
      amount,
      seats: null,
      cancelledAt: stop === null ? null : textOf(stop),
      metadata: { source: 'demo', expansion: true },
    });
    made += 1;
  };
  for (let day = life.origin + HEALTH_MONTH_DAYS; day < last && made < 2; day += HEALTH_MONTH_DAYS) {
    const h = healthOn(life, random, day);
    const at = Math.min(last - 1, day + random.int(0, HEALTH_MONTH_DAYS - 1));
    if (open === null) {
      if (random.chance(signals.addOn(h))) open = { start: at, amount: random.int(5, 50) * 1_000 };
    } else if (at > open.start && random.chance(signals.dropAddOn(h))) {
      push(open.start, open.amount, at);
      open = null;
    }
  }
  if (open !== null) push(open.start, open.amount, until !== null && until <= today ? until : null);
}

/** Tickets, month by month of its life in the history: as many and in the moods its health makes
 * them; a notice comes with a ticket asking to cancel, more often than not. The last are from
 * yesterday: a ticket of today at 11:00 would be in the future for a demo loaded at 09:00. */
function tickets(
  data: DemoData,
  i: number,
  life: Life,
  random: Random,
  demoId: ReturnType<typeof demoIds>,
  options: DemoOptions,
  customerId: string,
  slug: string,
  today: number,
) {
  const drafts: TicketDraft[] = [];
  const at = (day: number) => day * DAY_MS + random.int(3_600, 43_200) * 1000; // 01:00–12:00 UTC
  if (life.trial) {
    if (random.chance(0.5) && life.origin < today) drafts.push({ at: at(random.int(life.origin, today - 1)), mood: 'howto' });
  } else {
    const first = Math.max(life.origin, today - HISTORY_DAYS);
    const last = Math.min(today - 1, life.lastDay ?? today);
    for (let m = monthOf(life, first); life.origin + m * HEALTH_MONTH_DAYS <= last; m++) {
      const from = Math.max(first, life.origin + m * HEALTH_MONTH_DAYS);
      const to = Math.min(last, life.origin + (m + 1) * HEALTH_MONTH_DAYS - 1);
      const h = life.mu + life.xs[m]!;
      const count = poisson(random, (signals.ticketRate(life.segment.tickets, h) * (to - from + 1)) / HEALTH_MONTH_DAYS);
      for (let n = 0; n < count; n++) drafts.push({ at: at(random.int(from, to)), mood: moodFor(random, h) });
    }
    if (life.noticeDay !== null && life.noticeDay >= first && life.noticeDay <= last && random.chance(0.6)) {
      drafts.push({ at: at(Math.min(last, life.noticeDay + random.int(0, 3))), mood: 'cancellation' });
    }
  }
  const rows = ticketRows(random, drafts, {
    orgId: options.orgId,
    connectorId: options.connectorId,
    today: options.today,
    customerId,
    index: i,
    domain: `${slug}.example`,
    ticketId: (n) => demoId('tkt', i, n),
  });
  for (const row of rows) data.tickets.push(row);
}

function poisson(random: Random, mean: number): number {
  const limit = Math.exp(-mean);
  let n = 0;
  for (let p = random.next(); p > limit; p *= random.next()) n++;
  return n;
}

/** The truth on today and every 30 days back through the history, for each day it is active. */
function truth(data: DemoData, life: Life, options: DemoOptions, customerId: string, externalId: string, today: number) {
  // A monthly contract's billing days, up to the last horizon's end.
  const billingDays: number[] = [];
  if (life.interval === 'month')
    for (let k = 1, day = plusMonths(life.origin, 1); day <= today + TRUTH_HORIZON_DAYS; k++, day = plusMonths(life.origin, k))
      billingDays.push(day);
  for (let asOf = today; asOf >= today - HISTORY_DAYS && asOf >= life.origin; asOf -= TRUTH_EVERY_DAYS) {
    const p = truthOn(life, asOf, billingDays);
    if (p === null) continue;
    data.truth.push({
      orgId: options.orgId,
      customerId,
      externalId,
      asOf: textOf(asOf),
      horizonDays: TRUTH_HORIZON_DAYS,
      pTrue: Math.round(p * 1e6) / 1e6,
    });
  }
}

/** The chance to churn within the horizon after `asOf`, from the state that day; null when not a
 * customer that day. Decisions dated by `asOf` are known; later ones are forecast. */
function truthOn(life: Life, asOf: number, billingDays: readonly number[]): number | null {
  if (life.lastDay !== null && asOf > life.lastDay) return null;
  const horizonEnd = asOf + TRUTH_HORIZON_DAYS;
  const month = monthOf(life, asOf);
  const pending: PendingDecision[] = [];
  const at = (day: number, c: number) => pending.push({ months: monthOf(life, day) - month, c });
  if (life.interval === 'month') {
    if (life.stop === asOf) return 1;
    // It churns the day after the billing day it cancels on.
    for (const day of billingDays) {
      if (day + 1 > horizonEnd) break;
      if (day > asOf) at(day, decisionLogit.monthly(day - life.origin));
    }
  } else {
    const term = life.terms.find((t) => t.start <= asOf && asOf <= t.end)!;
    const churnDay = term.end + 1;
    if (churnDay > horizonEnd) return 0;
    if (term.notice <= asOf) {
      if (term.outcome === 'notice') return 1;
    } else {
      at(term.notice, decisionLogit.notice(term.notice - life.origin, term.autoRenew));
    }
    at(churnDay, decisionLogit.lapse(churnDay - life.origin, term.autoRenew));
  }
  return churnChance(life.mu, life.xs[month]!, pending);
}
