// Asking for rescores again and again makes one queued job, on each backend: id lists asked for
// while one is queued join it (the union of their ids), a queued rescore of everyone answers them,
// a list past MERGED_CUSTOMERS_MAX becomes a rescore of everyone, and a running one takes no more.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { recomputePredictionsJob } from '../../src/modules/predictions/jobs/recompute.ts';
import { claimJobs } from '../../src/queue/job-queue.ts';
import { MERGED_CUSTOMERS_MAX } from '../../src/modules/predictions/requests.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`recompute requests (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    const orgs: string[] = [];
    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
    });
    afterAll(async () => {
      // Left queued or running, these would keep another file's drain of the kind waiting (PostgreSQL's test database is shared).
      if (database) await queryText(database.db, `delete from jobs where org_id = any($1::text[])`, [orgs]);
      await database?.dispose();
    });

    async function organisation() {
      const { org, secret: key } = await createOrgWithKey(database);
      orgs.push(org.id);
      const recompute = async (body: Record<string, unknown>) => {
        const res = await call(app, 'POST', '/api/cfo/predictions/recompute', { key, body });
        expect(res.status).toBe(202);
        return res.body.data.job_id as string;
      };
      const queued = () =>
        queryText<{ id: string; payload: { customerIds?: string[] } }>(
          database.db,
          `select id, payload from jobs where org_id = $1 and kind = $2 and state = 'queued'`,
          [org.id, recomputePredictionsJob.kind],
        );
      return { orgId: org.id, recompute, queued };
    }

    test('id lists asked for while one is queued make one job holding every id once', async () => {
      const { recompute, queued } = await organisation();
      const ids = [
        await recompute({ customer_ids: ['c1', 'c2'] }),
        await recompute({ customer_ids: ['c2', 'c3'] }),
        await recompute({ customer_ids: ['c4'] }),
      ];
      expect(new Set(ids).size).toBe(1);
      const jobs = await queued();
      expect(jobs.map((j) => j.id)).toEqual([ids[0]!]);
      expect(jobs[0]!.payload.customerIds!.sort()).toEqual(['c1', 'c2', 'c3', 'c4']);
    });

    test('a queued rescore of everyone answers a list asked for after it', async () => {
      const { recompute, queued } = await organisation();
      const whole = await recompute({});
      expect(await recompute({ customer_ids: ['c1'] })).toBe(whole);
      expect((await queued()).map((j) => j.payload)).toEqual([{}]);
    });

    test(`a queued list past ${MERGED_CUSTOMERS_MAX} customers becomes a rescore of everyone`, async () => {
      const { recompute, queued } = await organisation();
      const half = MERGED_CUSTOMERS_MAX / 2 + 1;
      const first = await recompute({ customer_ids: Array.from({ length: half }, (_, i) => `a${i}`) });
      expect(await recompute({ customer_ids: Array.from({ length: half }, (_, i) => `b${i}`) })).toBe(first);
      expect((await queued()).map((j) => j.payload)).toEqual([{}]);
    });

    test('a list asked for while the last one runs is a new job: the running one takes no more ids', async () => {
      const { orgId, recompute, queued } = await organisation();
      const first = await recompute({ customer_ids: ['c1'] });
      const { jobs } = await database.db.transaction((tx) =>
        claimJobs(tx as never, { owner: 'test', limit: 100, leaseSeconds: 60, kinds: [recomputePredictionsJob.kind], now: new Date() }),
      );
      expect(jobs.filter((j) => j.orgId === orgId).map((j) => j.id)).toEqual([first]);
      const second = await recompute({ customer_ids: ['c2'] });
      expect(second).not.toBe(first);
      expect((await queued()).map((j) => [j.id, j.payload.customerIds])).toEqual([[second, ['c2']]]);
    });
  });
}
