// bun run bench:jobs [-- --quick] — the job queue's throughput beside the ticket queue's, measured
// in the same run on the same database.
//
// Each round, on each backend (embedded PGlite in a temp dir; PostgreSQL too with --database-url or
// TEST_DATABASE_URL), one loop in this process, units run in-process (as the worker thread runs them
// on PostgreSQL; on the embedded database the thread's units cross to the main thread, the same for
// both queues):
//   tickets   --count pending ticket events (about 1 KB of text each, as the webhook stores them),
//             drained by the ticket loop (claim 250, read and score, apply in one transaction);
//   handle    --count jobs of a no-op `handle` kind, drained by the job loop (16 at a time, outcomes
//             group-committed);
//   perform   --count jobs of a no-op `perform` kind (each its own transaction with its "done").
// Figures: items/s from the first claim to the last outcome, median over --rounds; ratio = jobs/s ÷
// ticket events/s of the same round. A ticket event costs more work (parsing, scoring, an upsert)
// than a no-op job, so the ratio says how much of a job's cost is the queue's own bookkeeping.
//
// Fairness (--only fairness, or after the above): organisation A's --backlog no-op jobs queued,
// then organisation B's two (no-op kinds standing in for an action execution and a chat post: what
// is measured is the queue's order, not their work); B's delay is from its enqueue until both are
// done, the loop working A's backlog meanwhile; claim = the median claim unit's time with the
// backlog queued. Median over --rounds.
//
// Options: --quick (1 round of 1,000), --count N (default 5000), --rounds N (default 3),
//          --backlog N (default 50,000), --only throughput|fairness,
//          --database-url URL (PostgreSQL; default TEST_DATABASE_URL, else embedded only).
import { parseArgs } from 'node:util';
import { t } from 'elysia';
import { connectPostgres, openEmbedded, queryText, type Database } from '../src/db/client.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { localRunner } from '../src/db/units-of-work.ts';
import { defineJobKind, type JobKind } from '../src/queue/job-kind.ts';
import { runJobLoop } from '../src/jobs/job-loop.ts';
import { jobUnits } from '../src/queue/job-units.ts';
import { runTicketLoop } from '../src/modules/tickets/queue/loop.ts';
import { workerUnits } from '../src/jobs/worker-units.ts';
import { createWaker, type Waker } from '../src/lib/waker.ts';
import { createLogger } from '../src/lib/log.ts';
import { newConnectorId, newId, randomBase62 } from '../src/lib/ids.ts';
import { createOrg } from '../src/modules/orgs/service.ts';
import { createConnector } from '../src/modules/tickets/connectors/service.ts';
import { enqueueJob } from '../src/queue/job-queue.ts';
import { fmtInt, fmtRatio, fmtSeconds, makeTempDir, median, positiveOption, printHeaderAndExit, removeTempDir, table } from './lib.ts';
import { DEFAULT_SETTINGS } from '../src/settings.ts';

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    quick: { type: 'boolean', default: false },
    count: { type: 'string' },
    rounds: { type: 'string' },
    'database-url': { type: 'string' },
    concurrency: { type: 'string' },
    backlog: { type: 'string' },
    only: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) await printHeaderAndExit(import.meta.path);
const count = positiveOption(opts.count, opts.quick ? 1_000 : 5_000);
const rounds = positiveOption(opts.rounds, opts.quick ? 1 : 3);
const concurrency = opts.concurrency ? positiveOption(opts.concurrency, 8) : undefined;
const backlog = positiveOption(opts.backlog, 50_000);
const scenarios = opts.only ? [opts.only] : ['throughput', 'fairness'];
const databaseUrl = opts['database-url'] ?? process.env.TEST_DATABASE_URL ?? null;
const log = createLogger('silent');

const SENTENCE = 'The export keeps failing with a timeout and our finance team cannot close the month; we are considering other options. ';
const ticketBody = (n: number) =>
  JSON.stringify({
    ticket: { id: `J-${n}`, subject: 'Export fails', description: SENTENCE.repeat(8), requester_email: `user${n % 500}@example.com` },
  });

/** Runs `loop` with a real waker (as the worker thread does) until `left()`, asked every 20 ms,
 * says nothing is left; returns items per second. */
async function timed(
  n: number,
  loop: (isStopping: () => boolean, waker: Waker) => Promise<void>,
  left: () => Promise<number>,
): Promise<number> {
  let stop = false;
  const waker = createWaker();
  const started = performance.now();
  const watcher = (async () => {
    while ((await left()) > 0) await Bun.sleep(20);
    stop = true;
    waker.stop();
  })();
  await loop(() => stop, waker);
  await watcher;
  return n / ((performance.now() - started) / 1000);
}

