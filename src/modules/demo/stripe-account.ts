// `revintel demo --billing stripe`: a Stripe account with history, made up from the seed, and a
// Stripe API serving it from this process (on 127.0.0.1, never the network), so the demo's records
// arrive through the real backfill and apply code instead of generated rows. The objects carry the
// fields the sync reads, in the shapes of Stripe's API (2025-03-31 and later: periods on items,
// the invoice's subscription under `parent`); list endpoints page newest first with `starting_after`
// (the tests' fake Stripe serves its accounts with the same function).
import { seededRandom } from './generate.ts';

const DAY = 86_400;

/** Stripe objects are untyped JSON here as on the wire. */
type StripeObject = Record<string, unknown>;

export interface StripeAccount {
  customers: StripeObject[];
  subscriptions: StripeObject[];
  invoices: StripeObject[];
}

const PLANS = [
  { id: 'price_demo_starter', nickname: 'Starter', interval: 'month', unit: { usd: 2_900, eur: 2_700, gbp: 2_400 } },
  { id: 'price_demo_team', nickname: 'Team seat', interval: 'month', unit: { usd: 1_500, eur: 1_400, gbp: 1_200 } },
  { id: 'price_demo_business', nickname: 'Business (annual)', interval: 'year', unit: { usd: 120_000, eur: 110_000, gbp: 96_000 } },
] as const;
const CURRENCIES = ['usd', 'usd', 'usd', 'eur', 'gbp'] as const;
const NAMES = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Vandelay', 'Stark', 'Wayne', 'Tyrell', 'Soylent', 'Cyberdyne', 'Wonka'];
const KINDS = ['Labs', 'Systems', 'Logistics', 'Health', 'Retail', 'Media', 'Foods', 'Energy'];

const unix = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000);

/** The same period later: a month or a year after `from` (Unix seconds, day precision is enough). */
function addPeriod(from: number, interval: 'month' | 'year'): number {
  const date = new Date(from * 1000);
  if (interval === 'year') date.setUTCFullYear(date.getUTCFullYear() + 1);
  else date.setUTCMonth(date.getUTCMonth() + 1);
  return Math.floor(date.getTime() / 1000);
}

/**
 * `count` customers who signed up over the two years before `today`, each with one subscription and
 * an invoice per period billed (the last 12 at most): most still running, some cancelled and ended
 * at a past date, some with notice given (ending at their period's end), a few past due or trialing.
 */
