// Freshness through the real worker thread, on both backends: a ticket with cancellation language
// from customer X, acknowledged by the webhook, moves X's prediction (the ticket is processed, X is
// marked stale, the debounced recompute runs); no other customer's prediction changes and no stale
// mark is left. How soon is measured by `bench:predictions` (freshness p95, target under 10 s), not
// here: the test waits up to 30 s, so a busy machine does not fail it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import type { Supervisor } from '../../src/jobs/supervisor.ts';
import { utcToday } from '../../src/lib/today.ts';
import { recomputePredictions } from '../../src/modules/predictions/service.ts';
import { addDays } from '../../src/modules/predictions/training.ts';
import { startTestWorker } from '../helpers/jobs.ts';
import {
  insertRow,
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  testConfig,
  type TestDatabase,
} from '../helpers/harness.ts';
import { makeConnector, TEST_SECRET_KEY } from '../helpers/tickets.ts';

for (const backend of BACKENDS) {
  describe(`prediction freshness (${backend})`, () => {
    let database: TestDatabase;
    let supervisor: Supervisor;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
      supervisor = startTestWorker(database, backend, { heartbeatMs: 200 });
      await supervisor.ready;
    });
    afterAll(async () => {
      await supervisor?.stop();
      await database?.dispose();
    });

    test('a ticket with cancellation language moves its customer, and no one else', async () => {
      const { org } = await createOrgWithKey(database);
      const connector = await makeConnector(database, org.id);
      const today = utcToday();
      const id = (name: string) => `${name}_${org.id.slice(4, 14)}`;
      for (const name of ['x', 'y']) {
        await insertRow(database.db, 'customers', {
          id: id(name),
          org_id: org.id,
          name,
          currency: 'USD',
          email: `ops@${name}-${org.id.slice(4, 10).toLowerCase()}.example`,
        });
        await insertRow(database.db, 'contracts', {
          id: id(`${name}c`),
          org_id: org.id,
          customer_id: id(name),
          name: 'Plan',
          currency: 'USD',
          status: 'active',
          start_date: addDays(today, -400),
          end_date: addDays(today, 300),
          billing_interval: 'year',
          amount: 1_000_000,
        });
      }
      await database.db.transaction((tx) => recomputePredictions(tx as never, { orgId: org.id, today }));
      const read = async () =>
        new Map(
          (
            await queryText<{ customer_id: string; probability: number; predicted_at: string }>(
              database.db,
              `select customer_id, probability, predicted_at::text from predictions where org_id = $1`,
              [org.id],
            )
          ).map((r) => [r.customer_id, r]),
        );
      const before = await read();
      const app = buildApp(database, { config: testConfig({ secretKey: TEST_SECRET_KEY }), wakeWorker: (n) => supervisor.wake(n) }).app;
      const sent = Date.now();
      const body = JSON.stringify({
        ticket: {
          id: 'CANCEL-1',
          subject: 'We want to cancel',
          description: 'We will cancel our subscription and move to a competitor.',
          requester_email: `ops@x-${org.id.slice(4, 10).toLowerCase()}.example`,
        },
      });
      expect(
        (
          await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
            rawBody: body,
            headers: { 'content-type': 'application/json' },
          })
        ).status,
      ).toBe(200);
      let after = await read();
      while (after.get(id('x'))!.predicted_at === before.get(id('x'))!.predicted_at && Date.now() - sent < 30_000) {
        await Bun.sleep(100);
        after = await read();
      }
      expect(after.get(id('x'))!.predicted_at).not.toBe(before.get(id('x'))!.predicted_at);
      expect(after.get(id('x'))!.probability).toBeGreaterThan(before.get(id('x'))!.probability);
      // No one else — unless the nightly retrain (PREDICTION_NIGHTLY_AT, 02:00 UTC) fired meanwhile
      // and rescored the whole organisation, as it should.
      const retrained = await queryText(database.db, `select 1 from jobs where org_id = $1 and kind = 'predictions.train'`, [org.id]);
      if (retrained.length === 0) expect(after.get(id('y'))).toEqual(before.get(id('y')));
      expect(await queryText(database.db, `select 1 from risk_input_changes where org_id = $1`, [org.id])).toEqual([]);
      // The job's chunks commit before its "done" (a handle kind): its settling follows shortly.
      const jobs = async () =>
        queryText<{ state: string }>(database.db, `select state from jobs where org_id = $1 and kind = 'predictions.recompute-stale'`, [
          org.id,
        ]);
      const settled = Date.now();
      while ((await jobs()).some((j) => j.state !== 'done') && Date.now() - settled < 15_000) await Bun.sleep(50);
      // (The 15-second sweep may have asked once more for the marks the setup's inserts made.)
      expect((await jobs()).length).toBeGreaterThanOrEqual(1);
      expect((await jobs()).every((j) => j.state === 'done')).toBe(true);
    }, 60_000);
  });
}
