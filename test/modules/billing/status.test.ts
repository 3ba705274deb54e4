// A billing connector's status on each backend, as an admin reads it after a backfill that did not
// all go in: a live-mode customer in a test-mode account (ignored), and a customer with no currency
// yet whose subscription and invoice name none either (dead after their attempts). The status names
// both reasons; once the customer's currency arrives by webhook, replaying the dead events applies them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { BILLING_JOB_KINDS } from '../../../src/modules/billing/jobs.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../../src/modules/agent-actions/settings.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../../src/settings.ts';
import { startFakeStripe, stripeAccount } from '../../fakes/billing.ts';
import {
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  testConfig,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../../helpers/harness.ts';
import { drainJobs } from '../../helpers/jobs.ts';
import { consoleSession } from '../../helpers/sessions.ts';
import { TEST_SECRET_KEY } from '../../helpers/tickets.ts';
import { queryText, type Db } from '../../../src/db/client.ts';
import { storeBillingEvent } from '../../../src/modules/billing/events.ts';
import { checkBillingEvent } from '../../../src/modules/billing/payloads.ts';

const PUBLIC_URL = 'https://rev.example.com';
const API_KEY = 'rk_test_fake_0123456789';

/** What the billing jobs run with: the SECRET_KEY that opens the connectors' API keys. */
const settings: Settings = { ...DEFAULT_SETTINGS, actions: { ...DEFAULT_ACTION_SETTINGS, secretKey: TEST_SECRET_KEY } };

/** The job loop until nothing is due an hour from now: the apply job's retries (30 s apart) run
 * until their events are dead. */
const drainWithRetries = (database: TestDatabase) =>
  drainJobs(database.db, [...BILLING_JOB_KINDS], { clock: () => Date.now() + 3_600_000, settings });

for (const backend of BACKENDS) {
  describe(`billing connector status (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database?.dispose());

    test('the status counts events by state and explains what the last backfill skipped; a dead event replayed once the cause is fixed is applied', async () => {
      const account = stripeAccount(4);
      account.customers[3]!.livemode = true;
      // Stripe sets a customer's currency at its first charge; until then nothing of it says one.
      account.customers[2]!.currency = null;
      account.subscriptions[2]!.currency = null;
      account.subscriptions[2]!.items.data[0].price.currency = null;
      account.subscriptions[2]!.items.data[0].plan.currency = null;
      account.invoices[2]!.currency = null;
      const fake = startFakeStripe({ apiKey: API_KEY, ...account });
      try {
        const config = testConfig({
          databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
          secretKey: TEST_SECRET_KEY,
          publicUrl: PUBLIC_URL,
          stripeApiBase: fake.url,
          billingMaxRps: 100,
        });
        const { app } = buildApp(database, { config });
        const mine = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
        const admin = (await consoleSession(app, database, mine.org.id, 'admin', PUBLIC_URL)).headers;
        const connector = (
          await call(app, 'POST', '/api/billing/connectors', {
            headers: admin,
            body: { name: 'Stripe', platform: 'stripe', mode: 'test', api_key: API_KEY },
          })
        ).body.data;
        const statusPath = `/api/billing/connectors/${connector.id}/status`;

        const before = await call(app, 'GET', statusPath, { headers: admin });
        expect(before.status).toBe(200);
        expect(before.body.data).toMatchObject({
          events: { pending: 0, applied: 0, ignored: 0, dead: 0 },
          last_event: null,
          lag_seconds: 0,
          last_sync: null,
          last_sync_outcome: null,
          dead: [],
        });

        expect((await call(app, 'POST', `/api/billing/connectors/${connector.id}/sync`, { headers: admin })).status).toBe(202);
        await drainWithRetries(database);

        const status = (await call(app, 'GET', statusPath, { headers: admin })).body.data;
        expect(status.events).toEqual({ pending: 0, applied: 9, ignored: 1, dead: 2 });
        expect(status.last_event).toMatchObject({ source: 'sync' });
        expect(status.lag_seconds).toBe(0);
        expect(status.oldest_pending_at).toBeNull();
        expect(status.last_sync).toMatchObject({ state: 'done', error: null });
        expect(status.last_sync_outcome.objects).toEqual({
          customer: { read: 4, created: 3, updated: 0, unchanged: 0 },
          subscription: { read: 4, created: 3, updated: 0, unchanged: 0 },
          invoice: { read: 4, created: 3, updated: 0, unchanged: 0 },
        });
        expect(status.last_sync_outcome.skipped).toEqual([
          { object_type: 'customer', state: 'ignored', reason: 'a live-mode event; this connector takes test mode', count: 1 },
          { object_type: 'invoice', state: 'dead', reason: 'customer cus_fake000003 has no currency yet', count: 1 },
          { object_type: 'subscription', state: 'dead', reason: 'customer cus_fake000003 has no currency yet', count: 1 },
        ]);
        expect(
          status.dead
            .map((event: { object_id: string; attempts: number; source: string }) => [event.object_id, event.attempts, event.source])
            .sort(),
        ).toEqual([
          ['in_fake000003', 5, 'sync'],
          ['sub_fake000003', 5, 'sync'],
        ]);
        expect(status.dead_more).toBe(0);
        expect(JSON.stringify(status)).not.toContain(API_KEY);

        // Only a dead event is replayed; another organisation's admin and an API key are refused.
        const [applied] = await queryText<{ id: string }>(
          database.db,
          `select id from billing_events where connector_id = $1 and state = 'applied' limit 1`,
          [connector.id],
        );
        const notDead = await call(app, 'POST', `/api/billing/connectors/${connector.id}/events/${applied!.id}/replay`, { headers: admin });
        expect(notDead.status).toBe(409);
        expect(notDead.body.error).toContain('is applied: only a dead event is replayed');
        const dead = status.dead.find((event: { object_id: string }) => event.object_id === 'sub_fake000003');
        const deadInvoice = status.dead.find((event: { object_id: string }) => event.object_id === 'in_fake000003');
        const replayPath = `/api/billing/connectors/${connector.id}/events/${dead.id}/replay`;
        expect((await call(app, 'POST', replayPath, { key: mine.secret })).status).toBe(403);
        const theirs = await createOrgWithKey(database);
        const otherAdmin = (await consoleSession(app, database, theirs.org.id, 'admin', PUBLIC_URL)).headers;
        expect((await call(app, 'POST', replayPath, { headers: otherAdmin })).status).toBe(404);
        expect((await call(app, 'GET', statusPath, { headers: otherAdmin })).status).toBe(404);
        const unknown = await call(app, 'POST', `/api/billing/connectors/${connector.id}/events/bev_nobody/replay`, { headers: admin });
        expect(unknown.status).toBe(404);

        // The customer's currency arrives (its first charge), by webhook, a second after the backfill
        // read it. In the backfill's own second the two would tie, and a tie is settled by re-reading
        // the customer (test/modules/billing/tie-break.test.ts): this fake Stripe still says no
        // currency, so on a fast machine the backfill's copy won and the test failed.
        const stored = await database.db.transaction((tx) =>
          storeBillingEvent(tx as unknown as Db, {
            connector: { id: connector.id, orgId: mine.org.id, platform: 'stripe', mode: 'test' },
            body: checkBillingEvent('stripe', {
              id: 'evt_currency_set',
              object: 'event',
              type: 'customer.updated',
              created: Math.floor(Date.now() / 1000) + 1,
              livemode: false,
              data: { object: { ...account.customers[2], currency: 'usd' } },
            }),
            source: 'webhook',
          }),
        );
        expect(stored).toMatchObject({ created: true, state: 'pending' });
        await drainWithRetries(database);
        expect((await call(app, 'GET', statusPath, { headers: admin })).body.data.last_event).toMatchObject({
          event_id: 'evt_currency_set',
          source: 'webhook',
          state: 'applied',
        });

        // Replayed: pending with fresh attempts, then applied by the job.
        const replayed = await call(app, 'POST', replayPath, { headers: admin });
        expect(replayed.status).toBe(202);
        expect(replayed.body.data).toEqual({ replayed: [dead.id], object_type: 'subscription', object_id: 'sub_fake000003' });
        const pending = (await call(app, 'GET', statusPath, { headers: admin })).body.data;
        expect(pending.events).toMatchObject({ pending: 1, dead: 1 });
        expect(pending.oldest_pending_at).not.toBeNull();
        // The platform's event id names an event too.
        const byEventId = `/api/billing/connectors/${connector.id}/events/${encodeURIComponent(deadInvoice.event_id)}/replay`;
        expect((await call(app, 'POST', byEventId, { headers: admin })).status).toBe(202);
        await drainWithRetries(database);

        const after = (await call(app, 'GET', statusPath, { headers: admin })).body.data;
        expect(after.events).toEqual({ pending: 0, applied: 12, ignored: 1, dead: 0 });
        const [records] = await queryText<{ contract: string; invoice_contract: boolean }>(
          database.db,
          `select k.currency as contract, i.contract_id = k.id as invoice_contract from contracts k join invoices i on i.org_id = k.org_id
           where k.org_id = $1 and k.external_id = 'sub_fake000003' and i.external_id = 'in_fake000003'`,
          [mine.org.id],
        );
        expect(records).toEqual({ contract: 'USD', invoice_contract: true });
      } finally {
        fake.stop();
      }
    }, 240_000);
  });
}
