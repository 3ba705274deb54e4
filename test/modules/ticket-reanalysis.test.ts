// Re-analysis of stored tickets after the intelligence changed (revintel tickets reanalyze), on both
// backends: tickets analysed by an older version get this version's signals, current and first;
// their customers are marked for a rescore; a second run finds nothing to do and changes nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { writeCustomers } from '../../src/modules/customers/service.ts';
import { INTELLIGENCE_VERSION } from '../../src/modules/tickets/intelligence.ts';
import { reanalyseTicketsJob, requestReanalysis } from '../../src/modules/tickets/reanalysis.ts';
import { FEATURE_KEYS, featuresAt } from '../../src/modules/predictions/features.ts';
import {
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  insertRow,
  openTestDatabase,
  testConfig,
  type TestDatabase,
} from '../helpers/harness.ts';
import { drainJobs } from '../helpers/jobs.ts';
import { drainQueue, makeConnector, TEST_SECRET_KEY } from '../helpers/tickets.ts';

for (const backend of BACKENDS) {
  describe(`tickets reanalyze (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database?.dispose());

    type Row = {
      external_id: string;
      churn_signals: string[];
      first_churn_signals: string[] | null;
      sentiment: number | null;
      intelligence_version: string | null;
      updated_at: string;
    };
    const rows = async (orgId: string) =>
      queryText<Row>(
        database.db,
        `select external_id, churn_signals, first_churn_signals, sentiment, intelligence_version, updated_at::text from tickets where org_id = $1 order by external_id`,
        [orgId],
      );

    test('old tickets get the new signals once; running it again changes nothing', async () => {
      const { org } = await createOrgWithKey(database);
      const [customer] = await database.db.transaction(async (tx) =>
        writeCustomers(tx as never, org.id, [
          { index: 0, input: { name: 'Acme', currency: 'EUR', domain: 'acme-reanalysis.example' } },
        ] as never),
      );
      if (customer?.outcome !== 'created') throw new Error('customer not created');
      await insertRow(database.db, 'contracts', {
        id: `ctr_${org.id.slice(4, 14)}`,
        org_id: org.id,
        customer_id: customer.id,
        name: 'Annual',
        currency: 'EUR',
        status: 'active',
        start_date: '2025-01-01',
        end_date: '2099-12-31',
        billing_interval: 'year',
        amount: 1_200_000,
      });
      const today = new Date().toISOString().slice(0, 10);
      const signalTickets = async () => {
        const [row] = await featuresAt(database.db, {
          orgId: org.id,
          population: 'scored',
          day: today,
          horizonDays: 90,
          graceDays: 30,
          customerIds: [customer.id],
        });
        return row!.values[FEATURE_KEYS.indexOf('churn_signal_tickets_90d')];
      };
      const connector = await makeConnector(database, org.id);
      const app = buildApp(database, { config: testConfig({ secretKey: TEST_SECRET_KEY }) }).app;
      const tickets = [
        { id: 'R-1', subject: 'Renewal', description: 'We will cancel at renewal.', requester_email: 'cfo@acme-reanalysis.example' },
        {
          id: 'R-2',
          subject: 'Transfer',
          description: 'Please cancel the payment I made yesterday.',
          requester_email: 'ap@acme-reanalysis.example',
        },
        {
          id: 'R-3',
          subject: 'Seats',
          description: 'We would like to reduce our seats from 40 to 25.',
          requester_email: 'it@acme-reanalysis.example',
        },
      ];
      for (const ticket of tickets) {
        const res = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
          rawBody: JSON.stringify({ ticket }),
          headers: { 'content-type': 'application/json' },
        });
        expect(res.status).toBe(200);
      }
      await drainQueue(database);
      const fresh = await rows(org.id);
      // As an older build left them: version 1, no signals.
      await queryText(
        database.db,
        `update tickets set churn_signals = '[]'::jsonb, first_churn_signals = '[]'::jsonb, intelligence_version = '1' where org_id = $1`,
        [org.id],
      );
      await queryText(database.db, `delete from risk_input_changes where org_id = $1`, [org.id]);
      expect(await signalTickets()).toBe(0);

      const queued = await requestReanalysis(database.db, org.id);
      expect(queued.created).toBe(true);
      expect((await requestReanalysis(database.db, org.id)).id).toBe(queued.id); // one queued at a time
      await drainJobs(database.db, [reanalyseTicketsJob]);
      const [job] = await queryText<{ state: string; result: { read: number; written: number; customers_rescored: number } }>(
        database.db,
        `select state, result from jobs where id = $1`,
        [queued.id],
      );
      expect(job).toMatchObject({ state: 'done', result: { read: 3, written: 3, customers_rescored: 1 } });

      const after = await rows(org.id);
      expect(after.map((r) => [r.external_id, r.churn_signals, r.first_churn_signals, r.intelligence_version])).toEqual([
        ['R-1', ['cancellation'], ['cancellation'], INTELLIGENCE_VERSION],
        ['R-2', [], [], INTELLIGENCE_VERSION],
        ['R-3', ['downgrade'], ['downgrade'], INTELLIGENCE_VERSION],
      ]);
      expect(after.map((r) => r.sentiment)).toEqual(fresh.map((r) => r.sentiment));
      const stale = await queryText<{ customer_id: string }>(database.db, `select customer_id from risk_input_changes where org_id = $1`, [
        org.id,
      ]);
      expect(stale.map((r) => r.customer_id)).toEqual([customer.id]);
      // The churn model's feature reads the new signals: the cancellation and the downgrade.
      expect(await signalTickets()).toBeCloseTo(Math.log1p(2), 12);

      // Again: nothing is selected, nothing is written, not even a timestamp.
      const again = await requestReanalysis(database.db, org.id);
      await drainJobs(database.db, [reanalyseTicketsJob]);
      const [second] = await queryText<{ result: { read: number; written: number } }>(
        database.db,
        `select result from jobs where id = $1`,
        [again.id],
      );
      expect(second!.result).toMatchObject({ read: 0, written: 0 });
      expect(await rows(org.id)).toEqual(after);
    });

    test('a chunk at a time, and only its own organisation', async () => {
      const { org } = await createOrgWithKey(database);
      const { org: other } = await createOrgWithKey(database);
      const connector = await makeConnector(database, org.id);
      const otherConnector = await makeConnector(database, other.id);
      const app = buildApp(database, { config: testConfig({ secretKey: TEST_SECRET_KEY }) }).app;
      for (const [c, n] of [
        [connector.id, 5],
        [otherConnector.id, 2],
      ] as const) {
        for (let i = 0; i < n; i++) {
          const ticket = { id: `C-${i}`, subject: 'Account', description: 'Please close our account.' };
          await call(app, 'POST', `/api/webhooks/tickets?connectorId=${c}`, {
            rawBody: JSON.stringify({ ticket }),
            headers: { 'content-type': 'application/json' },
          });
        }
      }
      await drainQueue(database);
      await queryText(
        database.db,
        `update tickets set churn_signals = '[]'::jsonb, intelligence_version = '1' where org_id = any($1::text[])`,
        [[org.id, other.id]],
      );
      const { enqueueJob } = await import('../../src/queue/job-queue.ts');
      const job = await enqueueJob(database.db, reanalyseTicketsJob, { chunkSize: 2 }, { orgId: org.id });
      await drainJobs(database.db, [reanalyseTicketsJob]);
      const [done] = await queryText<{ result: { read: number; written: number } }>(database.db, `select result from jobs where id = $1`, [
        job.id,
      ]);
      expect(done!.result).toMatchObject({ read: 5, written: 5 });
      expect(
        (await rows(org.id)).every((r) => r.churn_signals.includes('cancellation') && r.intelligence_version === INTELLIGENCE_VERSION),
      ).toBe(true);
      expect((await rows(other.id)).every((r) => r.churn_signals.length === 0 && r.intelligence_version === '1')).toBe(true);
    });
  });
}
