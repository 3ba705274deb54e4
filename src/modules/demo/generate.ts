// Deterministic, realistic demo data: the same seed and day give the same organisation, row for
// row. Customers across segments and currencies with CSMs; monthly, quarterly and annual contracts
// with renewals, cancellations and expansions; invoices paid, open, overdue and void; support
// tickets that follow each customer's situation (tickets.ts). Later issues add churn outcomes.
import type { contracts, customers, invoices } from '../../db/schema/index.ts';
import { generateTickets, type TicketInsert } from './tickets.ts';

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
  { name: 'enterprise', weight: 0.15, seats: [200, 2000], perSeatYear: [30_000, 60_000] },
  { name: 'mid-market', weight: 0.35, seats: [40, 200], perSeatYear: [20_000, 40_000] },
  { name: 'smb', weight: 0.5, seats: [3, 40], perSeatYear: [12_000, 24_000] },
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
  first: ['Acme', 'Northwind', 'Globex', 'Initech', 'Umbrella', 'Stark', 'Wayne', 'Hooli', 'Vandelay', 'Soylent', 'Tyrell', 'Cyberdyne', 'Aperture', 'Massive', 'Pied', 'Blue', 'Red', 'Silver', 'Bright', 'Quantum'],
  second: ['Analytics', 'Logistics', 'Health', 'Labs', 'Systems', 'Retail', 'Energy', 'Foods', 'Capital', 'Robotics', 'Media', 'Cloud', 'Bio', 'Motors', 'Software'],
};
const PLANS = ['Starter', 'Growth', 'Business', 'Enterprise'] as const;

const addDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const addMonths = (day: string, months: number) => {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.toISOString().slice(0, 10);
};
const INTERVAL_MONTHS = { month: 1, quarter: 3, year: 12 } as const;

