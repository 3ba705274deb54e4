// The durable job queue on each backend: a job runs once however many workers claim, comes back
// after its worker is killed, retries after its back-off (an injected clock), is dead-lettered and
// retried, is deduplicated among queued jobs only; a schedule fires once across two processes; a
// debounced key runs once, N seconds after its first mark.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { t } from 'elysia';
import { queryText, type Db } from '../../src/db/client.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { defineJobKind, nextFiring, PermanentJobError, type JobKind } from '../../src/queue/job-kind.ts';
import { runJobLoop } from '../../src/jobs/job-loop.ts';
import { jobUnits } from '../../src/queue/job-units.ts';
import {
  claimJobs,
  enqueueJob,
  fireSchedules,
  InvalidJobPayloadError,
  jobsQueuedInStatement,
  markDebounced,
  recoverLeases,
  registerSchedules,
  retryDeadJobs,
  settleJobs,
  showJob,
} from '../../src/queue/job-queue.ts';
import { createLogger } from '../../src/lib/log.ts';
import { randomBase62 } from '../../src/lib/ids.ts';
import { connectPostgres } from '../../src/db/client.ts';
import { drainJobs } from '../helpers/jobs.ts';
import { BACKENDS, openTestDatabase, TEST_DATABASE_URL, tempDir, type TestDatabase } from '../helpers/harness.ts';
import { openEmbedded } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { rmSync } from 'node:fs';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

const CHILD = new URL('../helpers/job-child.ts', import.meta.url).pathname;
const unique = (label: string) => `test.${label}.${randomBase62(8)}`;

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2026-03-01T12:00:00Z')) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms), date: () => new Date(now) };
}

const jobRow = async (db: Db, id: string) => (await showJob(db, id))!;

