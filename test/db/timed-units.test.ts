// What a set-wise unit says it took (timed): on the embedded database the CPU it took on the thread
// every request shares, so a wait that holds no CPU (the machine's other processes running, here
// a timer) does not shrink the next unit; on PostgreSQL the wall time of its transaction.
import { afterAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { localRunner, timed } from '../../src/db/units-of-work.ts';
import type { Db } from '../../src/db/client.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

for (const backend of BACKENDS) {
  describe(`timed units (${backend})`, () => {
    let database: TestDatabase;
    afterAll(() => database?.dispose());

    test('a wait inside the unit counts on PostgreSQL and not on the embedded database', async () => {
      database = await openTestDatabase(backend);
      const runner = localRunner(
        database.db,
        {
          waits: timed(async (db: Db, _args: Record<string, never>) => {
            await db.execute(sql`select 1`);
            await Bun.sleep(300); // the subject: time that takes no CPU
            await db.execute(sql`select 1`);
            return { done: true };
          }),
        },
        DEFAULT_SETTINGS,
      );
      const result = await runner.run('waits', {});
      expect(result.done).toBe(true);
      if (backend === 'postgres') expect(result.ms).toBeGreaterThanOrEqual(290);
      else expect(result.ms).toBeLessThan(150);
    }, 120_000); // opening a database on a loaded machine
  });
}
