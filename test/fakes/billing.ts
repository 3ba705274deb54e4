// A fake Stripe API and a fake Chargebee API for the billing backfill: their list endpoints
// (customers, subscriptions, invoices; Stripe's retrieve of one too) over objects in the platforms'
// shapes (made from the fixtures in test/fixtures/billing/), with their paging (Stripe: newest first,
// `starting_after`, as the demo's Stripe serves it; Chargebee: an opaque `next_offset`), their
// authentication, and a 429 on the requests a test names. Started on port 0 by the tests.
import { stripeAccountApi } from '../../src/modules/demo/stripe-account.ts';
import { billingFixture } from '../helpers/billing.ts';

type Json = any;

export interface FakeBillingApi {
  url: string;
  /** Requests answered so far, 429s included. */
  requests: () => number;
  rateLimited: () => number;
  stop(): void;
}

interface FakeOptions {
  apiKey: string;
  customers: Json[];
  subscriptions: Json[];
  invoices: Json[];
  /** 1-based request numbers answered 429 (with Retry-After: 0 when `retryAfter`). */
  rateLimitOn?: Set<number>;
  retryAfter?: boolean;
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

function serve(options: FakeOptions, handle: (url: URL, request: Request) => Response, tooMany: () => Response): FakeBillingApi {
  let requests = 0;
  let rateLimited = 0;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      requests++;
      if (options.rateLimitOn?.has(requests)) {
        rateLimited++;
        return tooMany();
      }
      return handle(new URL(request.url), request);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests: () => requests,
    rateLimited: () => rateLimited,
    stop: () => server.stop(true),
  };
}

/** Stripe's API as the demo serves it (stripeAccountApi), with the fake's 429s and one check more:
 * a subscriptions list must ask for `status=all` (Stripe leaves canceled ones out otherwise). */
export function startFakeStripe(options: FakeOptions): FakeBillingApi {
  const api = stripeAccountApi(options, options.apiKey);
  const tooMany = () => json(billingFixture('stripe/error.429.json'), 429, options.retryAfter ? { 'retry-after': '0' } : {});
  return serve(
    options,
    (url, request) => {
      if (url.pathname === '/v1/subscriptions' && url.searchParams.get('status') !== 'all')
        return json({ error: { message: 'the backfill must ask for status=all' } }, 400);
      return api(request);
    },
    tooMany,
  );
}

export function startFakeChargebee(options: FakeOptions): FakeBillingApi {
  const lists: Record<string, { key: string; items: Json[] }> = {
    '/api/v2/customers': { key: 'customer', items: options.customers },
    '/api/v2/subscriptions': { key: 'subscription', items: options.subscriptions },
    '/api/v2/invoices': { key: 'invoice', items: options.invoices },
  };
  const tooMany = () => json(billingFixture('chargebee/error.429.json'), 429, options.retryAfter ? { 'retry-after': '0' } : {});
  return serve(
    options,
    (url, request) => {
      if (request.headers.get('authorization') !== `Basic ${Buffer.from(`${options.apiKey}:`).toString('base64')}`)
        return json({ message: 'Sorry, authentication failed. Invalid api key', api_error_code: 'api_authentication_failed' }, 401);
      const list = lists[url.pathname];
      if (!list) return json({ message: 'not found' }, 404);
      const limit = Math.min(100, Number(url.searchParams.get('limit') ?? 10));
      const offset = url.searchParams.get('offset');
      const start = offset ? Number(JSON.parse(offset)[1]) : 0;
      const items = list.items.slice(start, start + limit);
      const next = start + limit < list.items.length ? JSON.stringify([String(Date.now()), String(start + limit)]) : undefined;
      return json({ list: items.map((item) => ({ [list.key]: item })), ...(next ? { next_offset: next } : {}) });
    },
    tooMany,
  );
}

/** `count` Stripe customers, each with a monthly subscription (i seats of $20) and its paid invoice. */
export function stripeAccount(count: number) {
  const customer = billingFixture('stripe/customer.created.json').data.object;
  const subscription = billingFixture('stripe/customer.subscription.created.json').data.object;
  const invoice = billingFixture('stripe/invoice.paid.json').data.object;
  const customers: Json[] = [];
  const subscriptions: Json[] = [];
  const invoices: Json[] = [];
  for (let i = 1; i <= count; i++) {
    const n = String(i).padStart(6, '0');
    customers.push({ ...customer, id: `cus_fake${n}`, name: `Customer ${n}`, email: `billing${n}@example.com`, currency: 'usd' });
    const items = structuredClone(subscription.items);
    items.data[0].id = `si_fake${n}`;
    items.data[0].quantity = 1 + (i % 9);
    items.data[0].subscription = `sub_fake${n}`;
    subscriptions.push({ ...subscription, id: `sub_fake${n}`, customer: `cus_fake${n}`, items });
    invoices.push({
      ...invoice,
      id: `in_fake${n}`,
      number: `FAKE-${n}`,
      customer: `cus_fake${n}`,
      amount_due: 2000 * (1 + (i % 9)),
      amount_paid: 2000 * (1 + (i % 9)),
      parent: { ...invoice.parent, subscription_details: { metadata: {}, subscription: `sub_fake${n}` } },
      lines: { object: 'list', data: [], has_more: false },
    });
  }
  return { customers, subscriptions, invoices };
}

/** `count` Chargebee customers, each with a subscription and an invoice. */
export function chargebeeSite(count: number) {
  const customer = billingFixture('chargebee/customer_created.json').content.customer;
  const subscription = billingFixture('chargebee/subscription_created.json').content.subscription;
  const invoice = billingFixture('chargebee/invoice_generated.json').content.invoice;
  const customers: Json[] = [];
  const subscriptions: Json[] = [];
  const invoices: Json[] = [];
  for (let i = 1; i <= count; i++) {
    const n = String(i).padStart(6, '0');
    customers.push({ ...customer, id: `cb_cus_${n}`, company: `Company ${n}`, email: `ap${n}@example.com` });
    const quantity = 1 + (i % 9);
    subscriptions.push({
      ...subscription,
      id: `cb_sub_${n}`,
      customer_id: `cb_cus_${n}`,
      subscription_items: [{ ...subscription.subscription_items[0], quantity, amount: quantity * 2000 }],
    });
    invoices.push({ ...invoice, id: `cb_inv_${n}`, customer_id: `cb_cus_${n}`, subscription_id: `cb_sub_${n}`, line_items: [] });
  }
  return { customers, subscriptions, invoices };
}
