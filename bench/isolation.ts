// bun run bench:isolation [-- --quick] — one large tenant must not stall the others. On each
// backend (PGlite in a temp dir; PostgreSQL with --database-url, default TEST_DATABASE_URL), a
// tenant of --customers customers (each with a contract, written straight into the database
// before the server starts) and a small one of 200 share one `revintel serve` (from source: the
// same code the binary compiles). Then, phase after phase:
//   idle       nothing but the probes (the baseline of the same run);
//   rescore    POST /api/cfo/predictions/recompute for the large tenant, until its job is done;
//   import     `revintel import customers` of a generated CSV of --import-mb MB through the running
//              server (on PGlite: the admin socket), rows/s and the server's peak RSS;
//   delivery   one signed WhatsApp delivery of --statuses statuses to the large tenant's number,
//              until its job has worked through it;
//   together   the three at once.
// Throughout, GET /healthz and the small tenant's GET /api/customers?limit=50 are probed every
// --every ms (each probe on its own, never waiting for the last): p50 / p99 / max per phase; and
// the longest unit of work the server ran on the database (revintel_unit_duration_seconds, when the
// build has it), and per phase how many units took over 100 ms of how many ran (and which), with the
// machine's 1-minute load average at the phase's end (the machine may be shared). Targets
// (reported, never asserted): /healthz p99 < 100 ms and the other tenant's list p99 < 250 ms in
// every phase.
// Options: --quick (PGlite only unless --only; 5,000 customers, 1 MB, 2,000 statuses: a minute or
//          two, a smoke run), --customers N (300000), --import-mb M (100), --statuses S
//          (40000), --idle S (5), --every MS (50), --only embedded,postgres, --database-url URL,
//          --phases LIST (idle,rescore,import,delivery,together).
import { createHmac } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectPostgres, openEmbedded, queryText, type Database } from '../src/db/client.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { newId, randomBase62 } from '../src/lib/ids.ts';
import { sealSecret } from '../src/lib/secret-box.ts';
import { createKey } from '../src/modules/keys/service.ts';
import { createOrg } from '../src/modules/orgs/service.ts';
import { chatAdminUnits } from '../src/modules/chat/installations.ts';
import {
  cleanupAll,
  fmtInt,
  fmtMB,
  freePort,
  makeTempDir,
  positiveOption,
  printHeaderAndExit,
  quantile,
  rssMB,
  runToEnd,
  sleep,
  spawnTracked,
  stopOnSignal,
  stopProcess,
  table,
  waitFor200,
} from './lib.ts';
import { BUN, dropDatabase, recreateDatabase, REPO, revintelEnv, tail } from './revintel.ts';

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    quick: { type: 'boolean', default: false },
    customers: { type: 'string' },
    'import-mb': { type: 'string' },
    statuses: { type: 'string' },
    idle: { type: 'string' },
    every: { type: 'string' },
    only: { type: 'string' },
    phases: { type: 'string' },
    'database-url': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) await printHeaderAndExit(import.meta.path);
const customers = positiveOption(opts.customers, opts.quick ? 5_000 : 300_000);
const importMb = positiveOption(opts['import-mb'], opts.quick ? 1 : 100);
const statuses = positiveOption(opts.statuses, opts.quick ? 2_000 : 40_000);
const idleSeconds = positiveOption(opts.idle, opts.quick ? 2 : 5);
const everyMs = positiveOption(opts.every, 50);
const databaseUrl = opts['database-url'] ?? process.env.TEST_DATABASE_URL ?? null;
const only = new Set((opts.only ?? (opts.quick ? 'embedded' : 'embedded,postgres')).split(','));
const backends = (['embedded', 'postgres'] as const).filter((b) => only.has(b) && (b === 'embedded' || databaseUrl));
const phases = (opts.phases ?? 'idle,rescore,import,delivery,together').split(',');
const log = (line: string) => console.error(line);
const work = makeTempDir('isolation');
const SECRET_KEY = `bench-isolation-${randomBase62(32)}`;
const APP_SECRET = `bench-app-secret-${randomBase62(16)}`;
const PHONE_NUMBER_ID = '109876543210987';
const BENCH_DB = 'revintel_bench_isolation';
const METRICS_TOKEN = randomBase62(32);
stopOnSignal(log, () => (databaseUrl && backends.includes('postgres') ? dropDatabase(databaseUrl, BENCH_DB) : undefined));

