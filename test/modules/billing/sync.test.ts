// The billing backfill against the fake Stripe and Chargebee APIs on each backend: started over the
// API by an admin, run by the job, paging through every list with a 429 in the middle; a run killed
// mid-way resumes from the last page stored and stores every object once; a second sync changes
// nothing; the connector's routes are for admins signed in to the console.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText, type Db } from '../../../src/db/client.ts';
import { localRunner } from '../../../src/db/units-of-work.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../../src/modules/agent-actions/settings.ts';
import { BILLING_JOB_KINDS } from '../../../src/modules/billing/jobs.ts';
import { runBackfill, startSync, syncUnits } from '../../../src/modules/billing/sync.ts';
import { chargebeeSite, startFakeChargebee, startFakeStripe, stripeAccount } from '../../fakes/billing.ts';
import { makeBillingConnector, recordsOf } from '../../helpers/billing.ts';
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
import { DEFAULT_SETTINGS, type Settings } from '../../../src/settings.ts';

const PUBLIC_URL = 'https://rev.example.com';
const API_KEY = 'rk_test_fake_0123456789';
const DAYS = { from: '2026-01-14', to: '2026-01-16' };

/** What the billing jobs run with: the SECRET_KEY that opens the connectors' API keys. */
const jobSettings: Settings = { ...DEFAULT_SETTINGS, actions: { ...DEFAULT_ACTION_SETTINGS, secretKey: TEST_SECRET_KEY } };

const countsOf = async (db: Db, orgId: string) =>
  (
    await queryText<{ customers: number; contracts: number; invoices: number }>(
      db,
      `select (select count(*)::int from customers where org_id = $1) as customers, (select count(*)::int from contracts where org_id = $1) as contracts,
              (select count(*)::int from invoices where org_id = $1 and contract_id is not null) as invoices`,
      [orgId],
    )
  )[0];

