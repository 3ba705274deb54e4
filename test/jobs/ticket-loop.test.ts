// The worker's ticket loop over a real database: it drains what is due, and while webhooks arrive
// faster than INGEST_PRIORITY_ABOVE a second it defers its work so that the server's
// acknowledgements come first — until the oldest due event has waited DEFER_AT_MOST_MS.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { localRunner } from '../../src/db/units-of-work.ts';
import { workerUnits } from '../../src/jobs/worker-units.ts';
import { createBatchSizer, DEFER_AT_MOST_MS, runTicketLoop } from '../../src/modules/tickets/queue/loop.ts';
import { createLogger } from '../../src/lib/log.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, testConfig, type TestDatabase } from '../helpers/harness.ts';
import { makeConnector, TEST_SECRET_KEY } from '../helpers/tickets.ts';
import { queryText } from '../../src/db/client.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

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
      const res = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
        rawBody: JSON.stringify({ ticket: { id: `L-${i}`, subject: 'Hello' } }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(200);
    }
    return connector.id;
  }

  const statuses = async (connectorId: string) =>
    (
      await queryText<{ status: string }>(database.db, `select status from ticket_events where connector_id = $1 order by id`, [
        connectorId,
      ])
    ).map((r) => r.status);

  /** Runs the loop until it has nothing left; `burst` says whether webhooks arrive fast, and is
   * told of each deferral (with its length) so the test can end the burst. */
  const run = async (burst: { busy: boolean; onPause?: (ms: number) => Promise<void> }) => {
    const pauses: number[] = [];
    let stop = false;
    await runTicketLoop({
      units: localRunner(database.db, workerUnits, DEFAULT_SETTINGS),
      owner: 'loop-test',
      log: createLogger('silent'),
      batchSize: 10,
      isStopping: () => stop,
      idle: async () => {
        stop = true; // nothing left: end the test's loop
      },
      ingestBusy: () => burst.busy,
      pause: async (ms) => {
        pauses.push(ms);
        await burst.onPause?.(ms);
      },
    });
    return pauses;
  };

  test('drains every due event in batches, without deferring when webhooks are few', async () => {
    const connectorId = await post(25);
    expect(await run({ busy: false })).toEqual([]);
    expect(await statuses(connectorId)).toEqual(Array(25).fill('done'));
  });

  test('defers its work while webhooks arrive fast, and drains once the burst is over', async () => {
    const connectorId = await post(25);
    const seenWhileDeferred: string[][] = [];
    const burst = {
      busy: true,
      onPause: async () => {
        seenWhileDeferred.push(await statuses(connectorId));
        if (seenWhileDeferred.length === 3) burst.busy = false;
      },
    };
    const pauses = await run(burst);
    expect(pauses).toHaveLength(3);
    for (const ms of pauses) {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(1_000);
    }
    // Nothing was claimed while the burst lasted; everything was done after it.
    for (const seen of seenWhileDeferred) expect(seen).toEqual(Array(25).fill('pending'));
    expect(await statuses(connectorId)).toEqual(Array(25).fill('done'));
  });

  test('works at full speed during a burst once the oldest due event has waited too long', async () => {
    const connectorId = await post(25);
    await queryText(database.db, `update ticket_events set run_after = now() - make_interval(secs => $2) where connector_id = $1`, [
      connectorId,
      DEFER_AT_MOST_MS / 1000 + 1,
    ]);
    expect(await run({ busy: true })).toEqual([]);
    expect(await statuses(connectorId)).toEqual(Array(25).fill('done'));
  });
});

for (const backend of BACKENDS) {
  describe(`ticket loop, idle (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database.dispose());

    test('with nothing due it looks again when the next retry comes due, not at the end of its back-off', async () => {
      const { org } = await createOrgWithKey(database);
      const connector = await makeConnector(database, org.id);
      const app = buildApp(database, { config: testConfig({ secretKey: TEST_SECRET_KEY }) }).app;
      const res = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
        rawBody: JSON.stringify({ ticket: { id: 'R-1', subject: 'Hello' } }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(200);
      // As a failed attempt leaves it: pending, its back-off ending in 3 s.
      await queryText(database.db, `update ticket_events set run_after = now() + interval '3 seconds' where connector_id = $1`, [
        connector.id,
      ]);
      const waits: number[] = [];
      await runTicketLoop({
        units: localRunner(database.db, workerUnits, DEFAULT_SETTINGS),
        owner: 'idle-test',
        log: createLogger('silent'),
        pollMs: 10_000,
        isStopping: () => waits.length > 0,
        idle: async (ms) => void waits.push(ms),
      });
      expect(waits).toHaveLength(1);
      expect(waits[0]).toBeGreaterThan(0);
      expect(waits[0]).toBeLessThanOrEqual(3_000);
    });
  });
}

describe('ticket batches sized by time', () => {
  test('a batch that took long to apply makes the next smaller, down to 10; quick ones make them grow back, up to the most', () => {
    const sizer = createBatchSizer(250);
    expect(sizer.size()).toBe(50);
    sizer.applied(50, 500);
    expect(sizer.size()).toBe(10);
    sizer.applied(10, 400);
    expect(sizer.size()).toBe(10);
    const grown: number[] = [];
    for (let i = 0; i < 6; i++) {
      sizer.applied(sizer.size(), 1);
      grown.push(sizer.size());
    }
    expect(grown).toEqual([20, 40, 80, 160, 250, 250]);
  });

  test('a batch cut short by an empty queue leaves the size as it was', () => {
    const sizer = createBatchSizer(250);
    sizer.applied(3, 200);
    expect(sizer.size()).toBe(50);
  });
});