/** The two tenants, written before the server starts: the large one in set-wise statements. */
async function seed(database: Database, url: string | null) {
  await runMigrations(database, url);
  const db = database.db;
  const big = await createOrg(db, { name: 'Large', plan: 'enterprise', actor: 'bench' });
  // The probes ask 20 times a second: above any plan's budget.
  const small = await createOrg(db, {
    name: 'Small',
    plan: 'enterprise',
    rateLimitPerMinute: 1_000_000,
    rateLimitPerDay: 100_000_000,
    actor: 'bench',
  });
  const smallKey = await createKey(db, { org: small.id, name: 'bench', expiresAt: null, actor: 'bench' });
  const bigKey = await createKey(db, { org: big.id, name: 'bench', expiresAt: null, actor: 'bench' });
  for (const [org, n] of [
    [big.id, customers],
    [small.id, 200],
  ] as const) {
    for (let from = 0; from < n; from += 20_000) {
      const to = Math.min(n, from + 20_000);
      await queryText(
        db,
        `insert into customers (id, org_id, external_id, name, currency, segment)
        select 'cus_' || $1 || lpad(i::text, 8, '0'), $1, 'ext-' || i, 'Customer ' || i, 'USD', (array['smb','mid','enterprise'])[1 + i % 3]
        from generate_series($2::int, $3::int - 1) as i`,
        [org, from, to],
      );
      await queryText(
        db,
        `insert into contracts (id, org_id, customer_id, name, status, start_date, end_date, billing_interval, amount, currency, seats)
        select 'ctr_' || $1 || lpad(i::text, 8, '0'), $1, 'cus_' || $1 || lpad(i::text, 8, '0'), 'Plan', 'active',
               current_date - (30 + i % 700), current_date + (10 + i % 300), (array['month','year'])[1 + i % 2], 1000 + (i % 97) * 100, 'USD', 1 + i % 40
        from generate_series($2::int, $3::int - 1) as i`,
        [org, from, to],
      );
    }
  }
  // Nothing is stale yet: the rescore phase asks for a whole one itself.
  await queryText(db, `delete from risk_input_changes`, []);
  const installation = newId('chi');
  await chatAdminUnits['chat.add'](db, {
    id: installation,
    org: big.id,
    platform: 'whatsapp',
    externalId: PHONE_NUMBER_ID,
    credentialsSealed: sealSecret(`EAAG${randomBase62(40)}`, SECRET_KEY, installation),
    actor: 'bench',
  });
  await queryText(db, `analyze`, []);
  return { bigOrg: big.id, bigKey: bigKey.plaintext, smallKey: smallKey.plaintext };
}

/** A CSV of new customers for the large tenant, about `mb` MB. */
async function writeCsv(file: string, mb: number, prefix: string): Promise<number> {
  const writer = Bun.file(file).writer();
  writer.write('external_id,name,domain,status,segment,country,currency,csm_name,csm_email\n');
  let bytes = 0;
  let rows = 0;
  while (bytes < mb * 1e6) {
    const line = `${prefix}-${rows},"Imported customer ${rows}, Ltd",imported-${rows}.example.com,active,mid,GB,USD,Robin Example,robin.${rows % 50}@example.com\n`;
    writer.write(line);
    bytes += line.length;
    rows++;
  }
  await writer.end();
  return rows;
}

/** One delivery of `count` statuses, as Meta sends them (`tag` keeps two deliveries apart). */
function delivery(count: number, tag: string): string {
  const now = Math.floor(Date.now() / 1000);
  const list = Array.from({ length: count }, (_, i) => ({
    id: `wamid.BENCH${tag}${String(i).padStart(10, '0')}`,
    status: 'delivered',
    timestamp: String(now),
    recipient_id: '15551234567',
  }));
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: PHONE_NUMBER_ID },
              statuses: list,
            },
          },
        ],
      },
    ],
  });
}

interface Probe {
  healthz: number[];
  list: number[];
  failures: number;
  /** Statuses (or "error") of the probes that failed, with their counts. */
  failed: Map<string, number>;
}

