// A recompute in chunks on both backends: several chunks score what one does; a stale mark made
// between chunks survives when its customer's chunk had passed, and is answered when it had not;
// the job kinds run it a chunk per unit, and a job that dies mid-way converges when it runs again.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { recomputePredictionsJob } from '../../src/modules/predictions/jobs/recompute.ts';
import { recomputeStaleJob } from '../../src/modules/predictions/jobs/recompute-stale.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { recomputeInChunks, recomputePredictions, scoreChunk } from '../../src/modules/predictions/service.ts';
import { utcToday } from '../../src/lib/today.ts';
import { BACKENDS, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';
import { runHandler } from '../helpers/jobs.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';

const TODAY = utcToday();

for (const backend of BACKENDS) {
  describe(`a recompute in chunks (${backend})`, () => {
    let database: TestDatabase;
    let orgId: string;
    /** Every prediction of the organisation but when it was made. */
    const predictions = async () =>
      queryText<Record<string, unknown>>(
        database.db,
        `select customer_id, model_id, probability, base_logit, risk, arr, currency, renewal_date::text, drivers, data_completeness, missing_signals
         from predictions where org_id = $1 order by customer_id`,
        [orgId],
      );
    const marks = async () =>
      (
        await queryText<{ customer_id: string }>(
          database.db,
          `select customer_id from risk_input_changes where org_id = $1 order by customer_id`,
          [orgId],
        )
      ).map((m) => m.customer_id);
    let whole: Record<string, unknown>[];

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      const demo = await database.db.transaction((tx) =>
        loadDemo(
          tx as never,
          { orgName: uniqueName('chunks'), customers: 40, seed: 5, today: TODAY, actor: 'test' },
          DEFAULT_ACTION_SETTINGS,
        ),
      );
      orgId = demo.org.id;
      // A churned customer keeps a prediction until a recompute takes it away.
      await recomputePredictions(database.db, { orgId, today: TODAY });
      whole = await predictions();
    });
    afterAll(() => database?.dispose());

    test('several chunks score what one does, and answer every mark', async () => {
      expect(whole.length).toBeGreaterThan(10);
      await queryText(database.db, `update customers set status = 'churned', churned_at = $2 where id = $1`, [
        whole[3]!.customer_id,
        TODAY,
      ]);
      await queryText(database.db, `delete from predictions where org_id = $1 and customer_id = $2`, [orgId, whole[5]!.customer_id]);
      const one = await recomputePredictions(database.db, { orgId, today: TODAY, chunkSize: 1_000 });
      const expected = await predictions();
      expect(one.removed).toBe(1);
      expect(expected.length).toBe(whole.length - 1);
      await queryText(database.db, `update customers set status = 'active', churned_at = null where id = $1`, [whole[3]!.customer_id]);
      await queryText(database.db, `update customers set status = 'churned', churned_at = $2 where id = $1`, [
        whole[3]!.customer_id,
        TODAY,
      ]);
      const chunked = await recomputePredictions(database.db, { orgId, today: TODAY, chunkSize: 3 });
      expect(await predictions()).toEqual(expected);
      expect(chunked.scored).toBe(expected.length);
      expect(await marks()).toEqual([]);
      await queryText(database.db, `update customers set status = 'active', churned_at = null where id = $1`, [whole[3]!.customer_id]);
      await recomputePredictions(database.db, { orgId, today: TODAY, chunkSize: 7 });
      expect(await predictions()).toEqual(whole);
    });

    test('a mark made between chunks survives when its chunk had passed, and is answered when not', async () => {
      const ids = (await queryText<{ id: string }>(database.db, `select id from customers where org_id = $1 order by id`, [orgId])).map(
        (r) => r.id,
      );
      const first = await scoreChunk(database.db, { orgId, today: TODAY, scope: 'all', after: null, limit: 4 }, DEFAULT_SETTINGS);
      expect(first.next).toBe(ids[3]!);
      // Inputs change between the chunks: one customer of the chunk done, one of a chunk to come.
      await queryText(database.db, `update customers set name = name || ' (renamed)' where id = any($1::text[])`, [[ids[1], ids[20]]]);
      expect(await marks()).toEqual([ids[1]!, ids[20]!]);
      let after: string | null = first.next;
      while (after !== null)
        after = (await scoreChunk(database.db, { orgId, today: TODAY, scope: 'all', after, limit: 4 }, DEFAULT_SETTINGS)).next;
      expect(await marks()).toEqual([ids[1]!]);
      // The stale recompute, in chunks of one, answers it.
      await recomputePredictions(database.db, { orgId, today: TODAY, customerIds: 'stale', chunkSize: 1 });
      expect(await marks()).toEqual([]);
    });

    test('the job kinds score a chunk per unit; a job that dies mid-way converges when it runs again', async () => {
      await queryText(database.db, `update predictions set probability = 0.5, risk = 'critical' where org_id = $1`, [orgId]);
      await expect(runHandler(database.db, recomputePredictionsJob, { chunkSize: 5 }, { orgId }, { failAfter: 2 })).rejects.toThrow(
        'the worker died',
      );
      const changed = await predictions();
      expect(changed.filter((p) => p.risk === 'critical' && p.probability === 0.5).length).toBeGreaterThan(0);
      const again = await runHandler(database.db, recomputePredictionsJob, { chunkSize: 5 }, { orgId });
      expect(again.chunks).toBeGreaterThan(2);
      expect(await predictions()).toEqual(whole);
      // Stale marks, through the stale kind, in chunks of two.
      await queryText(database.db, `update customers set name = name || '.' where id = any($1::text[])`, [
        whole.slice(0, 5).map((p) => p.customer_id),
      ]);
      const stale = await runHandler(database.db, recomputeStaleJob, { chunkSize: 2 }, { orgId });
      expect(stale).toMatchObject({ scored: 5, chunks: 3 });
      expect(await marks()).toEqual([]);
      // Named customers.
      const named = await runHandler(
        database.db,
        recomputePredictionsJob,
        { customerIds: [whole[0]!.customer_id as string, 'cus_nobody'] },
        { orgId },
      );
      expect(named).toMatchObject({ scored: 1, removed: 0 });
    });

    test('without a chunk size, chunks are sized by the time the last took: slow ones shrink, and every customer is scored exactly once', async () => {
      await queryText(database.db, `update predictions set probability = 0.5, risk = 'critical' where org_id = $1`, [orgId]);
      const sizes: number[] = [];
      const seen: string[] = [];
      const result = await recomputeInChunks(
        async (args) => {
          sizes.push(args.limit);
          const chunk = await scoreChunk(database.db, args, DEFAULT_SETTINGS);
          const ids = await queryText<{ id: string }>(
            database.db,
            `select id from customers where org_id = $1 and id > $2 order by id limit $3`,
            [orgId, args.after ?? '', args.limit],
          );
          seen.push(...ids.map((r) => r.id));
          // A database this slow takes 2 ms a customer: 50 ms of it is 25 customers.
          await Bun.sleep(args.limit * 2);
          return chunk;
        },
        { orgId, today: TODAY, scope: 'all' },
      );
      expect(sizes[0]).toBeLessThanOrEqual(50);
      expect(sizes.slice(1).every((size) => size <= 25)).toBe(true);
      expect(result.chunks).toBeGreaterThan(1);
      const customers = await queryText<{ id: string }>(database.db, `select id from customers where org_id = $1 order by id`, [orgId]);
      expect(seen).toEqual(customers.map((c) => c.id));
      expect(await predictions()).toEqual(whole);
    });

    test('a job without an organisation is refused for good', async () => {
      await expect(runHandler(database.db, recomputePredictionsJob, {}, { orgId: null })).rejects.toThrow('needs an organisation');
    });
  });
}
