// The worker's ticket loop over a real database: it drains what is due, and while webhooks arrive
// faster than INGEST_PRIORITY_ABOVE a second it pauses after each batch so that the server's
// acknowledgements come first.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { localRunner } from '../../src/db/units.ts';
import { workerUnits } from '../../src/jobs/units.ts';
import { runTicketLoop } from '../../src/jobs/ticket-loop.ts';
import { createLogger } from '../../src/lib/log.ts';
import { buildApp, call, createOrgWithKey, openTestDatabase, testConfig, type TestDatabase } from '../helpers/harness.ts';
import { makeConnector, TEST_SECRET_KEY } from '../helpers/tickets.ts';
import { queryText } from '../../src/db/client.ts';

describe('ticket loop (embedded)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase('embedded');
  });
  afterAll(() => database.dispose());

  async function post(count: number) {
    const { org } = await createOrgWithKey(database);
    const connector = await makeConnector(database, org.id);
    const app = buildApp(database, { config: testConfig({ secretKey: TEST_SECRET_KEY }) }).app;
    for (let i = 0; i < count; i++) {
      const res = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, { rawBody: JSON.stringify({ ticket: { id: `L-${i}`, subject: 'Hello' } }), headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(200);
    }
    return connector.id;
  }

  const run = async (ingestBusy: boolean) => {
    const pauses: number[] = [];
    let stop = false;
    await runTicketLoop({
      units: localRunner(database.db, workerUnits),
      owner: 'loop-test',
      log: createLogger('silent'),
      batchSize: 10,
      isStopping: () => stop,
      idle: async () => {
        stop = true; // nothing left: end the test's loop
      },
      ingestBusy: () => ingestBusy,
      pause: async (ms) => {
        pauses.push(ms);
      },
    });
    return pauses;
  };

  test('drains every due event in batches, without pausing when webhooks are few', async () => {
    const connectorId = await post(25);
    expect(await run(false)).toEqual([]);
    const rows = await queryText<{ status: string }>(database.db, `select status from ticket_events where connector_id = $1`, [connectorId]);
    expect(rows.map((r) => r.status)).toEqual(Array(25).fill('done'));
  });

  test('pauses after each batch while webhooks arrive fast, up to a quarter second per batch', async () => {
    const connectorId = await post(25);
    const pauses = await run(true);
    expect(pauses).toHaveLength(3); // batches of 10, 10, 5
    for (const ms of pauses) {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(250);
    }
    const rows = await queryText<{ status: string }>(database.db, `select status from ticket_events where connector_id = $1`, [connectorId]);
    expect(rows.every((r) => r.status === 'done')).toBe(true);
  });
});