/** Probes every `everyMs` until stopped, each probe on its own; a probe that fails counts its time. */
function startProbes(base: string, smallKey: string) {
  const probe: Probe = { healthz: [], list: [], failures: 0, failed: new Map() };
  const fail = (what: string) => {
    probe.failures++;
    probe.failed.set(what, (probe.failed.get(what) ?? 0) + 1);
  };
  const inFlight = new Set<Promise<void>>();
  let running = true;
  const one = (url: string, into: number[], headers: Record<string, string> = {}) => {
    const sent = performance.now();
    const p = fetch(url, { headers, signal: AbortSignal.timeout(60_000) })
      .then(async (response) => {
        await response.arrayBuffer();
        if (response.status !== 200) fail(String(response.status));
      })
      .catch(() => fail('error'))
      .finally(() => {
        into.push(performance.now() - sent);
        inFlight.delete(p);
      });
    inFlight.add(p);
  };
  const loop = (async () => {
    while (running) {
      one(`${base}/healthz`, probe.healthz);
      one(`${base}/api/customers?limit=50`, probe.list, { authorization: `Bearer ${smallKey}` });
      await sleep(everyMs);
    }
  })();
  return async () => {
    running = false;
    await loop;
    await Promise.all([...inFlight]);
    return probe;
  };
}

/** The main thread's stalls the server logged (DEBUG_STALLS=true) since `from` bytes of its log:
 * how many, and for each kind of work the time it took in them and how often it was the largest
 * share of one. Empty when the server was not asked to log them. */
function stallsSince(
  logFile: string,
  from: number,
): { count: number; lateMs: number; collected: number; causes: Map<string, { ms: number; largest: number }> } {
  const causes = new Map<string, { ms: number; largest: number }>();
  let count = 0;
  let lateMs = 0;
  let collected = 0;
  const text = readFileSync(logFile, 'utf8').slice(from);
  for (const line of text.split('\n')) {
    if (!line.includes('"main thread stalled"')) continue;
    const stall = JSON.parse(line) as { late_ms: number; spent: Record<string, number>; heap_freed_mb?: number };
    count++;
    if ((stall.heap_freed_mb ?? 0) > 0) collected++;
    lateMs += stall.late_ms;
    // Work by unit name without its arguments' detail: `wasm jobs.unit whatsapp.batch/part`.
    const entries = Object.entries(stall.spent).sort((a, b) => b[1] - a[1]);
    entries.forEach(([what, ms], i) => {
      const cause = causes.get(what) ?? (causes.set(what, { ms: 0, largest: 0 }), causes.get(what)!);
      cause.ms += ms;
      if (i === 0) cause.largest++;
    });
  }
  return { count, lateMs, collected, causes };
}

const logSize = (file: string) => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};

