// Set-wise upkeep a batch per unit (queue/batches.ts): however much is due, no unit takes more than
// its batch, and every item due is taken exactly once across the batches.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { idempotencyPurge } from '../../src/modules/idempotency/jobs/purge.ts';
import { sweepStaleJob } from '../../src/modules/predictions/jobs/sweep-stale.ts';
import { purgeFinishedJobs } from '../../src/queue/jobs/purge-finished.ts';
import { newId } from '../../src/lib/ids.ts';
import { createOrg } from '../../src/modules/orgs/service.ts';
import { BACKENDS, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';
import { runHandler } from '../helpers/jobs.ts';

for (const backend of BACKENDS) {
  describe(`upkeep in batches (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database.dispose());

    test('the stale sweep asks once for each organisation with marks, a few organisations per unit', async () => {
      const orgs: string[] = [];
      for (let i = 0; i < 12; i++) {
        const org = await createOrg(database.db, { name: uniqueName('sweep'), plan: 'growth_agents', actor: 'test' });
        orgs.push(org.id);
        // Customers written mark themselves stale (migration 0019): three marks per organisation.
        await queryText(
          database.db,
          `insert into customers (id, org_id, external_id, name, currency) select $1 || '_' || i, $1, 'ext-' || i, 'Customer ' || i, 'USD' from generate_series(1, 3) as i`,
          [org.id],
        );
      }
      const taken: number[] = [];
      const swept = await runHandler(
        database.db,
        sweepStaleJob,
        { batchSize: 5 },
        { orgId: null },
        { seen: (_unit, _args, result) => taken.push((result as { organisations: number }).organisations) },
      );
      expect(Math.max(...taken)).toBeLessThanOrEqual(5);
      expect(taken.length).toBeGreaterThanOrEqual(3);
      expect(swept.organisations).toBe(taken.reduce((a, b) => a + b, 0));
      const queued = await queryText<{ org_id: string; n: number }>(
        database.db,
        `select org_id, count(*)::int as n from jobs where kind = 'predictions.recompute-stale' and state = 'queued' and org_id = any($1::text[]) group by org_id order by org_id`,
        [orgs],
      );
      expect(queued).toEqual([...orgs].sort().map((org_id) => ({ org_id, n: 1 })));
    });

    test('the purge of finished jobs forgets every job due, a batch per unit, and keeps the others', async () => {
      const kind = `test.purge-${newId('job')}`;
      const insert = (state: string, daysAgo: number, n: number) =>
        queryText(
          database.db,
          `insert into jobs (id, kind, state, max_attempts, finished_at) select 'job_' || md5(random()::text), $1, $2, 3, now() - make_interval(days => $3) from generate_series(1, $4)`,
          [kind, state, daysAgo, n],
        );
      await insert('done', 8, 23);
      await insert('dead', 31, 6);
      await insert('dead', 10, 2);
      await insert('done', 1, 2);
      const taken: number[] = [];
      await runHandler(
        database.db,
        purgeFinishedJobs,
        { batchSize: 4 },
        { orgId: null },
        {
          seen: (_unit, _args, result) =>
            taken.push((result as { done: number; dead: number }).done + (result as { done: number; dead: number }).dead),
        },
      );
      expect(Math.max(...taken)).toBeLessThanOrEqual(4);
      expect(taken.length).toBeGreaterThanOrEqual(Math.ceil(29 / 4));
      const left = await queryText<{ state: string; n: number }>(
        database.db,
        `select state, count(*)::int as n from jobs where kind = $1 group by state order by state`,
        [kind],
      );
      expect(left).toEqual([
        { state: 'dead', n: 2 },
        { state: 'done', n: 2 },
      ]);
    });

    test('the purge of Idempotency-Key answers forgets every expired one, a batch per unit', async () => {
      const org = await createOrg(database.db, { name: uniqueName('idem'), plan: 'growth_agents', actor: 'test' });
      await queryText(
        database.db,
        `insert into idempotency_keys (org_id, key, fingerprint, response_status, response_body, created_at)
         select $1, 'old-' || i, 'f', 200, 'null', now() - interval '3 days' from generate_series(1, 17) as i
         union all select $1, 'new-' || i, 'f', 200, 'null', now() from generate_series(1, 2) as i`,
        [org.id],
      );
      const taken: number[] = [];
      await runHandler(
        database.db,
        idempotencyPurge,
        { batchSize: 5 },
        { orgId: null },
        { seen: (_unit, _args, result) => taken.push(result as number) },
      );
      expect(Math.max(...taken)).toBeLessThanOrEqual(5);
      expect(taken.length).toBeGreaterThanOrEqual(4);
      const left = await queryText<{ key: string }>(database.db, `select key from idempotency_keys where org_id = $1 order by key`, [
        org.id,
      ]);
      expect(left.map((r) => r.key)).toEqual(['new-1', 'new-2']);
    });
  });
}
