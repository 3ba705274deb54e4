// POST /api/webhooks/billing?connectorId=… on each backend, through the whole app: a Stripe event
// signed with the connector's secret (or, during a rotation, the previous one) is stored once and
// answered 200; an expired, v0-only or altered signature and Chargebee's wrong credentials are a 401
// with nothing stored; a redelivery, an other-mode event and an unmapped type are acknowledged
// without anything to apply; a payload off its platform's schema is a 400 naming the field. A burst
// is stored by group commit, and a change made through the API reaches the connector cache at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText, type Db } from '../../../src/db/client.ts';
import type { BillingConnector } from '../../../src/db/schema/index.ts';
import { sealSecret } from '../../../src/lib/secret-box.ts';
import { updateBillingConnector } from '../../../src/modules/billing/connectors.ts';
import { stripeSignature } from '../../../src/modules/billing/signatures.ts';
import {
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  TEST_DATABASE_URL,
  testConfig,
  type TestDatabase,
} from '../../helpers/harness.ts';
import { consoleSession } from '../../helpers/sessions.ts';
import { BILLING_WEBHOOK_SECRET, billingFixture, makeBillingConnector } from '../../helpers/billing.ts';
import { TEST_SECRET_KEY } from '../../helpers/tickets.ts';

const NEW_SECRET = 'whsec_revintel_test_rotated_00112233445566';
const CHARGEBEE_CREDENTIALS = 'revintel-hook:s3cret-Pa55:with-colon';
const nowSeconds = () => Math.floor(Date.now() / 1000);
const v1 = (body: string, secret: string, t: number) => `v1=${stripeSignature(body, secret, t)}`;

/** A fixture as the platform would send it now: a fresh id (so each test's event is its own). */
function stripeEvent(file: string, changes: Record<string, unknown> = {}): string {
  const event = billingFixture(file);
  return JSON.stringify({ ...event, id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, ...changes });
}