for (const backend of BACKENDS) {
  describe(`billing backfill (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database?.dispose());

    test('an admin adds a Stripe connector and starts a sync; the job pages through a 429; a second sync changes nothing', async () => {
      const account = stripeAccount(30);
      const fake = startFakeStripe({ apiKey: API_KEY, ...account, rateLimitOn: new Set([2, 3]) });
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

        const refused = await call(app, 'POST', '/api/billing/connectors', {
          key: mine.secret,
          body: { name: 'Stripe', platform: 'stripe' },
        });
        expect(refused.status).toBe(403);
        const bad = await call(app, 'POST', '/api/billing/connectors', { headers: admin, body: { name: 'Chargebee', platform: 'paypal' } });
        expect(bad.status).toBe(400);

        const created = await call(app, 'POST', '/api/billing/connectors', {
          headers: admin,
          body: { name: 'Stripe', platform: 'stripe', mode: 'test', webhook_secret: 'whsec_0123456789abcdef', api_key: API_KEY },
        });
        expect(created.status).toBe(201);
        const connector = created.body.data;
        expect(connector).toMatchObject({
          platform: 'stripe',
          mode: 'test',
          webhook_secret: true,
          api_key: true,
          basic_auth: false,
          webhook_url: `${PUBLIC_URL}/api/webhooks/billing?connectorId=${connector.id}`,
        });
        const [stored] = await queryText<{ api_key_sealed: string }>(
          database.db,
          `select api_key_sealed from billing_connectors where id = $1`,
          [connector.id],
        );
        expect(stored!.api_key_sealed).not.toContain(API_KEY);
        expect(JSON.stringify((await call(app, 'GET', '/api/billing/connectors', { headers: admin })).body)).not.toContain(API_KEY);

        const started = await call(app, 'POST', `/api/billing/connectors/${connector.id}/sync`, { headers: admin });
        expect(started.status).toBe(202);
        expect(started.body.data).toMatchObject({ state: 'running', phase: 'customer' });
        await drainJobs(database.db, [...BILLING_JOB_KINDS], { settings: jobSettings });

        const shown = await call(app, 'GET', `/api/billing/connectors/${connector.id}`, { headers: admin });
        expect(shown.status).toBe(200);
        const sync = shown.body.data.last_sync;
        expect(sync).toMatchObject({ state: 'done', phase: 'done', rate_limited: 2, error: null });
        expect(sync.report).toEqual({
          customers: { read: 30, new: 30, unchanged: 0 },
          subscriptions: { read: 30, new: 30, unchanged: 0 },
          invoices: { read: 30, new: 30, unchanged: 0 },
        });
        expect(sync.pages).toBe(3);
        expect(shown.body.data.events).toEqual({ pending: 0, applied: 90, ignored: 0, dead: 0 });
        expect(await countsOf(database.db, mine.org.id)).toEqual({ customers: 30, contracts: 30, invoices: 30 });
        const before = await recordsOf(database.db, mine.org.id, DAYS);

        const again = await call(app, 'POST', `/api/billing/connectors/${connector.id}/sync`, { headers: admin });
        expect(again.status).toBe(202);
        await drainJobs(database.db, [...BILLING_JOB_KINDS], { settings: jobSettings });
        const second = (await call(app, 'GET', `/api/billing/connectors/${connector.id}`, { headers: admin })).body.data;
        expect(second.last_sync.report.customers).toEqual({ read: 30, new: 0, unchanged: 30 });
        expect(second.events.applied).toBe(90);
        expect(await recordsOf(database.db, mine.org.id, DAYS)).toBe(before);

        // Another organisation's admin sees none of it.
        const theirs = await createOrgWithKey(database);
        const otherAdmin = (await consoleSession(app, database, theirs.org.id, 'admin', PUBLIC_URL)).headers;
        expect((await call(app, 'GET', `/api/billing/connectors/${connector.id}`, { headers: otherAdmin })).status).toBe(404);
        expect((await call(app, 'POST', `/api/billing/connectors/${connector.id}/sync`, { headers: otherAdmin })).status).toBe(404);
      } finally {
        fake.stop();
      }
    }, 240_000);

    test('a run killed mid-way resumes from the last page stored: every object once, every request counted', async () => {
      const account = stripeAccount(40);
      const fake = startFakeStripe({ apiKey: API_KEY, ...account, rateLimitOn: new Set([2]), retryAfter: true });
      try {
        const connector = await makeBillingConnector(database.db, { platform: 'stripe', apiKey: API_KEY });
        const runner = localRunner(database.db, syncUnits, jobSettings);
        const settings = { stripeApiBase: fake.url, chargebeeApiBase: fake.url, maxRps: 100, pageSize: 10 };
        const { sync } = await database.db.transaction((tx) => startSync(tx as unknown as Db, { connectorId: connector.id }));
        // The process dies after its third page is stored: nothing more reaches the database.
        let pages = 0;
        const killed = runBackfill({
          syncId: sync.id,
          settings,
          secretKey: TEST_SECRET_KEY,
          run: ((unit: 'billing.sync-page', args: never) => {
            if (pages >= 3) return Promise.reject(new Error('killed'));
            if (unit === 'billing.sync-page') pages++;
            return runner.run(unit, args);
          }) as never,
        });
        expect(
          await killed.then(
            (sync) => `resolved: ${sync.state} ${sync.error}`,
            (error: Error) => error.message,
          ),
        ).toBe('killed');
        const [midway] = await queryText<{ state: string; phase: string; pages: number }>(
          database.db,
          `select state, phase, pages from billing_syncs where id = $1`,
          [sync.id],
        );
        expect(midway).toEqual({ state: 'running', phase: 'customer', pages: 3 });

        const resumed = await database.db.transaction((tx) => startSync(tx as unknown as Db, { connectorId: connector.id }));
        expect(resumed).toMatchObject({ resumed: true, sync: { id: sync.id } });
        const done = await runBackfill({
          syncId: sync.id,
          settings,
          secretKey: TEST_SECRET_KEY,
          run: (unit, args) => runner.run(unit, args as never) as never,
        });
        // The page read when the process died is read again; the 429 before it was counted with its page.
        expect(done).toMatchObject({ state: 'done', pages: 12, requests: 13, rateLimited: 1 });
        expect(done.report).toEqual({
          customers: { read: 40, new: 40, unchanged: 0 },
          subscriptions: { read: 40, new: 40, unchanged: 0 },
          invoices: { read: 40, new: 40, unchanged: 0 },
        });
        expect(fake.requests()).toBe(14);
        const [events] = await queryText<{ n: number; objects: number }>(
          database.db,
          `select count(*)::int as n, count(distinct object_id)::int as objects from billing_events where connector_id = $1`,
          [connector.id],
        );
        expect(events).toEqual({ n: 120, objects: 120 });
        await drainJobs(database.db, [...BILLING_JOB_KINDS], { settings: jobSettings });
        expect(await countsOf(database.db, connector.orgId)).toEqual({ customers: 40, contracts: 40, invoices: 40 });
      } finally {
        fake.stop();
      }
    }, 240_000);

    test('Chargebee: Basic auth with the API key, offset paging, amounts from the items', async () => {
      const site = chargebeeSite(30);
      const fake = startFakeChargebee({ apiKey: API_KEY, ...site });
      try {
        const connector = await makeBillingConnector(database.db, { platform: 'chargebee', apiKey: API_KEY });
        const runner = localRunner(database.db, syncUnits, jobSettings);
        const { sync } = await database.db.transaction((tx) => startSync(tx as unknown as Db, { connectorId: connector.id }));
        const done = await runBackfill({
          syncId: sync.id,
          settings: { stripeApiBase: fake.url, chargebeeApiBase: fake.url, maxRps: 100, pageSize: 10 },
          secretKey: TEST_SECRET_KEY,
          run: (unit, args) => runner.run(unit, args as never) as never,
        });
        expect(done).toMatchObject({ state: 'done', pages: 9, error: null });
        await drainJobs(database.db, [...BILLING_JOB_KINDS], { settings: jobSettings });
        expect(await countsOf(database.db, connector.orgId)).toEqual({ customers: 30, contracts: 30, invoices: 30 });
        const [first] = await queryText<{ name: string; amount: string; seats: number; customer: string }>(
          database.db,
          `select k.name, k.amount::text, k.seats, c.name as customer from contracts k join customers c on c.id = k.customer_id
           where k.org_id = $1 and k.external_id = 'cb_sub_000003'`,
          [connector.orgId],
        );
        expect(first).toEqual({ name: 'team-seat-USD-Monthly', amount: '8000', seats: 4, customer: 'Company 000003' });
      } finally {
        fake.stop();
      }
    }, 240_000);
  });
}
