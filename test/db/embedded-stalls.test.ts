// DEBUG_STALLS: a stall of the main thread is reported with the work that held it — PostgreSQL's
// own time by the unit of work that asked for it, a marked stretch of our code, the rest.
import { afterAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { openEmbedded } from '../../src/db/client.ts';
import { timedWork, watchStalls, type Stall } from '../../src/db/embedded-stalls.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { tempDir } from '../helpers/harness.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** This thread's CPU time, in ms. */
const cpuMs = () => {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** Burns `ms` of this thread's CPU without yielding (however busy the machine is). */
const busy = (ms: number) => {
  const until = cpuMs() + ms;
  let n = 0;
  while (cpuMs() < until) n++;
  return n;
};

/** Waits (a turn of the loop at a time, to a deadline) until `stalls` holds one naming `what`. */
async function stallNaming(stalls: Stall[], what: string): Promise<Stall> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = stalls.find((stall) => stall.spent.some((part) => part.what === what));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no stall named ${what}: ${JSON.stringify(stalls)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('stalls of the main thread (DEBUG_STALLS)', () => {
  test('a marked stretch of code and a unit of work are named in the stall they cause', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const database = await openEmbedded(dir, 'serve');
    const stalls: Stall[] = [];
    const watch = watchStalls({ pglite: database.pglite!, report: (stall) => stalls.push(stall), thresholdMs: 40 });
    try {
      // Our own code, marked.
      timedWork('parse', () => busy(100));
      const parsed = await stallNaming(stalls, 'js parse');
      expect(parsed.lateMs).toBeGreaterThan(40);
      expect(parsed.spent.find((part) => part.what === 'js parse')!.ms).toBeGreaterThan(50);

      // PostgreSQL's time inside a unit is counted under the unit's name, and so is the unit's own
      // JavaScript; outside one, PostgreSQL's time is a request's.
      const count = sql`select count(*) from generate_series(1, 500000)`;
      const runner = localRunner(
        database.db,
        {
          'demo.count': async (db, _args: Record<string, never>) => {
            await db.execute(count);
            busy(60);
          },
        },
        DEFAULT_SETTINGS,
      );
      await runner.run('demo.count', {});
      await stallNaming(stalls, 'wasm demo.count');
      const unitCode = await stallNaming(stalls, 'js demo.count');
      expect(unitCode.spent.find((part) => part.what === 'js demo.count')!.ms).toBeGreaterThan(30);
      await database.db.execute(count);
      await stallNaming(stalls, 'wasm request');
    } finally {
      watch.stop();
      await database.close();
    }
  }, 120_000);
});
