// `billing.apply` in parts, on each backend: a run applies a backlog part after part, each part
// within its size; a webhook delivery made while a backlog is applied is acknowledged before the
// backlog is through (on the embedded database, which runs one transaction at a time, it used to
// wait for a whole run of up to 500 events); while the connector's webhooks arrive the run waits;
// and a second run of the same connector leaves the work to the one running.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../../src/db/client.ts';
import type { BillingConnector } from '../../../src/db/schema/index.ts';
import { transaction } from '../../../src/db/transaction.ts';
import { billingApplyJob, queueBillingApply } from '../../../src/modules/billing/apply-job.ts';
import { type ApplyReport, applyInParts, INGEST_BUSY_PER_SECOND, webhookIngestBusy } from '../../../src/modules/billing/apply.ts';
import { storeBillingEvents } from '../../../src/modules/billing/events.ts';
import { checkBillingEvent } from '../../../src/modules/billing/payloads.ts';
import { stripeSignature } from '../../../src/modules/billing/signatures.ts';
import { BACKENDS, buildApp, call, openTestDatabase, TEST_DATABASE_URL, testConfig, type TestDatabase } from '../../helpers/harness.ts';
import { BILLING_WEBHOOK_SECRET, billingFixture, makeBillingConnector } from '../../helpers/billing.ts';
import { runHandler } from '../../helpers/jobs.ts';
import { TEST_SECRET_KEY } from '../../helpers/tickets.ts';

/** A new subscription (and with it a customer) per event. */
function subscriptionEvent(n: number, tag: string) {
  const event = billingFixture('stripe/customer.subscription.created.json');
  const object = { ...event.data.object, id: `sub_${tag}${n}`, customer: `cus_${tag}${n}` };
  return { ...event, id: `evt_${tag}${n}`, data: { object } };
}

test('a run tries a failing event once: its later passes take only the events stored meanwhile', async () => {
  const answers: ApplyReport[] = [
    { applied: 3, failed: 1, dead: 0, next: null, remaining: 2 }, // one failed, one stored meanwhile
    { applied: 1, failed: 0, dead: 0, next: null, remaining: 1 }, // the new one applied
    { applied: 0, failed: 0, dead: 0, next: null, remaining: 1 }, // nothing new: the failed one waits
  ];
  const asked: boolean[] = [];
  const totals = await applyInParts(async ({ freshOnly }) => {
    asked.push(freshOnly);
    return answers.shift()!;
  });
  expect(asked).toEqual([false, true, true]);
  expect(totals).toMatchObject({ applied: 4, failed: 1, remaining: 1, passes: 3 });
});