/** The longest units of work the server reports (its metrics), by name; n/a if it has none. */
async function longestUnits(base: string): Promise<string> {
  const text = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then(
    (r) => (r.ok ? r.text() : ''),
    () => '',
  );
  const max = new Map<string, number>();
  for (const match of text.matchAll(/^revintel_unit_duration_max_seconds\{unit="([^"]+)"\} ([\d.e+-]+)$/gm))
    max.set(match[1]!, Number(match[2]));
  if (max.size === 0) return 'n/a';
  return [...max.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([name, seconds]) => `${name} ${Math.round(seconds * 1000)} ms`)
    .join(', ');
}

/** Units run so far by name (the histogram's count, and how many took over 100 ms): a phase's are
 * the difference between two readings. Empty if the build has no such metric. */
async function unitCounts(base: string): Promise<Map<string, { all: number; over: number }>> {
  const text = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then(
    (r) => (r.ok ? r.text() : ''),
    () => '',
  );
  const counts = new Map<string, { all: number; over: number }>();
  const of = (unit: string) => counts.get(unit) ?? (counts.set(unit, { all: 0, over: 0 }), counts.get(unit)!);
  for (const match of text.matchAll(/^revintel_unit_duration_seconds_count\{unit="([^"]+)"\} ([\d.e+-]+)$/gm))
    of(match[1]!).all += Number(match[2]);
  // Over 100 ms: the count less the 0.1 s bucket (the buckets are cumulative).
  for (const match of text.matchAll(
    /^revintel_unit_duration_seconds_bucket\{(?:le="0\.1",unit="([^"]+)"|unit="([^"]+)",le="0\.1")\} ([\d.e+-]+)$/gm,
  ))
    of((match[1] ?? match[2])!).over -= Number(match[3]);
  for (const count of counts.values()) count.over += count.all;
  return counts;
}

/** What ran during a phase: units over 100 ms of all units, and which ones. */
function phaseUnits(
  before: Map<string, { all: number; over: number }>,
  after: Map<string, { all: number; over: number }>,
): { cell: string; names: string } {
  let all = 0;
  let over = 0;
  const names: string[] = [];
  for (const [unit, count] of after) {
    const was = before.get(unit) ?? { all: 0, over: 0 };
    all += count.all - was.all;
    over += count.over - was.over;
    if (count.over > was.over) names.push(`${unit} ${count.over - was.over}/${count.all - was.all}`);
  }
  return { cell: after.size === 0 ? 'n/a' : `${fmtInt(over)}/${fmtInt(all)}`, names: names.join(', ') };
}

async function runBackend(backend: 'embedded' | 'postgres') {
  const dataDir = join(work, `${backend}-data`);
  const url = backend === 'postgres' ? await recreateDatabase(databaseUrl!, BENCH_DB) : null;
  log(`${backend}: seeding ${fmtInt(customers)} customers…`);
  const seeded = performance.now();
  const database =
    backend === 'postgres'
      ? connectPostgres(url!, 4, { timeoutMs: 600_000 })
      : await openEmbedded(dataDir, 'bench', { timeoutMs: 600_000 });
  const tenants = await seed(database, url);
  await database.close();
  log(`${backend}: seeded in ${Math.round((performance.now() - seeded) / 1000)} s`);

  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    SECRET_KEY,
    WHATSAPP_APP_SECRET: APP_SECRET,
    METRICS_TOKEN,
    BODY_LIMIT_WEBHOOK: String(256 * 1024 * 1024),
    ...(url ? { DATABASE_URL: url, RATE_LIMIT_STORE: 'memory' } : { DATA_DIR: dataDir }),
  };
  const logFile = join(work, `${backend}-serve.log`);
  const server = spawnTracked([BUN, '--max-http-header-size=131072', join(REPO, 'src/index.ts'), 'serve'], {
    cwd: work,
    env: revintelEnv(env),
    logFile,
  });
  await waitFor200(`${base}/readyz`, server, 60_000, 50).catch(async (error) => {
    throw new Error(`${(error as Error).message}\n${await tail(logFile)}`);
  });
  // Two files of new customers: the import phase's, and the one run together with the others.
  const csvRows = await writeCsv(join(work, 'import-a.csv'), importMb, 'imp-a');
  await writeCsv(join(work, 'import-b.csv'), importMb, 'imp-b');
  // Two deliveries: the same one again would be a redelivery, stored once.
  const bodies = [delivery(statuses, 'A'), delivery(statuses, 'B')];

  const rescore = async () => {
    const response = await fetch(`${base}/api/cfo/predictions/recompute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenants.bigKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const { data } = (await response.json()) as { data: { job_id: string } };
    const dbEnv: Record<string, string> = url ? { DATABASE_URL: url } : { DATA_DIR: dataDir };
    for (;;) {
      await sleep(1_000);
      const shown = await runToEnd([BUN, join(REPO, 'src/index.ts'), 'jobs', 'show', data.job_id, '--json'], {
        cwd: work,
        env: revintelEnv({ ...dbEnv, SECRET_KEY }),
        timeoutMs: 120_000,
      });
      const state = /"state":\s*"(\w+)"/.exec(shown.stdout)?.[1];
      if (state === 'done' || state === 'dead') return `rescore ${state}`;
    }
  };
  let importFigures = { rowsPerSecond: NaN, rows: 0 };
  const importCsv = async (csv: string) => {
    const dbEnv: Record<string, string> = url ? { DATABASE_URL: url } : { DATA_DIR: dataDir };
    const result = await runToEnd([BUN, join(REPO, 'src/index.ts'), 'import', 'customers', csv, '--org', tenants.bigOrg, '--json'], {
      cwd: work,
      env: revintelEnv({ ...dbEnv, SECRET_KEY }),
      timeoutMs: 3_600_000,
    });
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{')) || '{}');
    importFigures = { rowsPerSecond: report.rows_per_second, rows: report.rows };
    return `import exit ${result.code}`;
  };
  // The delivery's answer, then its job: the phase ends when no whatsapp.batch job is left.
  const deliver = async (body: string) => {
    const signature = `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`;
    const sent = performance.now();
    const response = await fetch(`${base}/api/webhooks/messaging`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      signal: AbortSignal.timeout(600_000),
    });
    await response.arrayBuffer();
    const answered = (performance.now() - sent) / 1000;
    const dbEnv: Record<string, string> = url ? { DATABASE_URL: url } : { DATA_DIR: dataDir };
    const left = async (state: string) => {
      const listed = await runToEnd(
        [BUN, join(REPO, 'src/index.ts'), 'jobs', 'list', '--kind', 'whatsapp.batch', '--org', tenants.bigOrg, '--state', state, '--json'],
        { cwd: work, env: revintelEnv({ ...dbEnv, SECRET_KEY }), timeoutMs: 120_000 },
      );
      return (JSON.parse(listed.stdout.slice(listed.stdout.indexOf('[')) || '[]') as unknown[]).length;
    };
    while ((await left('queued')) + (await left('running')) > 0) await sleep(1_000);
    return `delivery ${response.status} in ${answered.toFixed(1)} s, its job done after ${((performance.now() - sent) / 1000).toFixed(1)} s`;
  };

  const rows: string[][] = [];
  const run = async (name: string, work: () => Promise<string[]>) => {
    if (!phases.includes(name)) return;
    log(`${backend}: ${name}…`);
    let peak = rssMB(server.pid!) ?? NaN;
    const rssTimer = setInterval(() => (peak = Math.max(peak, rssMB(server.pid!) ?? 0)), 200);
    const unitsBefore = await unitCounts(base);
    const logFrom = logSize(logFile);
    const stop = startProbes(base, tenants.smallKey);
    const started = performance.now();
    importFigures = { rowsPerSecond: NaN, rows: 0 };
    const outcomes = await work();
    const seconds = (performance.now() - started) / 1000;
    const probe = await stop();
    clearInterval(rssTimer);
    const units = phaseUnits(unitsBefore, await unitCounts(base));
    if (units.names) phaseNotes.push(`${backend} ${name}: units over 100 ms: ${units.names}`);
    const stalls = stallsSince(logFile, logFrom);
    if (stalls.count > 0) {
      const top = [...stalls.causes.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8);
      phaseNotes.push(
        `${backend} ${name}: ${stalls.count} stalls over 50 ms (${Math.round(stalls.lateMs)} ms late in all; the heap shrank in ${stalls.collected}); time in them by work (ms, times the largest share): ${top
          .map(([what, cause]) => `${what} ${Math.round(cause.ms)} (${cause.largest})`)
          .join(', ')}`,
      );
    }
    const ms = (v: number) => (Number.isFinite(v) ? String(Math.round(v)) : 'n/a');
    const row = [
      backend,
      name,
      seconds.toFixed(1),
      ms(quantile(probe.healthz, 0.5)),
      ms(quantile(probe.healthz, 0.99)),
      ms(Math.max(...probe.healthz)),
      ms(quantile(probe.list, 0.5)),
      ms(quantile(probe.list, 0.99)),
      ms(Math.max(...probe.list)),
      probe.failures === 0 ? '0' : [...probe.failed].map(([what, n]) => `${n}x${what}`).join(' '),
      units.cell,
      loadavg()[0]!.toFixed(1),
      fmtMB(peak),
      Number.isFinite(importFigures.rowsPerSecond) ? fmtInt(importFigures.rowsPerSecond) : '—',
      outcomes.join(', '),
    ];
    rows.push(row);
    // As it comes too: a long run stopped half-way keeps what it measured.
    log(`${backend}: ${name}: ${row.join(' | ')}`);
  };
  const rssIdle = rssMB(server.pid!) ?? NaN;
  await run('idle', async () => (await sleep(idleSeconds * 1000), ['—']));
  await run('rescore', async () => [await rescore()]);
  await run('import', async () => [await importCsv(join(work, 'import-a.csv'))]);
  await run('delivery', async () => [await deliver(bodies[0]!)]);
  await run('together', async () => Promise.all([rescore(), importCsv(join(work, 'import-b.csv')), deliver(bodies[1]!)]));
  const longest = await longestUnits(base);
  await stopProcess(server, 10_000);
  if (backend === 'postgres') await dropDatabase(databaseUrl!, BENCH_DB);
  return { rows, longest, rssIdle, csvRows };
}

const all: string[][] = [];
const notes: string[] = [];
const phaseNotes: string[] = [];
try {
  for (const backend of backends) {
    const result = await runBackend(backend);
    all.push(...result.rows);
    notes.push(
      `${backend}: idle RSS ${fmtMB(result.rssIdle)}; longest units of work: ${result.longest}; import file ${fmtInt(result.csvRows)} rows`,
    );
  }
} finally {
  await cleanupAll();
}
console.log(
  `\nisolation: ${fmtInt(customers)} customers in the large tenant, ${importMb} MB import, ${fmtInt(statuses)} statuses, probes every ${everyMs} ms (latency in ms)\n`,
);
console.log(
  table(
    [
      'backend',
      'phase',
      's',
      'healthz p50',
      'p99',
      'max',
      'list p50',
      'p99',
      'max',
      'failed',
      'units >100ms',
      'load',
      'peak RSS',
      'import rows/s',
      'outcome',
    ],
    all,
  ),
);
for (const note of notes) console.log(note);
for (const note of phaseNotes) console.log(note);
