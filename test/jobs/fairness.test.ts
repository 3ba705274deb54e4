// One organisation's backlog does not hold up another's work, on each backend: with 50,000 jobs of
// organisation A queued first, organisation B's jobs are in the first claim, and through the job
// loop B's approval request reaches (a fake) Slack and its approved action is executed while A's
// backlog is still there. Structural, not timed: counted in claims. The seconds are the bench's
// (bun run bench:jobs).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { t } from 'elysia';
import { queryText, type Db } from '../../src/db/client.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { defineJobKind, type JobKind } from '../../src/queue/job-kind.ts';
import { runJobLoop } from '../../src/jobs/job-loop.ts';
import { jobUnits } from '../../src/queue/job-units.ts';
import { claimJobs, enqueueJob, settleJobs } from '../../src/queue/job-queue.ts';
import { newId, randomBase62 } from '../../src/lib/ids.ts';
import { createLogger } from '../../src/lib/log.ts';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { executeActionJob } from '../../src/modules/agent-actions/execute-job.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { createOrg } from '../../src/modules/orgs/service.ts';
import { chatAdminUnits } from '../../src/modules/chat/installations.ts';
import { chatSendJob } from '../../src/modules/chat/platforms.ts';
import { waitFor } from '../helpers/binary.ts';
import { fakeSlack } from '../helpers/fake-slack.ts';
import {
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  testConfig,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../helpers/harness.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

const BACKLOG = 50_000;
const SECRET_KEY = 'fairness-test-secret-key-0123456789abcdefgh';

/** A kind that does nothing: the backlog's jobs cost the queue's bookkeeping only. */
const cheapKind = () =>
  defineJobKind({ kind: `test.backlog.${randomBase62(8)}`, payload: t.Object({ n: t.Number() }), handle: async () => null });

/** An organisation's backlog, queued a minute ago (before anything else), in one statement. */
async function queueBacklog(db: Db, kind: JobKind, orgId: string, count = BACKLOG): Promise<void> {
  await queryText(
    db,
    `insert into jobs (id, kind, org_id, payload, max_attempts, run_at, created_at, updated_at)
     select 'job_' || md5($1 || $2 || g), $1, $2, jsonb_build_object('n', g), 8, now() - interval '1 minute', now() - interval '1 minute', now() - interval '1 minute'
     from generate_series(1, $3::int) g`,
    [kind.kind, orgId, count],
  );
}

const newOrg = async (db: Db) =>
  (
    await createOrg(db, {
      name: `fair-${randomBase62(8)}`,
      plan: 'enterprise',
      rateLimitPerMinute: null,
      rateLimitPerDay: null,
      actor: 'test',
    })
  ).id;

for (const backend of BACKENDS) {
  describe(`fair claiming (${backend})`, () => {
    let database: TestDatabase;
    const kinds: string[] = [];
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(async () => {
      // The backlog's leftovers would sit in PostgreSQL's test database for ever (no loop runs the kind).
      if (database) await queryText(database.db, `delete from jobs where kind = any($1::text[])`, [kinds]);
      await database?.dispose();
    });

    test("another organisation's jobs are in the first claim after one organisation queued 50,000", async () => {
      const backlog = cheapKind();
      const other = defineJobKind({ kind: `test.other.${randomBase62(8)}`, payload: t.Object({}), handle: async () => null });
      kinds.push(backlog.kind, other.kind);
      const [a, b] = [await newOrg(database.db), await newOrg(database.db)];
      await queueBacklog(database.db, backlog, a);
      const mine = [
        (await enqueueJob(database.db, other, {}, { orgId: b })).id,
        (await enqueueJob(database.db, other, {}, { orgId: b })).id,
      ];
      const claimedAt = new Map<string, number>();
      let after = '';
      for (let claim = 1; claim <= 3 && claimedAt.size < mine.length; claim++) {
        const { jobs, turn } = await database.db.transaction((tx) =>
          claimJobs(tx as never, { owner: 'fair', limit: 16, leaseSeconds: 60, kinds: [backlog.kind, other.kind], now: new Date(), after }),
        );
        after = turn;
        for (const job of jobs) if (mine.includes(job.id)) claimedAt.set(job.id, claim);
        await settleJobs(database.db, {
          owner: 'fair',
          outcomes: jobs.map((j) => ({ id: j.id, state: 'done' as const, result: null })),
          now: new Date(),
        });
      }
      expect(Object.fromEntries(mine.map((id) => [id, claimedAt.get(id) ?? 'not in 3 claims']))).toEqual(
        Object.fromEntries(mine.map((id) => [id, 1])),
      );
    });

    test('housekeeping (jobs of no organisation) takes its turn too: in the first claim after a backlog', async () => {
      const backlog = cheapKind();
      const housekeeping = defineJobKind({
        kind: `test.housekeeping.${randomBase62(8)}`,
        payload: t.Object({}),
        perform: async () => null,
      });
      kinds.push(backlog.kind, housekeeping.kind);
      await queueBacklog(database.db, backlog, await newOrg(database.db), 1_000);
      const { id } = await enqueueJob(database.db, housekeeping, {}, { orgId: null });
      const { jobs } = await database.db.transaction((tx) =>
        claimJobs(tx as never, { owner: 'fair', limit: 16, leaseSeconds: 60, kinds: [backlog.kind, housekeeping.kind], now: new Date() }),
      );
      expect(jobs.map((j) => j.id)).toContain(id);
    });

    test('with more organisations waiting than one claim takes, the next claim goes on where the last stopped: 20 served in two claims of 16', async () => {
      const backlog = cheapKind();
      kinds.push(backlog.kind);
      const orgs: string[] = [];
      for (let i = 0; i < 20; i++) {
        orgs.push(await newOrg(database.db));
        await queueBacklog(database.db, backlog, orgs.at(-1)!, 40);
      }
      const served = new Set<string>();
      let after = '';
      for (let claim = 0; claim < 2; claim++) {
        const { jobs, turn } = await database.db.transaction((tx) =>
          claimJobs(tx as never, { owner: 'fair', limit: 16, leaseSeconds: 60, kinds: [backlog.kind], now: new Date(), after }),
        );
        after = turn;
        for (const job of jobs) served.add(job.orgId!);
        await settleJobs(database.db, {
          owner: 'fair',
          outcomes: jobs.map((j) => ({ id: j.id, state: 'done' as const, result: null })),
          now: new Date(),
        });
      }
      expect(orgs.filter((org) => !served.has(org))).toEqual([]);
    });

    test("through the job loop, another organisation's approval reaches Slack and its approved action is executed before the backlog drains", async () => {
      const slack = fakeSlack();
      const settings = { ...DEFAULT_SETTINGS, actions: { ...DEFAULT_ACTION_SETTINGS, secretKey: SECRET_KEY, slackApiBase: slack.base } };
      let stop = false;
      try {
        const config = testConfig({
          databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
          secretKey: SECRET_KEY,
          slackApiBase: slack.base,
          allowInsecurePlatformUrls: true,
        });
        const { app } = buildApp(database, { config });
        const { org, secret: key } = await createOrgWithKey(database);
        const post = (path: string, body?: unknown) => call(app, 'POST', path, { key, body });
        const installation = newId('chi');
        const team = `T${randomBase62(10).toUpperCase()}`;
        await database.db.transaction((tx) =>
          chatAdminUnits['chat.add'](tx as never, {
            id: installation,
            org: org.id,
            platform: 'slack',
            externalId: team,
            credentialsSealed: sealSecret(`xoxb-test-${team}`, SECRET_KEY, installation),
            actor: 'test',
          }),
        );
        const ana = { email: `ana.${randomBase62(8).toLowerCase()}@vendor.example`, user: `U${randomBase62(10).toUpperCase()}` };
        slack.addUser(ana.email, ana.user);
        expect((await post('/api/csms', { email: ana.email, name: 'Ana', channels: ['slack'] })).status).toBe(201);

        // A's backlog first: in order of arrival, B's jobs would wait behind all of it.
        const backlog = cheapKind();
        kinds.push(backlog.kind);
        await queueBacklog(database.db, backlog, await newOrg(database.db));

        // B: an action routed to Ana on Slack (a chat.send job), another approved over the API (an actions.execute job).
        const customer = async (csm: Record<string, unknown> | undefined) =>
          (await post('/api/customers', { name: `Acme ${randomBase62(6)}`, currency: 'EUR', ...(csm ? { csm } : {}) })).body.data
            .id as string;
        const routed = (
          await post('/api/agent-actions', {
            customer_id: await customer({ email: ana.email }),
            type: 'check_in',
            params: { channel: 'call', due_in_days: 5 },
          })
        ).body.data.id;
        const approved = (
          await post('/api/agent-actions', {
            customer_id: await customer(undefined),
            type: 'check_in',
            params: { channel: 'meeting', due_in_days: 3 },
          })
        ).body.data.id;
        expect((await post(`/api/agent-actions/${approved}/approve`)).status).toBe(200);
        const bJobs = (
          await queryText<{ id: string }>(
            database.db,
            `select id from jobs where org_id = $1 and state = 'queued' and kind = any($2::text[])`,
            [org.id, [chatSendJob.kind, executeActionJob.kind]],
          )
        ).map((r) => r.id);
        expect(bJobs).toHaveLength(2);

        const loopKinds: JobKind[] = [backlog, executeActionJob, chatSendJob];
        const runner = localRunner(database.db, jobUnits(loopKinds), settings);
        let claims = 0;
        const claimedAt = new Map<string, number>();
        const loop = runJobLoop({
          settings,
          units: {
            run: (async (name: string, args: never) => {
              const result = await runner.run(name as never, args);
              if (name === 'jobs.claim') {
                claims++;
                for (const job of (result as { jobs: { id: string }[] }).jobs) if (bJobs.includes(job.id)) claimedAt.set(job.id, claims);
              }
              return result;
            }) as typeof runner.run,
          },
          kinds: loopKinds,
          owner: 'fair-loop',
          log: createLogger('silent'),
          // Before B's jobs are claimed, a few claims are enough to tell: no need to drain A's backlog.
          isStopping: () => stop || (claimedAt.size < bJobs.length && claims >= 20),
          idle: () => Bun.sleep(2),
          wake: () => {},
        });
        // A deadline only so that a failure ends; what is asserted is counted in claims and jobs.
        const reached = await waitFor(async () => {
          const sent = slack
            .callsOf('chat.postMessage')
            .some((c) => c.answered === 200 && JSON.stringify(c.body.blocks ?? []).includes(routed));
          const [action] = await queryText<{ status: string }>(database.db, `select status from agent_actions where id = $1`, [approved]);
          return (sent && action?.status === 'executed') || claims >= 20;
        }, 120_000);
        expect(reached).toBe(true);
        const [left] = await queryText<{ n: number }>(
          database.db,
          `select count(*)::int as n from jobs where kind = $1 and state = 'queued'`,
          [backlog.kind],
        );
        stop = true;
        await loop;
        expect(Object.fromEntries(bJobs.map((id) => [id, claimedAt.get(id) ?? 'not in 20 claims']))).toEqual(
          Object.fromEntries(bJobs.map((id) => [id, 1])),
        );
        expect(
          slack.callsOf('chat.postMessage').filter((c) => c.answered === 200 && JSON.stringify(c.body.blocks ?? []).includes(routed)),
        ).toHaveLength(1);
        expect((await call(app, 'GET', `/api/agent-actions/${approved}`, { key })).body.data.status).toBe('executed');
        // Most of A's backlog was still queued when B's work was done.
        expect(left!.n).toBeGreaterThan(BACKLOG / 2);
      } finally {
        stop = true;
        slack.stop();
      }
    });
  });
}