for (const backend of BACKENDS) {
  describe(`POST /api/webhooks/billing (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    beforeAll(async () => {
      database = await openTestDatabase(backend);
      const databaseUrl = backend === 'postgres' ? TEST_DATABASE_URL : null;
      app = buildApp(database, { config: testConfig({ databaseUrl, secretKey: TEST_SECRET_KEY }) }).app;
    });
    afterAll(() => database?.dispose());

    const post = (connector: BillingConnector | string, body: string, headers: Record<string, string>) =>
      call(app, 'POST', `/api/webhooks/billing?connectorId=${typeof connector === 'string' ? connector : connector.id}`, {
        rawBody: body,
        headers: { 'content-type': 'application/json', ...headers },
      });
    const signedPost = (connector: BillingConnector, body: string, secret = BILLING_WEBHOOK_SECRET, t = nowSeconds()) =>
      post(connector, body, { 'stripe-signature': `t=${t},${v1(body, secret, t)}` });
    const stored = (connector: BillingConnector) =>
      queryText<{ event_id: string; state: string; detail: string | null }>(
        database.db,
        'select event_id, state, detail from billing_events where connector_id = $1 order by received_at, id',
        [connector.id],
      );
    const applyJobs = async (connector: BillingConnector) =>
      (
        await queryText<{ n: number }>(database.db, `select count(*)::int as n from jobs where kind = 'billing.apply' and org_id = $1`, [
          connector.orgId,
        ])
      )[0]!.n;

    test('Stripe: a valid signature is stored as pending, its apply job queued, and answered 200', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      const body = stripeEvent('stripe/customer.subscription.created.json');
      const answer = await signedPost(connector, body);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ ok: true, status: 'received', event_id: JSON.parse(body).id });
      expect(await stored(connector)).toEqual([{ event_id: JSON.parse(body).id, state: 'pending', detail: null }]);
      expect(await applyJobs(connector)).toBe(1);
    });

    test('Stripe: two v1 while a secret is rolled, the previous one within its grace, are valid', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      await database.db.transaction((tx) =>
        updateBillingConnector(tx as unknown as Db, {
          connector: connector.id,
          webhookSecretSealed: sealSecret(NEW_SECRET, TEST_SECRET_KEY, connector.id),
          graceSeconds: 3600,
          actor: 'test',
        }),
      );
      const body = stripeEvent('stripe/customer.created.json');
      const t = nowSeconds();
      const answer = await post(connector, body, {
        'stripe-signature': `t=${t},${v1(body, NEW_SECRET, t)},${v1(body, BILLING_WEBHOOK_SECRET, t)}`,
      });
      expect(answer.status).toBe(200);
      const previousOnly = stripeEvent('stripe/customer.created.json');
      expect((await signedPost(connector, previousOnly, BILLING_WEBHOOK_SECRET)).status).toBe(200);
      expect(await stored(connector)).toHaveLength(2);
    });

    test('Stripe: the previous secret past its grace is refused', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      await database.db.transaction((tx) =>
        updateBillingConnector(tx as unknown as Db, {
          connector: connector.id,
          webhookSecretSealed: sealSecret(NEW_SECRET, TEST_SECRET_KEY, connector.id),
          graceSeconds: 0,
          actor: 'test',
        }),
      );
      const answer = await signedPost(connector, stripeEvent('stripe/customer.created.json'), BILLING_WEBHOOK_SECRET);
      expect(answer.status).toBe(401);
      expect(await stored(connector)).toEqual([]);
    });

    test('Stripe: a timestamp older than BILLING_TOLERANCE_S is a 401 and nothing is stored', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      const answer = await signedPost(connector, stripeEvent('stripe/customer.created.json'), BILLING_WEBHOOK_SECRET, nowSeconds() - 301);
      expect(answer.status).toBe(401);
      expect(answer.body.error).toContain('300 s');
      expect(await stored(connector)).toEqual([]);
    });

    test('Stripe: a v0 signature alone is a 401 and nothing is stored', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      const body = stripeEvent('stripe/customer.created.json');
      const t = nowSeconds();
      const answer = await post(connector, body, { 'stripe-signature': `t=${t},v0=${stripeSignature(body, BILLING_WEBHOOK_SECRET, t)}` });
      expect(answer.status).toBe(401);
      expect(await stored(connector)).toEqual([]);
    });

    test('Stripe: a body altered after signing is a 401 and nothing is stored', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      const body = stripeEvent('stripe/invoice.paid.json');
      const t = nowSeconds();
      const altered = body.replace('"amount_paid":', '"amount_paid": 1');
      expect(altered).not.toBe(body);
      const answer = await post(connector, altered, { 'stripe-signature': `t=${t},${v1(body, BILLING_WEBHOOK_SECRET, t)}` });
      expect(answer.status).toBe(401);
      expect(await stored(connector)).toEqual([]);
    });

    test('Chargebee: the webhook Basic credentials are stored and answered 200', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'chargebee' });
      const body = JSON.stringify(billingFixture('chargebee/subscription_created.json'));
      const answer = await post(connector, body, { authorization: `Basic ${btoa(CHARGEBEE_CREDENTIALS)}` });
      expect(answer.status).toBe(200);
      expect((await stored(connector)).map((row) => row.state)).toEqual(['pending']);
    });

    test('Chargebee: wrong credentials are a 401 and nothing is stored', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'chargebee' });
      const body = JSON.stringify(billingFixture('chargebee/subscription_created.json'));
      const answer = await post(connector, body, { authorization: `Basic ${btoa('revintel-hook:wrong-password')}` });
      expect(answer.status).toBe(401);
      expect(await stored(connector)).toEqual([]);
    });

    test('a redelivery of one event id is answered 200 "duplicate" and stores nothing more', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      const body = stripeEvent('stripe/customer.created.json');
      expect((await signedPost(connector, body)).body.status).toBe('received');
      const again = await signedPost(connector, body);
      expect(again.status).toBe(200);
      expect(again.body.status).toBe('duplicate');
      expect(await stored(connector)).toHaveLength(1);
    });

    test('an event is kept as the text received, byte for byte (its spacing and its order of keys)', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      const { id: _id, ...event } = JSON.parse(stripeEvent('stripe/customer.created.json'));
      const body = JSON.stringify({ type: event.type, id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, ...event }, null, 3);
      expect((await signedPost(connector, body)).status).toBe(200);
      const rows = await queryText<{ body: string }>(database.db, 'select body from billing_events where connector_id = $1', [
        connector.id,
      ]);
      expect(rows).toEqual([{ body }]);
    });

    test('an event of the other mode is acknowledged and stored as ignored, nothing to apply', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe', mode: 'test' });
      const answer = await signedPost(connector, stripeEvent('stripe/customer.created.json', { livemode: true }));
      expect(answer.body.status).toBe('ignored');
      const [row] = await stored(connector);
      expect(row).toMatchObject({ state: 'ignored', detail: 'a live-mode event; this connector takes test mode' });
      expect(await applyJobs(connector)).toBe(0);
    });

    test('an event of a type the sync does not map is stored as ignored', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      const answer = await signedPost(
        connector,
        stripeEvent('stripe/customer.created.json', { type: 'charge.refunded', data: { object: { id: 'ch_1', object: 'charge' } } }),
      );
      expect(answer.body.status).toBe('ignored');
      expect(await stored(connector)).toMatchObject([{ state: 'ignored', detail: 'type charge.refunded is not synced' }]);
    });

    test("a subscription off Stripe's schema is a 400 naming the field, and nothing is stored", async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      const event = billingFixture('stripe/customer.subscription.created.json');
      event.data.object.items = { object: 'list', data: 'not a list' };
      const answer = await signedPost(connector, JSON.stringify(event));
      expect(answer.status).toBe(400);
      expect(answer.body.error).toContain('"items.data"');
      expect(await stored(connector)).toEqual([]);
    });

    test('a burst of deliveries goes in a few transactions (group commit): each new event stored once, each redelivery answered "duplicate", one apply job', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      const bodies = Array.from({ length: 60 }, () => stripeEvent('stripe/customer.subscription.created.json'));
      // The first 20 again, within the same burst.
      const answers = await Promise.all([...bodies, ...bodies.slice(0, 20)].map((body) => signedPost(connector, body)));
      expect(answers.map((a) => a.status)).toEqual(Array(80).fill(200));
      const statuses = answers.map((a) => a.body.status as string);
      expect(statuses.filter((s) => s === 'received')).toHaveLength(60);
      expect(statuses.filter((s) => s === 'duplicate')).toHaveLength(20);
      const rows = await stored(connector);
      expect(rows.map((r) => r.event_id).sort()).toEqual(bodies.map((b) => JSON.parse(b).id).sort());
      // Events one transaction stored share received_at (its start): one per delivery without it.
      const [transactions] = await queryText<{ n: number }>(
        database.db,
        'select count(distinct received_at)::int as n from billing_events where connector_id = $1',
        [connector.id],
      );
      expect(transactions!.n).toBeLessThan(20);
      expect(await applyJobs(connector)).toBe(1);
    });

    test('a webhook secret rotated through the API with no grace refuses the old one at the next delivery (the connector cache forgets)', async () => {
      const owner = await createOrgWithKey(database);
      const connector = await makeBillingConnector(database.db, { platform: 'stripe', orgId: owner.org.id });
      expect((await signedPost(connector, stripeEvent('stripe/customer.created.json'))).status).toBe(200);
      const admin = (await consoleSession(app, database, owner.org.id, 'admin')).headers;
      const changed = await call(app, 'PATCH', `/api/billing/connectors/${connector.id}`, {
        headers: admin,
        body: { webhook_secret: NEW_SECRET, grace_seconds: 0 },
      });
      expect(changed.status).toBe(200);
      expect((await signedPost(connector, stripeEvent('stripe/customer.created.json'))).status).toBe(401);
      expect((await signedPost(connector, stripeEvent('stripe/customer.created.json'), NEW_SECRET)).status).toBe(200);
      expect(await stored(connector)).toHaveLength(2);
      const removed = await call(app, 'DELETE', `/api/billing/connectors/${connector.id}`, { headers: admin });
      expect(removed.status).toBe(200);
      expect((await signedPost(connector, stripeEvent('stripe/customer.created.json'), NEW_SECRET)).status).toBe(404);
    });

    test('a connector nobody has is a 404', async () => {
      const answer = await post('bcn_nobody000000000000000000', stripeEvent('stripe/customer.created.json'), {
        'stripe-signature': 't=1,v1=00',
      });
      expect(answer.status).toBe(404);
    });
  });
}
