// Background units on the embedded database take turns with requests (src/db/turns.ts): a request
// arriving while units are queued is answered between two of them, not after the last.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { localRunner, type UnitRunner } from '../../src/db/units-of-work.ts';
import { createBackgroundTurns } from '../../src/db/turns.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import type { Db } from '../../src/db/client.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

// A unit that holds the engine (and on PGlite the thread) for 40 ms.
const units = { hold: async (db: Db, _args: { n: number }) => void (await db.execute(sql`select pg_sleep(0.04)`)) };

/** Queues `count` units at once and, once the first has started, asks a server on this thread;
 * answers how many units had ended when the request was answered. */
async function unitsEndedBeforeAnswer(runner: UnitRunner<typeof units>, count: number): Promise<number> {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('ok') });
  try {
    let ended = 0;
    const done = Array.from({ length: count }, (_, n) => runner.run('hold', { n }).then(() => void (ended += 1)));
    await Bun.sleep(5); // the first unit is running (the rest wait on the engine's lock or their turn)
    const answered = fetch(`http://127.0.0.1:${server.port}/`).then(() => ended);
    const result = await answered;
    await Promise.all(done);
    return result;
  } finally {
    server.stop(true);
  }
}

describe('background turns on the embedded database', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase('embedded');
  });
  afterAll(() => database.dispose());

  test('a request is answered between queued units, not after the last', async () => {
    const turns = createBackgroundTurns();
    // The client is on this thread too: connecting, sending, answering and reading take a few turns
    // of the event loop, one unit each at most (3 seen here; all 8 without turns).
    expect(await unitsEndedBeforeAnswer(turns.inTurn(localRunner(database.db, units, DEFAULT_SETTINGS)), 8)).toBeLessThanOrEqual(4);
  });

  test('without turns the queued units run back to back ahead of the request (what turns prevent)', async () => {
    expect(await unitsEndedBeforeAnswer(localRunner(database.db, units, DEFAULT_SETTINGS), 8)).toBe(8);
  });

  test('a queued unit waits for the request in flight to end', async () => {
    const turns = createBackgroundTurns({ maxWaitMs: 60_000 });
    turns.requestStarted();
    let ran = false;
    const unit = turns
      .inTurn(localRunner(database.db, units, DEFAULT_SETTINGS))
      .run('hold', { n: 0 })
      .then(() => (ran = true));
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toBe(false);
    turns.requestEnded();
    await unit;
    expect(ran).toBe(true);
    expect(turns.waiting()).toBe(0);
  });

  test('a request that never ends delays a unit by maxWaitMs only', async () => {
    const turns = createBackgroundTurns({ maxWaitMs: 20 });
    turns.requestStarted();
    await turns.inTurn(localRunner(database.db, units, DEFAULT_SETTINGS)).run('hold', { n: 0 });
    expect(turns.waiting()).toBe(0);
  });

  test('sources take turns: a unit from the CLI runs after at most one of the queue the job loop has waiting', async () => {
    const turns = createBackgroundTurns();
    const order: string[] = [];
    const traced = (label: string) => ({
      ...units,
      hold: async (db: Db, args: { n: number }) => (await units.hold(db, args), void order.push(`${label}${args.n}`)),
    });
    const jobs = turns.inTurn(localRunner(database.db, traced('job'), DEFAULT_SETTINGS));
    const cli = turns.inTurn(localRunner(database.db, traced('cli'), DEFAULT_SETTINGS));
    const queued = Array.from({ length: 5 }, (_, n) => jobs.run('hold', { n }));
    await cli.run('hold', { n: 0 });
    await Promise.all(queued);
    expect(order.indexOf('cli0')).toBeLessThanOrEqual(1);
    expect(order).toHaveLength(6);
  });

  test('a failing unit does not stop the ones behind it', async () => {
    const turns = createBackgroundTurns();
    const runner = turns.inTurn(
      localRunner(database.db, { ...units, fail: async () => Promise.reject(new Error('no')) }, DEFAULT_SETTINGS),
    );
    const failed = runner.run('fail', {} as never);
    const next = runner.run('hold', { n: 1 });
    await expect(failed).rejects.toThrow('no');
    await next;
    expect(turns.waiting()).toBe(0);
  });
});