export interface DemoData {
  customers: CustomerInsert[];
  contracts: ContractInsert[];
  invoices: InvoiceInsert[];
  tickets: TicketInsert[];
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

/** How many customers (with their contracts and invoices) one chunk holds: at the demo's mix about
 * 1.9 contracts and 7.6 invoices each, so 500 customers are about 5,000 rows. Against chunks of
 * 2,000, measured here: on PostgreSQL 4% slower (100,000 customers in 54.6 s instead of 52.3 s)
 * for 85 MB of RSS instead of 127 MB; on PGlite as fast (50,000 in 34 s), 290 MB instead of 435 MB,
 * and the server's event loop held for under 0.8 s at a time instead of 2.8 s (PGlite runs each
 * statement synchronously in the server's thread). */
export const DEMO_CHUNK_CUSTOMERS = 500;

/**
 * The demo data in chunks of `chunkCustomers` customers with all their contracts and invoices, so
 * that a large organisation is never held in memory whole. One PRNG stream consumed in the same
 * order whatever the chunk size: the concatenated chunks are the same rows for any chunk size.
 */
export function* generateDemoChunks(options: DemoOptions, chunkCustomers = DEMO_CHUNK_CUSTOMERS): Generator<DemoData> {
  const random = seededRandom(options.seed);
  // Tickets draw from a stream of their own: the ARR data of a seed stays what it was before
  // tickets were added.
  const ticketRandom = seededRandom(options.seed ^ 0x5eed71c);
  const demoId = demoIds(options.orgId, options.seed);
  for (let from = 0; from < options.customers; from += chunkCustomers) {
    const chunk: DemoData = { customers: [], contracts: [], invoices: [], tickets: [] };
    const to = Math.min(options.customers, from + chunkCustomers);
    for (let i = from; i < to; i++) generateCustomer(chunk, i, random, ticketRandom, demoId, options);
    yield chunk;
  }
}

/** The whole organisation at once (tests, small demos). */
export function generateDemoData(options: DemoOptions): DemoData {
  const data: DemoData = { customers: [], contracts: [], invoices: [], tickets: [] };
  for (const chunk of generateDemoChunks(options)) {
    for (const row of chunk.customers) data.customers.push(row);
    for (const row of chunk.contracts) data.contracts.push(row);
    for (const row of chunk.invoices) data.invoices.push(row);
    for (const row of chunk.tickets) data.tickets.push(row);
  }
  return data;
}

/** Customer number `i` (0-based) and its contracts and invoices, appended to `data`. */
function generateCustomer(
  data: DemoData,
  i: number,
  random: ReturnType<typeof seededRandom>,
  ticketRandom: ReturnType<typeof seededRandom>,
  demoId: ReturnType<typeof demoIds>,
  options: DemoOptions,
): void {
  const segmentRoll = random.next();
  const segment = segmentRoll < SEGMENTS[0].weight ? SEGMENTS[0] : segmentRoll < SEGMENTS[0].weight + SEGMENTS[1].weight ? SEGMENTS[1] : SEGMENTS[2];
  const currency = random.pick(CURRENCIES);
  const name = `${random.pick(NAME_PARTS.first)} ${random.pick(NAME_PARTS.second)} ${i + 1}`;
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const churned = random.chance(0.08);
  const trial = !churned && random.chance(0.05);
  const customerId = demoId('cus', i);
  const customer: CustomerInsert = {
    id: customerId,
    orgId: options.orgId,
    externalId: `demo-${i + 1}`,
    name,
    domain: `${slug}.example`,
    email: `billing@${slug}.example`,
    status: churned ? 'churned' : trial ? 'trial' : 'active',
    churnedAt: null,
    segment: segment.name,
    country: random.pick(currency.country),
    currency: currency.code,
    csm: segment.name === 'smb' && random.chance(0.5) ? null : { ...random.pick(CSMS) },
    metadata: { source: 'demo', seed: options.seed },
  };
  data.customers.push(customer);
  const invoicesBefore = data.invoices.length;
  let cancelling = false;
  const tickets = () => {
    const overdue = data.invoices.slice(invoicesBefore).some((inv) => inv.status === 'open' && inv.dueDate! < options.today);
    const made = generateTickets(ticketRandom, { customerId, index: i, domain: `${slug}.example`, churned, cancelling, overdue }, {
      orgId: options.orgId,
      connectorId: options.connectorId,
      today: options.today,
      ticketId: (n) => demoId('tkt', i, n),
    });
    for (const ticket of made) data.tickets.push(ticket);
  };
  if (trial) return tickets();

  // The first contract started up to three years ago; renewals follow it term after term.
  const interval = segment.name === 'enterprise' ? 'year' : random.pick(['month', 'quarter', 'year'] as const);
  const seats = random.int(segment.seats[0], segment.seats[1]);
  const perSeatYear = random.int(segment.perSeatYear[0], segment.perSeatYear[1]);
  const amount = Math.round((seats * perSeatYear) / (12 / INTERVAL_MONTHS[interval]) / 100) * 100;
  const termMonths = interval === 'month' ? 12 : interval === 'quarter' ? 12 : 12 * random.int(1, 2);
  let start = addDays(options.today, -random.int(30, 1_095));
  let term = 0;
  for (;;) {
    const end = addDays(addMonths(start, termMonths), -1);
    const current = end >= options.today;
    const cancelled = churned && current;
    const contractId = demoId('ctr', i, term);
    // The notice of a cancelled term came in the last two months (never before its start); drawn
    // from the position, not the random stream, so the rest of a seed's data stays what it was.
    const notice = cancelled ? [addDays(options.today, -(1 + (i % 60))), start].sort().at(-1)! : null;
    data.contracts.push({
      id: contractId,
      orgId: options.orgId,
      customerId,
      externalId: `demo-sub-${i + 1}-${term + 1}`,
      name: random.pick(PLANS),
      status: cancelled ? 'cancelled' : current ? 'active' : 'ended',
      startDate: start,
      endDate: end,
      autoRenew: !cancelled && random.chance(0.7),
      billingInterval: interval,
      amount: Math.round(amount * (1 + term * 0.05)), // renewals come with a small uplift
      currency: currency.code,
      seats,
      cancelledAt: notice,
      metadata: { source: 'demo' },
    });
    // A churned customer churned when it gave notice, or the day after its last term ended.
    if (churned) customer.churnedAt = notice ?? addDays(end, 1);
    // One invoice per billing period that has begun.
    for (let period = 0, issued = start; issued <= options.today && issued <= end; period++, issued = addMonths(start, period * INTERVAL_MONTHS[interval])) {
      const due = addDays(issued, 30);
      const late = due < options.today && random.chance(churned ? 0.5 : 0.06);
      const status = cancelled && random.chance(0.3) ? 'void' : late ? 'open' : due < options.today ? 'paid' : random.chance(0.6) ? 'open' : 'paid';
      const invoiceAmount = Math.round(amount * (1 + term * 0.05));
      data.invoices.push({
        id: demoId('inv', i, term, period),
        orgId: options.orgId,
        customerId,
        contractId,
        externalId: `demo-inv-${i + 1}-${term + 1}-${period + 1}`,
        number: `DEMO-${String(i + 1).padStart(5, '0')}-${term + 1}${String(period + 1).padStart(2, '0')}`,
        status,
        currency: currency.code,
        amountDue: invoiceAmount,
        amountPaid: status === 'paid' ? invoiceAmount : 0,
        issuedAt: new Date(`${issued}T09:00:00Z`),
        dueDate: due,
        paidAt: status === 'paid' ? new Date(`${addDays(issued, random.int(1, 29))}T12:00:00Z`) : null,
        metadata: { source: 'demo' },
      });
    }
    if (current && !cancelled && data.contracts[data.contracts.length - 1]!.autoRenew === false && end <= addDays(options.today, 60)) cancelling = true;
    if (current || cancelled) break;
    if (churned && random.chance(0.5)) break; // churned at a renewal
    start = addDays(end, 1);
    term += 1;
  }
  // Expansion: some growing customers bought an add-on this year.
  if (!churned && random.chance(0.12)) {
    data.contracts.push({
      id: demoId('ctr', i, 99),
      orgId: options.orgId,
      customerId,
      externalId: `demo-addon-${i + 1}`,
      name: 'Analytics add-on',
      status: 'active',
      startDate: addDays(options.today, -random.int(10, 200)),
      endDate: null,
      autoRenew: true,
      billingInterval: 'month',
      amount: random.int(5, 50) * 1_000,
      currency: currency.code,
      seats: null,
      cancelledAt: null,
      metadata: { source: 'demo', expansion: true },
    });
  }
  tickets();
}