async function round(database: Database): Promise<{ tickets: number; handle: number; perform: number }> {
  const { db } = database;
  const org = await createOrg(db, {
    name: `bench-jobs-${randomBase62(8)}`,
    plan: 'enterprise',
    rateLimitPerMinute: null,
    rateLimitPerDay: null,
    actor: 'bench',
  });
  const connector = await createConnector(db, {
    id: newConnectorId(),
    org: org.id,
    name: 'Bench desk',
    platform: 'generic',
    secretSealed: null,
    tokenHash: null,
    actor: 'bench',
  });
  for (let i = 0; i < count; i += 500) {
    const rows = Array.from({ length: Math.min(500, count - i) }, (_, k) => [newId('evt'), ticketBody(i + k)]);
    await queryText(
      db,
      `insert into ticket_events (id, org_id, connector_id, source, body) select id, $1, $2, 'webhook', body from unnest($3::text[], $4::text[]) as x(id, body)`,
      [org.id, connector.id, rows.map((r) => r[0]), rows.map((r) => r[1])],
    );
  }
  const ticketUnits = localRunner(db, workerUnits, DEFAULT_SETTINGS);
  const pendingEvents = async () =>
    (
      await queryText<{ n: number }>(db, `select count(*)::int as n from ticket_events where connector_id = $1 and status <> 'done'`, [
        connector.id,
      ])
    )[0]!.n;
  const tickets = await timed(
    count,
    (isStopping, waker) => runTicketLoop({ units: ticketUnits, owner: 'bench', log, isStopping, idle: waker.idle }),
    pendingEvents,
  );

  const figures: Record<'handle' | 'perform', number> = { handle: 0, perform: 0 };
  for (const shape of ['handle', 'perform'] as const) {
    const name = `bench.noop.${shape}.${randomBase62(6)}`;
    const kind: JobKind =
      shape === 'handle'
        ? defineJobKind({ kind: name, payload: t.Object({ n: t.Number() }), handle: async () => null })
        : defineJobKind({ kind: name, payload: t.Object({ n: t.Number() }), perform: async () => null });
    await queryText(
      db,
      `insert into jobs (id, kind, payload, max_attempts) select 'job_' || md5(random()::text), $1, jsonb_build_object('n', g), 8 from generate_series(1, $2::int) g`,
      [name, count],
    );
    const units = localRunner(db, jobUnits([kind]), DEFAULT_SETTINGS);
    const open = async () =>
      (await queryText<{ n: number }>(db, `select count(*)::int as n from jobs where kind = $1 and state <> 'done'`, [name]))[0]!.n;
    figures[shape] = await timed(
      count,
      (isStopping, waker) =>
        runJobLoop({
          settings: DEFAULT_SETTINGS,
          units,
          kinds: [kind],
          owner: 'bench',
          log,
          isStopping,
          idle: waker.idle,
          wake: waker.wake,
          concurrency,
        }),
      open,
    );
  }
  return { tickets, ...figures };
}

