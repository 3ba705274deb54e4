// Billing sync in tests: the fixtures (test/fixtures/billing/), a connector made straight in the
// database, events stored as the webhook route will store them, the apply job drained, and the
// records an organisation ends with, as one comparable text.
import { readFileSync } from 'node:fs';
import { queryText, type Db } from '../../src/db/client.ts';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { createBillingConnector, newBillingConnectorId } from '../../src/modules/billing/connectors.ts';
import { storeBillingEvent } from '../../src/modules/billing/events.ts';
import { checkBillingEvent } from '../../src/modules/billing/payloads.ts';
import { BILLING_JOB_KINDS } from '../../src/modules/billing/jobs.ts';
import type { BillingConnector } from '../../src/db/schema/index.ts';
import { drainJobs } from './jobs.ts';
import { uniqueName } from './harness.ts';
import { createOrg } from '../../src/modules/orgs/service.ts';
import { TEST_SECRET_KEY } from './tickets.ts';

const FIXTURES = new URL('../fixtures/billing/', import.meta.url);

export const billingFixture = (path: string) => JSON.parse(readFileSync(new URL(path, FIXTURES), 'utf8'));

/** The Stripe story, in the order it happened (README of the fixtures). */
export const STRIPE_STORY = [
  'stripe/customer.created.json',
  'stripe/customer.subscription.created.json',
  'stripe/customer.subscription.updated.quantity.json',
  'stripe/invoice.paid.json',
  'stripe/customer.subscription.updated.plan-change.json',
  'stripe/customer.subscription.updated.cancel-at-period-end.json',
  'stripe/customer.subscription.deleted.json',
];

export const CHARGEBEE_STORY = [
  'chargebee/customer_created.json',
  'chargebee/subscription_created.json',
  'chargebee/subscription_changed.json',
  'chargebee/invoice_generated.json',
  'chargebee/subscription_cancellation_scheduled.json',
  'chargebee/subscription_cancelled.json',
];

export const BILLING_WEBHOOK_SECRET = 'whsec_revintel_test_current_0123456789abcdef';

export async function makeBillingConnector(
  db: Db,
  options: { platform: 'stripe' | 'chargebee'; mode?: 'live' | 'test'; orgId?: string; apiKey?: string },
): Promise<BillingConnector> {
  const orgId =
    options.orgId ??
    (await db.transaction((tx) => createOrg(tx as unknown as Db, { name: uniqueName('billing'), plan: 'enterprise', actor: 'test' }))).id;
  const id = newBillingConnectorId();
  return db.transaction((tx) =>
    createBillingConnector(tx as unknown as Db, {
      id,
      org: orgId,
      name: `${options.platform} ${uniqueName('c')}`,
      platform: options.platform,
      mode: options.mode ?? 'test',
      site: options.platform === 'chargebee' ? 'acme-test' : null,
      webhookSecretSealed: options.platform === 'stripe' ? sealSecret(BILLING_WEBHOOK_SECRET, TEST_SECRET_KEY, id) : null,
      apiKeySealed: options.apiKey ? sealSecret(options.apiKey, TEST_SECRET_KEY, id) : null,
      basicAuthSealed: options.platform === 'chargebee' ? sealSecret('revintel-hook:s3cret-Pa55:with-colon', TEST_SECRET_KEY, id) : null,
      actor: 'test',
    }),
  );
}

/** Stores `body` as the webhook route does: checked against its platform's schema first. */
export const storeEvent = (db: Db, connector: BillingConnector, body: unknown) =>
  db.transaction((tx) =>
    storeBillingEvent(tx as unknown as Db, { connector, body: checkBillingEvent(connector.platform, body), source: 'webhook' }),
  );

export const applyAll = (db: Db) =>
  drainJobs(
    db,
    [...BILLING_JOB_KINDS].filter((k) => k.kind === 'billing.apply'),
  );

/** The organisation's customers, contracts and invoices (no ids, no times of writing) and each
 * contract as it stood on every day of `days`: equal texts, equal records and equal history. */
export async function recordsOf(db: Db, orgId: string, days: { from: string; to: string }): Promise<string> {
  const customers = await queryText(
    db,
    `select external_id, name, email, currency, status, churned_at::text, deleted_at is not null as deleted from customers where org_id = $1 order by external_id`,
    [orgId],
  );
  const contracts = await queryText(
    db,
    `select k.external_id, c.external_id as customer, k.name, k.status, k.start_date::text, k.end_date::text, k.auto_renew, k.billing_interval,
            k.amount::text, k.currency, k.seats, k.cancelled_at::text
     from contracts k join customers c on c.id = k.customer_id where k.org_id = $1 order by k.external_id`,
    [orgId],
  );
  const invoices = await queryText(
    db,
    `select i.external_id, c.external_id as customer, k.external_id as contract, i.number, i.status, i.amount_due::text, i.amount_paid::text,
            i.issued_at::text, i.due_date::text, i.paid_at::text
     from invoices i join customers c on c.id = i.customer_id left join contracts k on k.id = i.contract_id where i.org_id = $1 order by i.external_id`,
    [orgId],
  );
  const history = await queryText(
    db,
    `select d::date::text as day, k.external_id, r.status, r.amount::text, r.seats, r.end_date::text, r.cancelled_at::text, r.counted
     from generate_series($2::date, $3::date, interval '1 day') d
     cross join lateral revintel_contracts_at($1, d::date) r
     join contracts k on k.id = r.contract_id
     order by 1, 2`,
    [orgId, days.from, days.to],
  );
  return JSON.stringify({ customers, contracts, invoices, history }, null, 1);
}