for (const backend of BACKENDS) {
  describe(`job queue (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database?.dispose());

    test('enqueue checks the payload against the kind and names the field', async () => {
      const kind = defineJobKind({ kind: unique('typed'), payload: t.Object({ customerId: t.String() }), perform: async () => null });
      // The wrong payloads do not compile either; the check at run time is for callers TypeScript cannot see.
      // @ts-expect-error customerId is a string
      await expect(enqueueJob(database.db, kind, { customerId: 7 })).rejects.toThrow(/payload\.customerId/);
      // @ts-expect-error customerId is required
      await expect(enqueueJob(database.db, kind, {})).rejects.toBeInstanceOf(InvalidJobPayloadError);
      const made = await enqueueJob(database.db, kind, { customerId: 'cus_1' });
      expect(made.created).toBe(true);
      expect((await jobRow(database.db, made.id)).state).toBe('queued');
    });

    test("a job enqueued in the caller's transaction exists only if the transaction commits", async () => {
      const kind = defineJobKind({ kind: unique('tx'), payload: t.Object({}), perform: async () => null });
      let id = '';
      await database.db
        .transaction(async (tx) => {
          id = (await enqueueJob(tx as never, kind, {})).id;
          throw new Error('roll back');
        })
        .catch(() => {});
      expect(await showJob(database.db, id)).toBeNull();
    });

    test('two workers claiming at once run each job exactly once', async () => {
      const ran = new Map<string, number>();
      const kind = defineJobKind({
        kind: unique('once'),
        payload: t.Object({ n: t.Number() }),
        handle: async (payload: { n: number }) => {
          await Bun.sleep(2);
          ran.set(String(payload.n), (ran.get(String(payload.n)) ?? 0) + 1);
          return { n: payload.n };
        },
      });
      for (let n = 0; n < 60; n++) await enqueueJob(database.db, kind, { n });
      // On PostgreSQL each worker has its own connections, as two processes would.
      const second = backend === 'postgres' ? connectPostgres(TEST_DATABASE_URL!, 3) : null;
      try {
        await Promise.all([
          drainJobs(database.db, [kind], { owner: 'worker-a', concurrency: 4 }),
          drainJobs(second?.db ?? database.db, [kind], { owner: 'worker-b', concurrency: 4 }),
        ]);
      } finally {
        await second?.close();
      }
      expect(ran.size).toBe(60);
      expect([...ran.values()].every((times) => times === 1)).toBe(true);
      const states = await queryText<{ state: string; attempts: number; n: number }>(
        database.db,
        `select state, attempts, count(*)::int as n from jobs where kind = $1 group by 1, 2`,
        [kind.kind],
      );
      expect(states).toEqual([{ state: 'done', attempts: 1, n: 60 }]);
    });

    test('a failed job comes back after its back-off, by the injected clock, and not before', async () => {
      const clock = manualClock();
      let calls = 0;
      const kind = defineJobKind({
        kind: unique('backoff'),
        payload: t.Object({}),
        retry: { maxAttempts: 5, baseSeconds: 2, maxSeconds: 60 },
        handle: async () => {
          calls += 1;
          if (calls < 3) throw new Error(`flaky ${calls}`);
          return 'ok';
        },
      });
      const { id } = await enqueueJob(database.db, kind, {}, { now: clock.date() });
      const run = () => drainJobs(database.db, [kind], { clock: clock.now, random: () => 1 });
      await run();
      let row = await jobRow(database.db, id);
      // random() = 1: the whole ceiling, 2 s after the first failure, 4 s after the second.
      expect(row.state).toBe('queued');
      expect(row.attempts).toBe(1);
      expect(Date.parse(row.run_at) - clock.now()).toBe(2_000);
      expect(row.last_error).toContain('flaky 1');
      clock.advance(1_999);
      await run();
      expect(calls).toBe(1);
      clock.advance(1);
      await run();
      row = await jobRow(database.db, id);
      expect(calls).toBe(2);
      expect(Date.parse(row.run_at) - clock.now()).toBe(4_000);
      clock.advance(4_000);
      await run();
      row = await jobRow(database.db, id);
      expect(row).toMatchObject({ state: 'done', attempts: 3 });
      expect((await showJob(database.db, id))!.result).toBe('ok');
    });

    test('a job that keeps failing is dead after its last attempt, and a retry runs it again', async () => {
      const clock = manualClock();
      let healthy = false;
      const kind = defineJobKind({
        kind: unique('dead'),
        payload: t.Object({}),
        retry: { maxAttempts: 2, baseSeconds: 1, maxSeconds: 1 },
        handle: async () => {
          if (!healthy) throw new Error('the platform said no');
          return 'sent';
        },
      });
      const { id } = await enqueueJob(database.db, kind, {}, { now: clock.date() });
      await drainJobs(database.db, [kind], { clock: clock.now, random: () => 1 });
      clock.advance(1_000);
      await drainJobs(database.db, [kind], { clock: clock.now, random: () => 1 });
      let row = await jobRow(database.db, id);
      expect(row).toMatchObject({ state: 'dead', attempts: 2 });
      expect(row.last_error).toContain('the platform said no (attempt 2 of 2)');
      expect(row.finished_at).not.toBeNull();
      clock.advance(3_600_000);
      await drainJobs(database.db, [kind], { clock: clock.now });
      expect((await jobRow(database.db, id)).state).toBe('dead'); // nothing runs a dead job

      healthy = true;
      const retried = await database.db.transaction((tx) => retryDeadJobs(tx as never, { ids: [id], now: clock.date() }));
      expect(retried).toEqual({ retried: [id], skipped: [] });
      await drainJobs(database.db, [kind], { clock: clock.now });
      row = await jobRow(database.db, id);
      expect(row).toMatchObject({ state: 'done', attempts: 1 });
    });

    test('a permanent failure is dead at once; a perform that fails leaves none of its effects', async () => {
      const marker = `jobs-${randomBase62(8)}`;
      const permanent = defineJobKind({
        kind: unique('permanent'),
        payload: t.Object({}),
        handle: async () => {
          throw new PermanentJobError('the channel is archived');
        },
      });
      const halfway = defineJobKind({
        kind: unique('perform'),
        payload: t.Object({}),
        perform: async (db) => {
          await queryText(db, `insert into job_schedules (kind, cadence, next_run_at) values ($1, 'every 1s', now())`, [marker]);
          throw new Error('failed after writing');
        },
      });
      const a = await enqueueJob(database.db, permanent, {});
      const b = await enqueueJob(database.db, halfway, {});
      await drainJobs(database.db, [permanent, halfway]);
      expect(await jobRow(database.db, a.id)).toMatchObject({ state: 'dead', attempts: 1 });
      expect((await jobRow(database.db, a.id)).last_error).toContain('permanent');
      expect(await jobRow(database.db, b.id)).toMatchObject({ state: 'queued', attempts: 1 });
      expect(await queryText(database.db, `select 1 from job_schedules where kind = $1`, [marker])).toEqual([]);
    });

    test('a dedupe key is unique among queued jobs only: a running job does not swallow a new one', async () => {
      const kind = defineJobKind({ kind: unique('dedupe'), payload: t.Object({}), perform: async () => null });
      const first = await enqueueJob(database.db, kind, {}, { dedupeKey: 'cus_1', orgId: null });
      const again = await enqueueJob(database.db, kind, {}, { dedupeKey: 'cus_1' });
      expect(again).toEqual({ id: first.id, created: false });
      expect((await enqueueJob(database.db, kind, {}, { dedupeKey: 'cus_2' })).created).toBe(true);
      const { jobs: claimed } = await database.db.transaction((tx) =>
        claimJobs(tx as never, { owner: 'w', limit: 10, leaseSeconds: 60, kinds: [kind.kind], now: new Date() }),
      );
      expect(claimed.map((j) => j.id)).toContain(first.id);
      const during = await enqueueJob(database.db, kind, {}, { dedupeKey: 'cus_1' });
      expect(during.created).toBe(true);
      expect(during.id).not.toBe(first.id);
      // The running one fails and goes back to the queue beside its twin: it gives up its key.
      const settled = await settleJobs(database.db, {
        owner: 'w',
        outcomes: [{ id: first.id, state: 'queued', runAt: new Date().toISOString(), error: 'x' }],
        now: new Date(),
      });
      expect(settled).toEqual([first.id]);
      expect((await jobRow(database.db, first.id)).dedupe_key).toBeNull();
      expect((await jobRow(database.db, during.id)).dedupe_key).toBe('cus_1');
    });

    test("jobs queued by a part of the caller's statement: only the keys its condition keeps, none beside a queued twin, payloads checked", async () => {
      const kind = defineJobKind({ kind: unique('part'), payload: t.Object({ n: t.Integer() }), perform: async () => null });
      const part = jobsQueuedInStatement(kind, { firstParam: 2, only: 'j.dedupe_key = any($1::text[])' });
      const statement = `with queued as (${part.text}) select dedupe_key from queued order by 1`;
      const twin = await enqueueJob(database.db, kind, { n: 0 }, { dedupeKey: 'k_twin' });
      const jobs = ['k_kept', 'k_left', 'k_twin'].map((dedupeKey, n) => ({ payload: { n }, orgId: null, dedupeKey }));
      const queued = await queryText<{ dedupe_key: string }>(database.db, statement, [['k_kept', 'k_twin'], ...part.params(jobs)]);
      expect(queued).toEqual([{ dedupe_key: 'k_kept' }]);
      const rows = await queryText<{ id: string; dedupe_key: string; payload: unknown; state: string }>(
        database.db,
        'select id, dedupe_key, payload, state from jobs where kind = $1 order by dedupe_key',
        [kind.kind],
      );
      expect(rows).toMatchObject([
        { dedupe_key: 'k_kept', payload: { n: 0 }, state: 'queued' },
        { id: twin.id, dedupe_key: 'k_twin', payload: { n: 0 }, state: 'queued' },
      ]);
      // @ts-expect-error n is an integer
      expect(() => part.params([{ payload: { n: 'one' }, orgId: null, dedupeKey: 'k' }])).toThrow(InvalidJobPayloadError);
    });

    test('a debounced key runs once, N seconds after its first mark, however many marks follow', async () => {
      const clock = manualClock();
      const runs: number[] = [];
      const kind = defineJobKind({
        kind: unique('debounce'),
        payload: t.Object({}),
        handle: async () => {
          runs.push(clock.now());
          return null;
        },
      });
      const start = clock.now();
      const first = await markDebounced(database.db, kind, 'org-recompute', 10, { now: clock.date() });
      for (let i = 0; i < 9; i++) {
        clock.advance(1_000);
        expect((await markDebounced(database.db, kind, 'org-recompute', 10, { now: clock.date() })).id).toBe(first.id);
        await drainJobs(database.db, [kind], { clock: clock.now });
      }
      expect(runs).toEqual([]);
      clock.advance(1_000); // 10 s after the first mark: marks kept coming, it runs anyway
      await drainJobs(database.db, [kind], { clock: clock.now });
      expect(runs).toEqual([start + 10_000]);
      const next = await markDebounced(database.db, kind, 'org-recompute', 10, { now: clock.date() });
      expect(next.created).toBe(true);
      expect(Date.parse((await jobRow(database.db, next.id)).run_at)).toBe(clock.now() + 10_000);
    });

    test('a loop claims only the kinds it runs, whatever else its units know', async () => {
      const mine = defineJobKind({ kind: unique('mine'), payload: t.Object({}), perform: async () => 'ran' });
      const theirs = defineJobKind({ kind: unique('theirs'), payload: t.Object({}), perform: async () => 'ran' });
      const a = await enqueueJob(database.db, mine, {});
      const b = await enqueueJob(database.db, theirs, {});
      let stop = false;
      await runJobLoop({
        settings: DEFAULT_SETTINGS,
        units: localRunner(database.db, jobUnits([mine, theirs]), DEFAULT_SETTINGS),
        kinds: [mine],
        owner: 'subset',
        log: createLogger('silent'),
        isStopping: () => stop,
        idle: async () => void (stop = true),
        wake: () => {},
      });
      expect((await jobRow(database.db, a.id)).state).toBe('done');
      expect((await jobRow(database.db, b.id)).state).toBe('queued');
    });

    test('an idle loop with no schedules waits its poll interval between claims', async () => {
      const kind = defineJobKind({ kind: unique('idle'), payload: t.Object({}), perform: async () => null });
      const runner = localRunner(database.db, jobUnits([kind]), DEFAULT_SETTINGS);
      const waits: number[] = [];
      let claims = 0;
      await runJobLoop({
        settings: DEFAULT_SETTINGS,
        units: {
          run: ((name: string, args: never) => (name === 'jobs.claim' && claims++, runner.run(name as never, args))) as typeof runner.run,
        },
        kinds: [kind],
        owner: 'idle',
        log: createLogger('silent'),
        isStopping: () => waits.length >= 3,
        idle: async (ms) => void waits.push(ms),
        wake: () => {},
        pollMs: 250,
      });
      expect(claims).toBe(3);
      expect(waits).toEqual([250, 250, 250]);
    });

    test("a due schedule fires in the claim's transaction, and that claim takes its run", async () => {
      const clock = manualClock();
      const ran: string[] = [];
      const kind = defineJobKind({
        kind: unique('hourly'),
        payload: t.Object({}),
        schedule: { everySeconds: 3_600 },
        perform: async () => {
          ran.push('ran');
          return null;
        },
      });
      const runner = localRunner(database.db, jobUnits([kind]), DEFAULT_SETTINGS);
      const units: string[] = [];
      await runJobLoop({
        settings: DEFAULT_SETTINGS,
        units: { run: ((name: string, args: never) => (units.push(name), runner.run(name as never, args))) as typeof runner.run },
        kinds: [kind],
        owner: 'fire',
        log: createLogger('silent'),
        clock: clock.now,
        isStopping: () => units.includes('jobs.perform') || units.length > 10,
        // Each wait lasts until the next firing.
        idle: async () => void clock.advance(3_600_000),
        wake: () => {},
      });
      expect(units.slice(0, 4)).toEqual(['jobs.register-schedules', 'jobs.claim', 'jobs.claim', 'jobs.perform']);
      expect(ran).toEqual(['ran']);
    });

    /** Runs `kinds` until the loop has waited `waits` times (50 ms each, whatever it asked), counting
     * the wake-ups its finished jobs gave it. */
    const wakesOf = async (kinds: JobKind[], waits: number) => {
      let wakes = 0;
      let waited = 0;
      await runJobLoop({
        settings: DEFAULT_SETTINGS,
        units: localRunner(database.db, jobUnits(kinds), DEFAULT_SETTINGS),
        kinds,
        owner: 'wakes',
        log: createLogger('silent'),
        isStopping: () => waited >= waits,
        idle: async () => {
          waited++;
          await Bun.sleep(50);
        },
        wake: () => void wakes++,
      });
      return wakes;
    };

    test('a finished job with nothing else due does not wake its loop (no claim before its next look)', async () => {
      const kind = defineJobKind({ kind: unique('quiet'), payload: t.Object({}), perform: async () => null });
      const { id } = await enqueueJob(database.db, kind, {});
      expect(await wakesOf([kind], 2)).toBe(0);
      expect((await jobRow(database.db, id)).state).toBe('done');
    });

    test('a finished job that queued a follow-up due now wakes its loop, which runs it', async () => {
      const followUp = defineJobKind({ kind: unique('follow-up'), payload: t.Object({}), perform: async () => null });
      const first = defineJobKind({
        kind: unique('first'),
        payload: t.Object({}),
        perform: async (db) => (await enqueueJob(db, followUp, {})).id,
      });
      const { id } = await enqueueJob(database.db, first, {});
      expect(await wakesOf([first, followUp], 3)).toBe(1);
      const followUpId = (await jobRow(database.db, id)).result as string;
      expect((await jobRow(database.db, followUpId)).state).toBe('done');
    });

    test('an idle loop looks again when a queued job comes due, not at the end of its back-off', async () => {
      const clock = manualClock();
      const ran: number[] = [];
      const kind = defineJobKind({
        kind: unique('due'),
        payload: t.Object({}),
        perform: async () => {
          ran.push(clock.now());
          return null;
        },
      });
      const start = clock.now();
      await markDebounced(database.db, kind, 'soon', 4, { now: clock.date() });
      const waits: number[] = [];
      await runJobLoop({
        settings: DEFAULT_SETTINGS,
        units: localRunner(database.db, jobUnits([kind]), DEFAULT_SETTINGS),
        kinds: [kind],
        owner: 'due',
        log: createLogger('silent'),
        clock: clock.now,
        isStopping: () => ran.length > 0 || waits.length >= 10,
        idle: async (ms) => {
          waits.push(ms);
          clock.advance(ms);
        },
        wake: () => {},
        pollMs: 1_000,
        idleMaxMs: 5_000,
      });
      // The back-off alone would wait 1, 2, then 4 s and claim it 3 s late; it is claimed at 4 s
      // (the loop's clock then moves on by its poll while the job runs).
      expect(waits.slice(0, 3)).toEqual([1_000, 2_000, 1_000]);
      expect(ran).toHaveLength(1);
      expect(ran[0]).toBeGreaterThanOrEqual(start + 4_000);
    });

    test('a lease taken back is no longer its old owner to settle', async () => {
      const kind = defineJobKind({ kind: unique('lease'), payload: t.Object({}), perform: async () => null });
      const { id } = await enqueueJob(database.db, kind, {});
      const now = new Date();
      await database.db.transaction((tx) => claimJobs(tx as never, { owner: 'slow', limit: 1, leaseSeconds: 1, kinds: [kind.kind], now }));
      const later = new Date(now.getTime() + 2_000);
      const recovered = await database.db.transaction((tx) => recoverLeases(tx as never, { now: later }));
      expect(recovered.requeued).toBeGreaterThanOrEqual(1);
      expect(await settleJobs(database.db, { owner: 'slow', outcomes: [{ id, state: 'done', result: null }], now: later })).toEqual([]);
      expect((await jobRow(database.db, id)).state).toBe('queued');
    });

    test('a job whose worker is killed with SIGKILL is taken back and run again', async () => {
      const ran: string[] = [];
      const kind = defineJobKind({
        kind: unique('killed'),
        payload: t.Object({}),
        handle: async (_payload, ctx) => {
          ran.push(ctx.job.id);
          return null;
        },
      });
      // The embedded database has one owner at a time: the test closes its own to let the child in.
      let db = database.db;
      let dir: string | null = null;
      let own: Awaited<ReturnType<typeof openEmbedded>> | null = null;
      if (backend === 'embedded') {
        dir = tempDir();
        own = await openEmbedded(dir, 'test');
        await runMigrations(own, null);
        db = own.db;
      }
      const { id } = await enqueueJob(db, kind, {});
      await own?.close();
      const child = Bun.spawn(['bun', CHILD, 'claim', dir ?? TEST_DATABASE_URL!, kind.kind, 'doomed-worker', '2'], {
        stdout: 'pipe',
        stderr: 'inherit',
      });
      const reader = child.stdout.getReader();
      let said = '';
      while (!said.includes('\n')) said += new TextDecoder().decode((await reader.read()).value);
      expect(said).toContain(id);
      child.kill('SIGKILL');
      await child.exited;
      try {
        if (backend === 'embedded') {
          own = await openEmbedded(dir!, 'test');
          db = own.db;
          expect((await jobRow(db, id)).state).toBe('running');
          // What the worker does when the embedded database's owner starts.
          await db.transaction((tx) => recoverLeases(tx as never, { now: new Date(), all: true }));
        } else {
          expect((await jobRow(db, id)).state).toBe('running');
          await Bun.sleep(2_100); // the dead worker's lease runs out
          await db.transaction((tx) => recoverLeases(tx as never, { now: new Date() }));
        }
        const row = await jobRow(db, id);
        expect(row.state).toBe('queued');
        expect(row.last_error).toContain('lease taken back');
        await drainJobs(db, [kind]);
        expect(ran).toEqual([id]);
        expect(await jobRow(db, id)).toMatchObject({ state: 'done', attempts: 2 });
      } finally {
        await own?.close();
        if (dir) rmSync(dir, { recursive: true, force: true });
      }
    });

    test('a schedule fires once per slot and says when it fires next', async () => {
      const clock = manualClock(Date.parse('2026-03-01T12:00:07Z'));
      const ran: number[] = [];
      const kind = defineJobKind({
        kind: unique('every10'),
        payload: t.Object({}),
        schedule: { everySeconds: 10 },
        handle: async () => {
          ran.push(clock.now());
          return null;
        },
      });
      await drainJobs(database.db, [kind], { clock: clock.now }); // registers: first firing at 12:00:10
      expect(ran).toEqual([]);
      clock.advance(3_000);
      await drainJobs(database.db, [kind], { clock: clock.now });
      await drainJobs(database.db, [kind], { clock: clock.now }); // the same slot again: nothing more
      expect(ran).toEqual([Date.parse('2026-03-01T12:00:10Z')]);
      const [row] = await queryText<{ next: string }>(database.db, `select next_run_at::text as next from job_schedules where kind = $1`, [
        kind.kind,
      ]);
      expect(Date.parse(row!.next.replace(' ', 'T').replace(/\+00$/, 'Z'))).toBe(Date.parse('2026-03-01T12:00:20Z'));
    });
  });
}

describe('job schedules', () => {
  test('daily and every-N firings fall on UTC slots', () => {
    expect(nextFiring({ dailyAt: '03:30' }, new Date('2026-03-01T02:00:00Z')).toISOString()).toBe('2026-03-01T03:30:00.000Z');
    expect(nextFiring({ dailyAt: '03:30' }, new Date('2026-03-01T03:30:00Z')).toISOString()).toBe('2026-03-02T03:30:00.000Z');
    expect(nextFiring({ everySeconds: 600 }, new Date('2026-03-01T02:05:00Z')).toISOString()).toBe('2026-03-01T02:10:00.000Z');
    expect(() => nextFiring({ dailyAt: '25:00' }, new Date())).toThrow(/HH:MM/);
  });

  test.if(!!TEST_DATABASE_URL)('a schedule fires once across two processes racing for it (PostgreSQL)', async () => {
    const database = connectPostgres(TEST_DATABASE_URL!, 2);
    try {
      const kind = unique('race');
      const now = new Date();
      await registerSchedules(database.db, {
        schedules: [{ kind, schedule: { everySeconds: 3600 }, maxAttempts: 3 }],
        now: new Date(now.getTime() - 7_200_000),
      });
      const children = [0, 1].map(() =>
        Bun.spawn(['bun', CHILD, 'fire', TEST_DATABASE_URL!, kind, '3600', now.toISOString(), '30'], { stdout: 'pipe', stderr: 'inherit' }),
      );
      const said = await Promise.all(children.map(async (c) => (await new Response(c.stdout).text()).trim()));
      const fired = said.map((line) => Number(/fired (\d+)/.exec(line)![1]));
      expect(fired.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await queryText(database.db, `select state from jobs where kind = $1`, [kind])).toEqual([{ state: 'queued' }]);
      // And the same within one process, firing concurrently on separate connections.
      const again = await Promise.all(
        [0, 1, 2, 3].map(() =>
          database.db.transaction((tx) =>
            fireSchedules(tx as never, { schedules: [{ kind, schedule: { everySeconds: 3600 }, maxAttempts: 3 }], now }),
          ),
        ),
      );
      expect(again.flatMap((r) => r.fired)).toEqual([]);
    } finally {
      await database.close();
    }
  });
});