for (const backend of BACKENDS) {
  describe(`billing.apply in parts (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    beforeAll(async () => {
      database = await openTestDatabase(backend);
      const databaseUrl = backend === 'postgres' ? TEST_DATABASE_URL : null;
      app = buildApp(database, { config: testConfig({ databaseUrl, secretKey: TEST_SECRET_KEY }) }).app;
    });
    afterAll(() => database?.dispose());

    /** `count` events stored as a backfill stores them (not webhook deliveries: no run waits for
     * them), or as `source`. The job they queue is taken away: the test runs the job itself (a worker
     * of another test on the same database must not take it). */
    const store = async (connector: BillingConnector, count: number, tag: string, source: 'sync' | 'webhook' = 'sync') => {
      await transaction(database.db, (tx) =>
        storeBillingEvents(
          tx,
          Array.from({ length: count }, (_, i) => ({ connector, body: checkBillingEvent('stripe', subscriptionEvent(i, tag)), source })),
        ),
      );
      await queryText(database.db, `delete from jobs where kind = 'billing.apply' and dedupe_key = $1`, [connector.id]);
    };
    const pending = async (connector: BillingConnector) =>
      (
        await queryText<{ n: number }>(
          database.db,
          `select count(*)::int as n from billing_events where connector_id = $1 and state = 'pending'`,
          [connector.id],
        )
      )[0]!.n;
    const contracts = async (connector: BillingConnector) =>
      (await queryText<{ n: number }>(database.db, `select count(*)::int as n from contracts where org_id = $1`, [connector.orgId]))[0]!.n;

    test('a run applies the backlog part after part, each within its size, and every event once', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      await store(connector, 23, 'parts');
      const parts: number[] = [];
      const result = await runHandler(
        database.db,
        billingApplyJob,
        { connectorId: connector.id, partSize: 5 },
        { orgId: connector.orgId },
        { seen: (unit, _args, answer) => unit === 'apply-part' && parts.push((answer as { applied: number }).applied) },
      );
      expect(parts.every((applied) => applied <= 5)).toBe(true);
      expect(parts.reduce((a, b) => a + b, 0)).toBe(23);
      expect(result).toMatchObject({ applied: 23, failed: 0, remaining: 0, waitedForAnotherRun: false });
      expect(await pending(connector)).toBe(0);
      expect(await contracts(connector)).toBe(23);
    });

    test('a delivery made while a backlog is applied is acknowledged before the backlog is through', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      await store(connector, 40, 'ack');
      const run = runHandler(database.db, billingApplyJob, { connectorId: connector.id, partSize: 2 }, { orgId: connector.orgId });
      const body = JSON.stringify(subscriptionEvent(0, 'late'));
      const t = Math.floor(Date.now() / 1000);
      const answer = await call(app, 'POST', `/api/webhooks/billing?connectorId=${connector.id}`, {
        rawBody: body,
        headers: {
          'content-type': 'application/json',
          'stripe-signature': `t=${t},v1=${stripeSignature(body, BILLING_WEBHOOK_SECRET, t)}`,
        },
      });
      expect(answer.status).toBe(200);
      // Acknowledged while most of the backlog still waited: it went in between two parts.
      expect(await pending(connector)).toBeGreaterThan(20);
      await run;
      // The run's passes go on until nothing is pending: the late event is applied by it too.
      expect(await pending(connector)).toBe(0);
      expect(await contracts(connector)).toBe(41);
    });

    test("while the connector's webhooks arrive the run waits; a backfill's pages do not make it wait", async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      await store(connector, INGEST_BUSY_PER_SECOND + 5, 'pages');
      expect(await webhookIngestBusy(database.db, connector.id)).toBe(false);
      await store(connector, INGEST_BUSY_PER_SECOND, 'hooks', 'webhook');
      expect(await webhookIngestBusy(database.db, connector.id)).toBe(true);
      const result = await runHandler(database.db, billingApplyJob, { connectorId: connector.id }, { orgId: connector.orgId });
      expect(result.deferredMs).toBeGreaterThan(0);
      expect(result.applied).toBe(INGEST_BUSY_PER_SECOND * 2 + 5);
      expect(await pending(connector)).toBe(0);
    });

    test('a second run of the connector leaves the events to the one running and looks again in a second', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      await store(connector, 3, 'twice');
      const running = await transaction(database.db, (tx) => queueBillingApply(tx, connector));
      await queryText(database.db, `update jobs set state = 'running' where id = $1`, [running.id]);
      let result: Awaited<ReturnType<typeof billingApplyJob.handle>>;
      try {
        result = await runHandler(database.db, billingApplyJob, { connectorId: connector.id }, { orgId: connector.orgId });
      } finally {
        // A job left running would keep every other test's job loop waiting for it.
        await queryText(database.db, `update jobs set state = 'done', finished_at = now() where id = $1`, [running.id]);
      }
      expect(result).toMatchObject({ applied: 0, waitedForAnotherRun: true });
      expect(await pending(connector)).toBe(3);
      const queued = await queryText<{ later: boolean }>(
        database.db,
        `select run_at > now() as later from jobs where kind = 'billing.apply' and dedupe_key = $1 and state = 'queued'`,
        [connector.id],
      );
      expect(queued).toEqual([{ later: true }]);
    });
  });
}