/** One fairness round: B's delay behind A's backlog, and the claim unit's median time meanwhile. */
async function fairnessRound(database: Database): Promise<{ delayMs: number; claimMs: number }> {
  const { db } = database;
  const newOrg = async (name: string) =>
    (
      await createOrg(db, {
        name: `bench-fair-${name}-${randomBase62(8)}`,
        plan: 'enterprise',
        rateLimitPerMinute: null,
        rateLimitPerDay: null,
        actor: 'bench',
      })
    ).id;
  const [a, b] = [await newOrg('a'), await newOrg('b')];
  const noop = (name: string) =>
    defineJobKind({ kind: `bench.fair.${name}.${randomBase62(6)}`, payload: t.Object({}), handle: async () => null });
  const [backlogKind, execute, post] = [noop('backlog'), noop('execute'), noop('post')];
  // Queued a minute ago: before B's, whatever the two clocks (the database's, this process's).
  await queryText(
    db,
    `insert into jobs (id, kind, org_id, payload, max_attempts, run_at) select 'job_' || md5(random()::text || g), $1, $2, '{}', 8, now() - interval '1 minute' from generate_series(1, $3::int) g`,
    [backlogKind.kind, a, backlog],
  );
  const kinds = [backlogKind, execute, post];
  const runner = localRunner(db, jobUnits(kinds), DEFAULT_SETTINGS);
  const claimMs: number[] = [];
  // B's jobs are enqueued right after the loop's third claim and their outcomes watched as they are
  // recorded, inside the loop's own units: on the embedded database, in-process units can keep a
  // busy loop from ever yielding to a timer, so an observer polling beside it would see nothing
  // until A's backlog had drained.
  let enqueuedAt = 0;
  let doneAt = 0;
  const bJobs = new Set<string>();
  const units = {
    run: (async (name: string, args: never) => {
      const started = performance.now();
      const result = await runner.run(name as never, args);
      if (name === 'jobs.claim') {
        claimMs.push(performance.now() - started);
        if (claimMs.length === 3) {
          await database.db.transaction(async (tx) => {
            bJobs.add((await enqueueJob(tx as never, execute, {}, { orgId: b })).id);
            bJobs.add((await enqueueJob(tx as never, post, {}, { orgId: b })).id);
          });
          enqueuedAt = performance.now();
        }
      }
      if (name === 'jobs.settle') {
        for (const outcome of (args as { outcomes: { id: string }[] }).outcomes) bJobs.delete(outcome.id);
        if (enqueuedAt && bJobs.size === 0 && !doneAt) doneAt = performance.now();
      }
      return result;
    }) as typeof runner.run,
  };
  const waker = createWaker();
  await runJobLoop({
    settings: DEFAULT_SETTINGS,
    units,
    kinds,
    owner: 'bench-fair',
    log,
    isStopping: () => doneAt > 0,
    idle: waker.idle,
    wake: waker.wake,
    concurrency,
  });
  waker.stop();
  const delayMs = doneAt - enqueuedAt;
  await queryText(db, `delete from jobs where kind = any($1::text[])`, [kinds.map((k) => k.kind)]);
  return { delayMs, claimMs: median(claimMs) };
}

const backends: { label: string; open: () => Promise<{ database: Database; dispose: () => Promise<void> }> }[] = [
  {
    label: 'embedded',
    open: async () => {
      const dir = makeTempDir('jobs-bench');
      const database = await openEmbedded(dir, 'bench');
      await runMigrations(database, null);
      return { database, dispose: async () => (await database.close(), removeTempDir(dir)) };
    },
  },
];
if (databaseUrl) {
  backends.push({
    label: 'postgres',
    open: async () => {
      const database = connectPostgres(databaseUrl, 4);
      await runMigrations(database, databaseUrl);
      return { database, dispose: () => database.close() };
    },
  });
}

const rows: string[][] = [];
const fairRows: string[][] = [];
const rounded = (x: unknown) => JSON.stringify(x, (_k, v) => (typeof v === 'number' ? Math.round(v) : v));
for (const backend of backends) {
  const { database, dispose } = await backend.open();
  const results: { tickets: number; handle: number; perform: number }[] = [];
  const fair: { delayMs: number; claimMs: number }[] = [];
  try {
    for (let r = 0; r < rounds && scenarios.includes('throughput'); r++) {
      results.push(await round(database));
      console.error(`${backend.label} round ${r + 1}: ${rounded(results.at(-1))}`);
    }
    for (let r = 0; r < rounds && scenarios.includes('fairness'); r++) {
      fair.push(await fairnessRound(database));
      console.error(`${backend.label} fairness round ${r + 1}: ${rounded(fair.at(-1))}`);
    }
  } finally {
    await dispose();
  }
  if (results.length) {
    const m = (key: 'tickets' | 'handle' | 'perform') => median(results.map((x) => x[key]));
    const ratios = (key: 'handle' | 'perform') => median(results.map((x) => x[key] / x.tickets));
    rows.push([
      backend.label,
      `${fmtInt(m('tickets'))}/s`,
      `${fmtInt(m('handle'))}/s`,
      fmtRatio(ratios('handle')),
      `${fmtInt(m('perform'))}/s`,
      fmtRatio(ratios('perform')),
    ]);
  }
  if (fair.length)
    fairRows.push([backend.label, fmtSeconds(median(fair.map((x) => x.delayMs))), `${median(fair.map((x) => x.claimMs)).toFixed(1)} ms`]);
}
if (rows.length) {
  console.log(`\njob queue vs ticket queue: ${fmtInt(count)} items, median of ${rounds} round(s), one loop, in-process units\n`);
  console.log(table(['backend', 'ticket events drained', 'no-op jobs (handle)', 'ratio', 'no-op jobs (perform)', 'ratio'], rows));
}
if (fairRows.length) {
  console.log(
    `\nfairness: organisation B's 2 jobs behind A's ${fmtInt(backlog)} queued, median of ${rounds} round(s), one loop, in-process units\n`,
  );
  console.log(table(['backend', "B's delay (enqueue to done)", 'claim unit (median)'], fairRows));
}