export function stripeDemoAccount(options: { customers: number; seed: number; today: string }): StripeAccount {
  const random = seededRandom(options.seed);
  const now = unix(options.today) + 12 * 3600;
  const account: StripeAccount = { customers: [], subscriptions: [], invoices: [] };
  for (let i = 1; i <= options.customers; i++) {
    const n = String(i).padStart(6, '0');
    const currency = random.pick(CURRENCIES);
    const plan = random.pick(PLANS);
    const quantity = plan.id === 'price_demo_team' ? random.int(3, 40) : plan.interval === 'year' ? 1 : random.int(1, 3);
    const created = now - random.int(20, 730) * DAY;
    const name = `${random.pick(NAMES)} ${random.pick(KINDS)} ${n}`;
    account.customers.push({
      id: `cus_demo${n}`,
      object: 'customer',
      created,
      currency,
      email: `billing@customer-${n}.example.com`,
      name,
      livemode: false,
      metadata: {},
    });
    // Periods from the start until today: each billed by an invoice.
    const periods: { start: number; end: number }[] = [];
    for (let start = created; start <= now; start = addPeriod(start, plan.interval))
      periods.push({ start, end: addPeriod(start, plan.interval) });
    const fate = random.next();
    let status = 'active';
    let endedAt: number | null = null;
    let canceledAt: number | null = null;
    let cancelAtPeriodEnd = false;
    if (fate < 0.18 && periods.length > 2) {
      // Churned: stopped at the end of a past period, notice given some days before.
      const last = periods[random.int(1, periods.length - 2)]!;
      status = 'canceled';
      endedAt = last.end;
      canceledAt = last.end - random.int(3, 25) * DAY;
      periods.splice(periods.indexOf(last) + 1);
    } else if (fate < 0.26) {
      cancelAtPeriodEnd = true;
      canceledAt = Math.max(periods[periods.length - 1]!.start, now - random.int(1, 20) * DAY);
    } else if (fate < 0.3) status = 'past_due';
    else if (fate < 0.33 && periods.length === 1) status = 'trialing';
    const current = periods[periods.length - 1]!;
    const unitAmount = plan.unit[currency];
    account.subscriptions.push({
      id: `sub_demo${n}`,
      object: 'subscription',
      customer: `cus_demo${n}`,
      created,
      start_date: created,
      billing_cycle_anchor: created,
      status,
      currency,
      cancel_at_period_end: cancelAtPeriodEnd,
      cancel_at: cancelAtPeriodEnd ? current.end : null,
      canceled_at: canceledAt,
      ended_at: endedAt,
      discounts: [],
      livemode: false,
      metadata: {},
      items: {
        object: 'list',
        data: [
          {
            id: `si_demo${n}`,
            object: 'subscription_item',
            created,
            quantity,
            current_period_start: current.start,
            current_period_end: current.end,
            price: {
              id: plan.id,
              object: 'price',
              nickname: plan.nickname,
              currency,
              unit_amount: unitAmount,
              type: 'recurring',
              recurring: { interval: plan.interval, interval_count: 1, usage_type: 'licensed' },
            },
          },
        ],
        has_more: false,
      },
    });
    const billed = status === 'trialing' ? [] : periods.slice(-12);
    billed.forEach((period, index) => {
      const amount = unitAmount * quantity;
      const latest = index === billed.length - 1;
      // The latest invoice of a past-due subscription is still open; the others are paid.
      const open = latest && status === 'past_due';
      account.invoices.push({
        id: `in_demo${n}_${String(index + 1).padStart(2, '0')}`,
        object: 'invoice',
        number: `DEMO-${n}-${String(index + 1).padStart(4, '0')}`,
        customer: `cus_demo${n}`,
        created: period.start,
        currency,
        status: open ? 'open' : 'paid',
        amount_due: amount,
        amount_paid: open ? 0 : amount,
        due_date: period.start + 14 * DAY,
        livemode: false,
        period_start: period.start,
        period_end: period.end,
        status_transitions: { finalized_at: period.start, paid_at: open ? null : period.start + random.int(0, 10) * DAY },
        parent: { type: 'subscription_details', subscription_details: { metadata: {}, subscription: `sub_demo${n}` } },
        lines: { object: 'list', data: [], has_more: false },
      });
    });
  }
  return account;
}

export interface ServedStripe {
  url: string;
  stop(): void;
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * Stripe's API over `account` for `apiKey`, as far as the backfill and the apply job read it: the
 * list endpoints (newest first, `limit` up to 100, `starting_after` an object id) and the retrieve of
 * one object, behind Bearer authentication. The objects are read as they are at each request (a test
 * may change one), but the accounts are fixed: the order is indexed once (a 100,000-customer account
 * pages without a scan per page).
 */
export function stripeAccountApi(account: StripeAccount, apiKey: string): (request: Request) => Response {
  const lists: Record<string, { ordered: StripeObject[]; position: Map<unknown, number> }> = {};
  for (const [path, objects] of [
    ['/v1/customers', account.customers],
    ['/v1/subscriptions', account.subscriptions],
    ['/v1/invoices', account.invoices],
  ] as const) {
    const ordered = [...objects].reverse();
    lists[path] = { ordered, position: new Map(ordered.map((object, index) => [object.id, index])) };
  }
  return (request) => {
    const url = new URL(request.url);
    if (request.headers.get('authorization') !== `Bearer ${apiKey}`)
      return json({ error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } }, 401);
    // Retrieve one object: GET /v1/{customers|subscriptions|invoices}/:id.
    const one = /^(\/v1\/(?:customers|subscriptions|invoices))\/([^/]+)$/.exec(url.pathname);
    if (one) {
      const list = lists[one[1]!]!;
      const found = list.ordered[list.position.get(decodeURIComponent(one[2]!)) ?? -1];
      return found ? json(found) : json({ error: { type: 'invalid_request_error', message: `No such object: '${one[2]}'` } }, 404);
    }
    const list = lists[url.pathname];
    if (!list) return json({ error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } }, 404);
    const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 10)));
    const after = url.searchParams.get('starting_after');
    const start = after ? (list.position.get(after) ?? -1) + 1 : 0;
    const data = list.ordered.slice(start, start + limit);
    return json({ object: 'list', data, has_more: start + limit < list.ordered.length, url: url.pathname });
  };
}

/** `stripeAccountApi` on 127.0.0.1 and a free port. */
export function serveStripeAccount(account: StripeAccount, apiKey: string): ServedStripe {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: stripeAccountApi(account, apiKey) });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
