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
// Options: --quick (1 round of 1,000), --count N (default 5000), --rounds N (default 3),
//          --database-url URL (PostgreSQL; default TEST_DATABASE_URL, else embedded only).
import { parseArgs } from 'node:util';
import { t } from 'elysia';
import { connectPostgres, openEmbedded, queryText, type Database } from '../src/db/client.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { localRunner } from '../src/db/units.ts';
import { defineJobKind, type JobKind } from '../src/jobs/kind.ts';
import { runJobLoop } from '../src/jobs/job-loop.ts';
import { jobUnits } from '../src/jobs/job-units.ts';
import { runTicketLoop } from '../src/jobs/ticket-loop.ts';
import { workerUnits } from '../src/jobs/units.ts';
import { createWaker, type Waker } from '../src/jobs/waker.ts';
import { createLogger } from '../src/lib/log.ts';
import { newConnectorId, newId, randomBase62 } from '../src/lib/ids.ts';
import { createOrg } from '../src/modules/orgs/service.ts';
import { createConnector } from '../src/modules/connectors/service.ts';
import { fmtInt, fmtRatio, makeTempDir, median, positiveOption, printHeaderAndExit, removeTempDir, table } from './lib.ts';

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    quick: { type: 'boolean', default: false },
    count: { type: 'string' },
    rounds: { type: 'string' },
    'database-url': { type: 'string' },
    concurrency: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) await printHeaderAndExit(import.meta.path);
const count = positiveOption(opts.count, opts.quick ? 1_000 : 5_000);
const rounds = positiveOption(opts.rounds, opts.quick ? 1 : 3);
const concurrency = opts.concurrency ? positiveOption(opts.concurrency, 8) : undefined;
const databaseUrl = opts['database-url'] ?? process.env.TEST_DATABASE_URL ?? null;
const log = createLogger('silent');

const SENTENCE = 'The export keeps failing with a timeout and our finance team cannot close the month; we are considering other options. ';
const ticketBody = (n: number) => JSON.stringify({ ticket: { id: `J-${n}`, subject: 'Export fails', description: SENTENCE.repeat(8), requester_email: `user${n % 500}@example.com` } });

/** Runs `loop` with a real waker (as the worker thread does) until `left()`, asked every 20 ms,
 * says nothing is left; returns items per second. */
async function timed(n: number, loop: (isStopping: () => boolean, waker: Waker) => Promise<void>, left: () => Promise<number>): Promise<number> {
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
  const org = await createOrg(db, { name: `bench-jobs-${randomBase62(8)}`, plan: 'enterprise', rateLimitPerMinute: null, rateLimitPerDay: null, actor: 'bench' });
  const connector = await createConnector(db, { id: newConnectorId(), org: org.id, name: 'Bench desk', platform: 'generic', secretSealed: null, tokenHash: null, actor: 'bench' });
  for (let i = 0; i < count; i += 500) {
    const rows = Array.from({ length: Math.min(500, count - i) }, (_, k) => [newId('evt'), ticketBody(i + k)]);
    await queryText(db, `insert into ticket_events (id, org_id, connector_id, source, body) select id, $1, $2, 'webhook', body from unnest($3::text[], $4::text[]) as x(id, body)`, [
      org.id,
      connector.id,
      rows.map((r) => r[0]),
      rows.map((r) => r[1]),
    ]);
  }
  const ticketUnits = localRunner(db, workerUnits);
  const pendingEvents = async () => (await queryText<{ n: number }>(db, `select count(*)::int as n from ticket_events where connector_id = $1 and status <> 'done'`, [connector.id]))[0]!.n;
  const tickets = await timed(count, (isStopping, waker) => runTicketLoop({ units: ticketUnits, owner: 'bench', log, isStopping, idle: waker.idle }), pendingEvents);

  const figures: Record<'handle' | 'perform', number> = { handle: 0, perform: 0 };
  for (const shape of ['handle', 'perform'] as const) {
    const name = `bench.noop.${shape}.${randomBase62(6)}`;
    const kind: JobKind =
      shape === 'handle'
        ? defineJobKind({ kind: name, payload: t.Object({ n: t.Number() }), handle: async () => null })
        : defineJobKind({ kind: name, payload: t.Object({ n: t.Number() }), perform: async () => null });
    await queryText(db, `insert into jobs (id, kind, payload, max_attempts) select 'job_' || md5(random()::text), $1, jsonb_build_object('n', g), 8 from generate_series(1, $2::int) g`, [name, count]);
    const units = localRunner(db, jobUnits([kind]));
    const open = async () => (await queryText<{ n: number }>(db, `select count(*)::int as n from jobs where kind = $1 and state <> 'done'`, [name]))[0]!.n;
    figures[shape] = await timed(count, (isStopping, waker) => runJobLoop({ units, kinds: [kind], owner: 'bench', log, isStopping, idle: waker.idle, wake: waker.wake, concurrency }), open);
  }
  return { tickets, ...figures };
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
for (const backend of backends) {
  const { database, dispose } = await backend.open();
  const results: { tickets: number; handle: number; perform: number }[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      results.push(await round(database));
      console.error(`${backend.label} round ${r + 1}: ${JSON.stringify(results.at(-1), (_k, v) => (typeof v === 'number' ? Math.round(v) : v))}`);
    }
  } finally {
    await dispose();
  }
  const m = (key: 'tickets' | 'handle' | 'perform') => median(results.map((x) => x[key]));
  const ratios = (key: 'handle' | 'perform') => median(results.map((x) => x[key] / x.tickets));
  rows.push([backend.label, `${fmtInt(m('tickets'))}/s`, `${fmtInt(m('handle'))}/s`, fmtRatio(ratios('handle')), `${fmtInt(m('perform'))}/s`, fmtRatio(ratios('perform'))]);
}
console.log(`\njob queue vs ticket queue: ${fmtInt(count)} items, median of ${rounds} round(s), one loop, in-process units\n`);
console.log(table(['backend', 'ticket events drained', 'no-op jobs (handle)', 'ratio', 'no-op jobs (perform)', 'ratio'], rows));
