// bun run bench:arr [-- --quick] — the ARR read endpoints of the built binary (dist/revintel) against
// a naive implementation, on the demo organisation at 100,000 customers.
//
// What is measured (targets are reported, never asserted: the run exits 0 whatever the figures
// are, and non-zero only if something could not be measured):
//
// 1. `revintel demo --customers N` on each backend: wall time from spawn to exit and the CLI
//    process's peak RSS (/proc/<pid>/status every 100 ms). On the embedded database the CLI opens
//    DATA_DIR itself (no server running), so the process measured is the one doing all the work.
//
// 2. Throughput and latency of, for the demo organisation's key:
//      GET /api/customers?limit=50                     the first page (newest first)
//      GET /api/customers?limit=50&cursor=<deep>       a page deep in the walk: the cursor is the one
//                                                      revintel answered after walking --deep rows
//      GET /api/invoices?overdue=true&limit=50         the first page of overdue invoices
//      GET /api/customers?sort=arr&limit=50            the first page by ARR: every customer's ARR
//                                                      computed and sorted, with LIST_CACHE_MB=0 so each
//                                                      request runs the query (revintel only, for reference)
//      GET /api/me                                     for reference (no database query in revintel)
//    with the rate limiter on (the backend's default store: postgres on PostgreSQL, memory on
//    PGlite) and an operator override (`revintel orgs update --limit-per-minute/--limit-per-day`)
//    raising the organisation's limits so nothing is refused (any 4xx/5xx is counted and flagged).
//    Side by side with the naive baseline (bench/arr-baseline.ts: Elysia + postgres.js, a key query
//    and a data query per request), started on the same database and checked first to answer the
//    same `data` and `meta` as revintel for each URL. Each endpoint is measured on freshly started
//    servers (see withServers); baseline and revintel runs alternate, round after round (each
//    after a discarded warm-up), as bench/run.ts does; the figures are medians over the rounds,
//    ratio = revintel req/s ÷ baseline req/s; target >= 1.5x on PostgreSQL.
//    The baseline needs postgres.js, so it runs on PostgreSQL only: the PGlite rows put revintel
//    on PGlite next to the PostgreSQL baseline figures (and say so).
//    CPU per request: user + system time of the server process (/proc/<pid>/stat) over the run ÷
//    requests, and on PostgreSQL also of the database backends serving it (found by
//    application_name in pg_stat_activity). On PGlite the database runs inside the server process.
//
// 3. `revintel import customers FILE` throughput (rows/s) and the CLI's peak RSS, for a CSV of as
//    many rows as the demo has customers (100,000; generated for the run unless --import-file),
//    into an organisation of its own.
//
// Options (after `bun run bench:arr --`):
//   --quick               smoke test: 10,000 customers, 3 s load runs, 1 round (under ~2 minutes)
//   --customers N         demo size (default 100000; quick 10000)
//   --deep N              rows walked before the deep cursor (default: half the customers)
//   --duration S          seconds per measured load run (default 10; quick 3)
//   --rounds N            baseline/revintel alternations per endpoint (default 3; quick 1)
//   --warmup S            seconds of discarded warm-up before each measured run (default 1)
//   --connections N       concurrent keep-alive connections (default 64)
//   --threads N           wrk threads (default 2)
//   --pool N              database connections of each server (DATABASE_POOL_SIZE; default 10)
//   --baseline-sql K      indexed (default): the baseline's ORDER BY matches the indexes and its
//                         cursors keep their microseconds; plain: the literal spelling, which
//                         misses the indexes and loses rows after a cursor (see arr-baseline.ts)
//   --loadgen wrk|bun     force the load tool (default: wrk if on PATH, else bun)
//   --only LIST           comma list of postgres,embedded (default: both)
//   --import-file PATH    a customers CSV for the import figure (default: one generated with
//                         --customers rows)
//   --build               run `bun run build` first even if dist/revintel is newer than src/
//   --keep                keep the temp dirs and the bench database for inspection
// Environment: BENCH_PG_URL (a PostgreSQL URL used to create/drop the bench database; default
// postgres://postgres@127.0.0.1:5432/postgres), BENCH_PG_DB (default revintel_bench_arr).
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Subprocess } from 'bun';
import {
  cleanupAll,
  stopOnSignal,
  cpuMs,
  fmtInt,
  fmtMB,
  fmtMs,
  fmtRatio,
  fmtSeconds,
  freePort,
  makeTempDir,
  median,
  sampleRss,
  setKeepTempDirs,
  spawnTracked,
  stopProcess,
  table,
  waitFor200,
  printHeaderAndExit,
  positiveOption,
} from './lib.ts';
import {
  BENCH,
  BIN,
  BUN,
  chooseLoadTool,
  dropDatabase,
  ensureBinary,
  loadRun,
  recreateDatabase,
  revintelRunner,
  tail,
  withAdminSql,
  type LoadResult,
  type Running,
} from './revintel.ts';

// --- options -------------------------------------------------------------------------------------

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    quick: { type: 'boolean', default: false },
    customers: { type: 'string' },
    deep: { type: 'string' },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    threads: { type: 'string' },
    pool: { type: 'string' },
    'baseline-sql': { type: 'string', default: 'indexed' },
    loadgen: { type: 'string' },
    only: { type: 'string' },
    'import-file': { type: 'string' },
    build: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) await printHeaderAndExit(import.meta.path);

const quick = opts.quick!;
const customers = positiveOption(opts.customers, quick ? 10_000 : 100_000);
const settings = {
  customers,
  deep: positiveOption(opts.deep, Math.floor(customers / 2)),
  duration: positiveOption(opts.duration, quick ? 3 : 10),
  rounds: positiveOption(opts.rounds, quick ? 1 : 3),
  warmup: positiveOption(opts.warmup, 1),
  connections: positiveOption(opts.connections, 64),
  threads: positiveOption(opts.threads, 2),
  pool: positiveOption(opts.pool, 10),
};
const baselineSql = opts['baseline-sql']!;
if (baselineSql !== 'indexed' && baselineSql !== 'plain') throw new Error(`--baseline-sql must be indexed or plain, got "${baselineSql}"`);
const only = new Set((opts.only ?? 'postgres,embedded').split(',').map((s) => s.trim()));
setKeepTempDirs(opts.keep!);

const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_DB = process.env.BENCH_PG_DB ?? 'revintel_bench_arr';
const TARGET_RATIO = 1.5;
/** Page size of the walk to the deep cursor (the API's largest). */
const WALK_PAGE = 200;

const log = (msg: string) => console.log(msg);

const workDir = makeTempDir('arr-work'); // cwd of every process (so nothing lands in the repo)
const logDir = makeTempDir('arr-logs');
const revintel = revintelRunner({ workDir, logDir });
const loadTool = chooseLoadTool(opts.loadgen);

// --- what is measured ----------------------------------------------------------------------------

type EndpointKey = 'first' | 'deep' | 'overdue' | 'byArr' | 'me';
interface Endpoint {
  key: EndpointKey;
  label: string;
  /** Compared with the baseline against TARGET_RATIO (the ARR endpoints); /api/me is for reference. */
  targeted: boolean;
  /** Measured on revintel alone (the baseline has no such query). */
  revintelOnly?: boolean;
  /** revintel's environment for this endpoint's runs. */
  env?: Record<string, string>;
  /** Concurrent connections for this endpoint (default --connections). */
  connections?: number;
}
const ENDPOINTS: Endpoint[] = [
  { key: 'first', label: 'customers?limit=50', targeted: true },
  { key: 'deep', label: `customers?limit=50&cursor=<after ${fmtInt(settings.deep)}>`, targeted: true },
  { key: 'overdue', label: 'invoices?overdue=true&limit=50', targeted: true },
  // Not kept: a kept page would measure the list cache, not the ARR query. Four connections: at 64,
  // queued behind the pool, each request waited past wrk's 2 s timeout and none was counted.
  {
    key: 'byArr',
    label: 'customers?sort=arr&limit=50 (not kept, 4 connections; revintel only)',
    targeted: false,
    revintelOnly: true,
    env: { LIST_CACHE_MB: '0' },
    connections: 4,
  },
  { key: 'me', label: 'me (reference)', targeted: false },
];

interface Run extends LoadResult {
  /** Server process CPU per request, µs. */
  appCpuUs: number;
  /** Database backends' CPU per request, µs (PostgreSQL only). */
  dbCpuUs: number;
}

interface Side {
  runs: Run[];
  maxRssMB: number;
}

interface BackendFigures {
  name: string;
  demo?: { seconds: number; peakRssMB: number; counts: { customers: number; contracts: number; invoices: number } };
  import?: ImportFigure | null;
  revintel: Partial<Record<EndpointKey, Side>>;
  baseline: Partial<Record<EndpointKey, Side>>;
  /** Differences between the two answers, per endpoint (empty: identical data and meta). */
  mismatches: Partial<Record<EndpointKey, string>>;
  error?: string;
  skipped?: string;
}

const figures = {
  postgres: { name: 'PostgreSQL', revintel: {}, baseline: {}, mismatches: {} } as BackendFigures,
  embedded: { name: 'PGlite', revintel: {}, baseline: {}, mismatches: {} } as BackendFigures,
};

// --- demo and import -----------------------------------------------------------------------------

/** `revintel demo --customers N`, timed, with the CLI's peak RSS; then raises the demo
 * organisation's limits. Returns the organisation and the key the demo printed. */
async function timeDemo(backend: BackendFigures, env: Record<string, string>) {
  log(`  revintel demo --customers ${settings.customers}…`);
  let sampler: ReturnType<typeof sampleRss> | null = null;
  const started = performance.now();
  let demo: any;
  let peakRssMB = NaN;
  try {
    demo = await revintel.cli(['demo', '--customers', String(settings.customers)], env, {
      timeoutMs: 60 * 60_000,
      onSpawn: (proc) => void (sampler = sampleRss(proc.pid)),
    });
  } finally {
    peakRssMB = (sampler as ReturnType<typeof sampleRss> | null)?.stop() ?? NaN;
  }
  const seconds = (performance.now() - started) / 1000;
  backend.demo = { seconds, peakRssMB, counts: { customers: demo.customers, contracts: demo.contracts, invoices: demo.invoices } };
  log(
    `  demo: ${fmtInt(demo.customers)} customers, ${fmtInt(demo.contracts)} contracts, ${fmtInt(demo.invoices)} invoices in ${seconds.toFixed(1)} s, peak RSS ${fmtMB(peakRssMB)}`,
  );
  const org = await revintel.cli(['orgs', 'update', demo.org_id, '--limit-per-minute', '100000000', '--limit-per-day', '1000000000'], env);
  log(`  limits of "${org.name}" raised to ${fmtInt(org.limit_per_minute)}/min, ${fmtInt(org.limit_per_day)}/day`);
  return { orgId: demo.org_id as string, secret: demo.secret as string };
}

export interface ImportFigure {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  peakRssMB: number;
}

/** A customers CSV of `rows` rows (every column the import knows, quoted commas included), made
 * once per run. */
async function customersCsv(rows: number): Promise<string> {
  const path = join(makeTempDir('arr-import'), `customers-${rows}.csv`);
  const out = Bun.file(path).writer();
  out.write('external_id,name,domain,email,status,segment,country,currency,csm_name,csm_email,metadata.source\n');
  const segments = ['smb', 'mid-market', 'enterprise'];
  const currencies = [
    ['USD', 'US'],
    ['EUR', 'DE'],
    ['GBP', 'GB'],
  ];
  for (let i = 0; i < rows; i++) {
    const [currency, country] = currencies[i % 3]!;
    out.write(
      `imp-${i},"Imported ${i}, Inc.",imported${i}.example.com,billing@imported${i}.example.com,active,${segments[i % 3]},${country},${currency},Dana Whitfield,dana@example.com,bench\n`,
    );
  }
  await out.end();
  return path;
}

/**
 * Import throughput: `revintel import customers FILE` into an organisation of its own (the demo
 * organisation's data stays as the read figures need it), timed from spawn to exit, with the CLI's
 * peak RSS sampled every 100 ms. `file` is --import-file, else a CSV of --customers rows made for
 * the run. On PGlite the CLI holds DATA_DIR itself (no server running), so the RSS includes the
 * database.
 */
async function measureImport(file: string | undefined, env: Record<string, string>): Promise<ImportFigure | null> {
  const path = file ?? (await customersCsv(settings.customers));
  const org = await revintel.cli(['orgs', 'create', '--name', `Import bench ${Date.now()}`, '--plan', 'enterprise'], env);
  log(`  revintel import customers ${path}…`);
  let sampler: ReturnType<typeof sampleRss> | null = null;
  let report: any;
  let peakRssMB = NaN;
  const started = performance.now();
  try {
    report = await revintel.cli(['import', 'customers', path, '--org', org.id], env, {
      timeoutMs: 60 * 60_000,
      onSpawn: (proc) => void (sampler = sampleRss(proc.pid)),
    });
  } finally {
    peakRssMB = (sampler as ReturnType<typeof sampleRss> | null)?.stop() ?? NaN;
  }
  const seconds = (performance.now() - started) / 1000;
  if (report.rejected > 0)
    throw new Error(`the import rejected ${report.rejected} rows: ${JSON.stringify(report.rejected_rows.slice(0, 3))}`);
  const figure = { rows: report.rows, seconds, rowsPerSecond: report.rows / seconds, peakRssMB };
  log(
    `  import: ${fmtInt(report.created)} created of ${fmtInt(report.rows)} rows in ${seconds.toFixed(1)} s (${fmtInt(figure.rowsPerSecond)} rows/s), peak RSS ${fmtMB(peakRssMB)}`,
  );
  return figure;
}

// --- load ----------------------------------------------------------------------------------------

/** Pids of the PostgreSQL backends a server holds (by its application_name). */
async function backendPids(applicationName: string): Promise<number[]> {
  return withAdminSql(PG_ADMIN_URL, async (sql) => {
    const rows = await sql`select pid from pg_stat_activity where datname = ${PG_DB} and application_name = ${applicationName}`;
    return rows.map((r: { pid: number }) => r.pid);
  });
}

/** CPU so far of each process, ms. */
const cpuOf = (pids: number[]) => new Map(pids.map((pid) => [pid, cpuMs(pid) ?? 0]));

interface Target {
  kind: 'baseline' | 'revintel';
  base: string;
  proc: Subprocess;
  /** Its PostgreSQL backends' application_name, when it has any. */
  applicationName: string | null;
}

/** One measured run with CPU accounting: the server process, and its database backends. */
async function measuredRun(
  target: Target,
  url: string,
  authorization: string,
  load: typeof settings,
): Promise<{ run: Run; maxRss: number }> {
  const dbBefore = cpuOf(target.applicationName ? await backendPids(target.applicationName) : []);
  const appBefore = cpuMs(target.proc.pid) ?? NaN;
  const sampler = sampleRss(target.proc.pid);
  const result = await loadRun(loadTool, url, authorization, settings.duration, load);
  const maxRss = sampler.stop();
  const appAfter = cpuMs(target.proc.pid) ?? NaN;
  let dbCpu = NaN;
  if (target.applicationName) {
    // A backend that appeared during the run counts whole; one that left is lost with its last
    // reading (rare: the pools keep their connections, and the warm-up has opened them).
    dbCpu = 0;
    for (const [pid, after] of cpuOf(await backendPids(target.applicationName))) dbCpu += after - (dbBefore.get(pid) ?? 0);
  }
  const perRequest = (ms: number) => (result.requests > 0 ? (ms * 1000) / result.requests : NaN);
  return { run: { ...result, appCpuUs: perRequest(appAfter - appBefore), dbCpuUs: perRequest(dbCpu) }, maxRss };
}

/** Alternates the targets (baseline, revintel, baseline, …) on one endpoint for every round. */
async function measureEndpoint(endpoint: Endpoint, path: string, targets: Target[], backend: BackendFigures, authorization: string) {
  const load = { ...settings, connections: endpoint.connections ?? settings.connections };
  log(`\n  ${endpoint.label}: ${settings.rounds} round(s) of ${settings.duration} s, ${load.connections} connections, ${loadTool.name}`);
  for (let round = 1; round <= settings.rounds; round++) {
    for (const target of targets.filter((t) => !endpoint.revintelOnly || t.kind === 'revintel')) {
      const url = `${target.base}${path}`;
      await loadRun(loadTool, url, authorization, settings.warmup, load); // warm-up, discarded
      const { run, maxRss } = await measuredRun(target, url, authorization, load);
      const side = (backend[target.kind][endpoint.key] ??= { runs: [], maxRssMB: 0 });
      side.runs.push(run);
      side.maxRssMB = Math.max(side.maxRssMB, maxRss);
      log(
        `    round ${round}/${settings.rounds} ${target.kind.padEnd(8)} ${fmtInt(run.rps).padStart(7)} req/s  ` +
          `p50 ${fmtMs(run.p50Us)}  p99 ${fmtMs(run.p99Us)}  cpu/req app ${fmtUs(run.appCpuUs)}` +
          (Number.isFinite(run.dbCpuUs) ? ` db ${fmtUs(run.dbCpuUs)}` : '') +
          `  rss max ${fmtMB(maxRss)}` +
          (run.errors ? `  ERRORS ${run.errors}` : ''),
      );
    }
  }
}

const fmtUs = (us: number) => (Number.isFinite(us) ? `${Math.round(us)} µs` : 'n/a');

/** Walks the customers newest first, WALK_PAGE at a time, and returns the cursor after `rows`. */
async function deepCursor(base: string, authorization: string, rows: number): Promise<string> {
  let cursor: string | null = null;
  for (let walked = 0; walked < rows; ) {
    const limit = Math.min(WALK_PAGE, rows - walked);
    const url: string = `${base}/api/customers?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    const response = await fetch(url, { headers: { authorization } });
    const body = (await response.json()) as { data: unknown[]; meta: { next_cursor: string | null } };
    if (response.status !== 200) throw new Error(`walking to the deep cursor: ${url} answered ${response.status} ${JSON.stringify(body)}`);
    if (!body.meta.next_cursor) throw new Error(`walking to the deep cursor: no next page after ${walked + body.data.length} customers`);
    cursor = body.meta.next_cursor;
    walked += body.data.length;
  }
  return cursor!;
}

/** Where two answers first differ (a JSON path and both values), or null when they are the same. */
function firstDifference(a: unknown, b: unknown, path = ''): string | null {
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) {
    return `${path || '.'}: ${JSON.stringify(a)?.slice(0, 120)} vs ${JSON.stringify(b)?.slice(0, 120)}`;
  }
  if (a && typeof a === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b as object)]);
    for (const key of keys) {
      const difference = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}.${key}`);
      if (difference) return difference;
    }
    return null;
  }
  return a === b ? null : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
}

/** Checks the baseline answers what revintel answers (data and meta) for an ARR endpoint. */
async function compareAnswers(
  endpoint: Endpoint,
  path: string,
  revintelBase: string,
  baselineBase: string,
  authorization: string,
  backend: BackendFigures,
) {
  const read = async (base: string) => {
    const response = await fetch(`${base}${path}`, { headers: { authorization } });
    const body = (await response.json()) as { data: unknown[]; meta: unknown };
    if (response.status !== 200) throw new Error(`${base}${path} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    return body;
  };
  const [ours, theirs] = await Promise.all([read(revintelBase), read(baselineBase)]);
  const difference = firstDifference({ data: ours.data, meta: ours.meta }, { data: theirs.data, meta: theirs.meta });
  if (difference) backend.mismatches[endpoint.key] = difference;
  log(
    `  ${endpoint.label}: ${ours.data.length} rows; baseline ${difference ? `DIFFERS at ${difference}` : 'answers the same data and meta'}`,
  );
}

/** The request path of each endpoint (the deep one needs the cursor, found on revintel). */
async function endpointPaths(base: string, authorization: string): Promise<Record<EndpointKey, string>> {
  const started = performance.now();
  const cursor = await deepCursor(base, authorization, settings.deep);
  log(
    `  deep cursor after ${fmtInt(settings.deep)} customers (walked ${Math.ceil(settings.deep / WALK_PAGE)} pages of ${WALK_PAGE} in ${fmtSeconds(performance.now() - started)})`,
  );
  return {
    first: '/api/customers?limit=50',
    deep: `/api/customers?limit=50&cursor=${cursor}`,
    overdue: '/api/invoices?overdue=true&limit=50',
    byArr: '/api/customers?sort=arr&limit=50',
    me: '/api/me',
  };
}

async function startBaseline(databaseUrl: string): Promise<{ proc: Subprocess; base: string }> {
  const port = freePort();
  const logFile = revintel.logFile('arr-baseline');
  const proc = spawnTracked([BUN, join(BENCH, 'arr-baseline.ts')], {
    cwd: workDir,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_POOL_SIZE: String(settings.pool),
      BASELINE_SQL: baselineSql,
    },
    logFile,
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor200(`${base}/readyz`, proc, 30_000);
  } catch (error) {
    await stopProcess(proc, 3_000);
    throw new Error(`arr-baseline: ${(error as Error).message}\n--- ${logFile} ---\n${await tail(logFile)}`);
  }
  return { proc, base };
}

// --- backends ------------------------------------------------------------------------------------

/** The bench database exists and has to be dropped on the way out. */
let databaseCreated = false;

/**
 * Runs `fn` with freshly started servers (revintel, and the baseline on PostgreSQL) and stops them
 * after. Each endpoint gets new processes: postgres.js 3.4.9 slows down for the life of a process
 * under sustained pipelined load (every query dispatched to a busy connection leaves a hole in its
 * connection queue, which `indexOf` then scans: the baseline's GET /api/me, two queries per
 * request, fell from 28,000 to 10,700 req/s over 20 s here; with max_pipeline 1 it held 34,000),
 * so measuring the endpoints one after the other in the same processes would favour the first ones.
 */
async function withServers(
  label: string,
  revintelEnv: Record<string, string>,
  databaseUrl: string | null,
  fn: (targets: Target[]) => Promise<void>,
): Promise<void> {
  let server: Running | null = null;
  let baseline: { proc: Subprocess; base: string } | null = null;
  try {
    server = await revintel.start(label, revintelEnv);
    if (databaseUrl) baseline = await startBaseline(databaseUrl);
    await fn([
      ...(baseline ? [{ kind: 'baseline' as const, base: baseline.base, proc: baseline.proc, applicationName: 'arr-baseline' }] : []),
      { kind: 'revintel', base: server.base, proc: server.proc, applicationName: databaseUrl ? 'revintel' : null },
    ]);
  } finally {
    if (baseline) await stopProcess(baseline.proc, 5_000);
    if (server) await revintel.stop(server, label, log);
  }
}

/** Finds the deep cursor, checks the baseline's answers (PostgreSQL), then measures each endpoint. */
async function measureBackend(
  backend: BackendFigures,
  label: string,
  revintelEnv: Record<string, string>,
  databaseUrl: string | null,
  secret: string,
) {
  const authorization = `Bearer ${secret}`;
  let paths: Record<EndpointKey, string> | null = null;
  await withServers(label, revintelEnv, databaseUrl, async (targets) => {
    const ours = targets.find((t) => t.kind === 'revintel')!;
    const theirs = targets.find((t) => t.kind === 'baseline');
    paths = await endpointPaths(ours.base, authorization);
    if (theirs) {
      for (const endpoint of ENDPOINTS.filter((e) => e.targeted))
        await compareAnswers(endpoint, paths[endpoint.key], ours.base, theirs.base, authorization, backend);
    }
  });
  for (const endpoint of ENDPOINTS) {
    await withServers(label, { ...revintelEnv, ...endpoint.env }, databaseUrl, (targets) =>
      measureEndpoint(endpoint, paths![endpoint.key], targets, backend, authorization),
    );
  }
}

async function postgresPhase() {
  const backend = figures.postgres;
  let databaseUrl: string;
  try {
    databaseUrl = await recreateDatabase(PG_ADMIN_URL, PG_DB);
    databaseCreated = true;
  } catch (error) {
    backend.skipped = `PostgreSQL not reachable at ${PG_ADMIN_URL}: ${(error as Error).message}`;
    log(`\n[PostgreSQL] skipped: ${backend.skipped}`);
    return;
  }
  try {
    log(`\n[PostgreSQL] database ${PG_DB}: migrate, demo, raise the demo organisation's limits`);
    const env = { DATABASE_URL: databaseUrl };
    await revintel.cli(['migrate'], env);
    const { secret } = await timeDemo(backend, env);
    backend.import = await measureImport(opts['import-file'], env);
    log(
      `  servers: revintel (postgres limiter, pool ${settings.pool}) and the baseline (pool ${settings.pool}), started afresh for each endpoint`,
    );
    await measureBackend(
      backend,
      'postgres',
      { ...env, RATE_LIMIT_STORE: 'postgres', DATABASE_POOL_SIZE: String(settings.pool) },
      databaseUrl,
      secret,
    );
  } catch (error) {
    backend.error = (error as Error).message;
    log(`  FAILED: ${backend.error}`);
  } finally {
    if (!opts.keep) {
      await dropDatabase(PG_ADMIN_URL, PG_DB).catch((error) => log(`warning: could not drop ${PG_DB}: ${error.message}`));
      databaseCreated = false;
    }
  }
}

async function embeddedPhase() {
  const backend = figures.embedded;
  try {
    const dataDir = makeTempDir('arr-data');
    log(`\n[PGlite] DATA_DIR ${dataDir}: create, demo (the CLI holds DATA_DIR), raise the demo organisation's limits`);
    const env = { DATA_DIR: dataDir };
    await revintel.cli(['migrate'], env);
    const { secret } = await timeDemo(backend, env);
    backend.import = await measureImport(opts['import-file'], env);
    log(`  server: revintel (memory limiter), started afresh for each endpoint; baseline: the PostgreSQL figures`);
    await measureBackend(backend, 'embedded', env, null, secret);
  } catch (error) {
    backend.error = (error as Error).message;
    log(`  FAILED: ${backend.error}`);
  }
}

// --- report --------------------------------------------------------------------------------------

const medianOf = (side: Side | undefined, pick: (r: Run) => number) => (side ? median(side.runs.map(pick)) : NaN);

function report() {
  const pg = figures.postgres;
  const rows: string[][] = [];
  const cpuRows: string[][] = [];
  for (const backend of [pg, figures.embedded]) {
    const key = backend === pg ? 'postgres' : 'embedded';
    if (!only.has(key)) continue;
    // The baseline is always PostgreSQL's (on PGlite too): the naive implementation needs postgres.js.
    const baselineOf = pg;
    for (const endpoint of ENDPOINTS) {
      const ours = backend.revintel[endpoint.key];
      const theirs = baselineOf.baseline[endpoint.key];
      const name = `${backend.name}${backend === pg ? '' : ' (baseline: PostgreSQL)'}`;
      if (!ours) {
        rows.push([name, endpoint.label, 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', '—', backend.skipped ? 'skipped' : 'error']);
        continue;
      }
      const b = medianOf(theirs, (r) => r.rps);
      const v = medianOf(ours, (r) => r.rps);
      const errors = ours.runs.reduce((a, r) => a + r.errors, 0) + (theirs?.runs.reduce((a, r) => a + r.errors, 0) ?? 0);
      const targeted = endpoint.targeted && backend === pg;
      const mismatch = baselineOf.mismatches[endpoint.key];
      const result = errors
        ? `INVALID (${errors} errors)`
        : mismatch
          ? 'answers differ'
          : targeted
            ? v / b >= TARGET_RATIO
              ? 'PASS'
              : 'FAIL'
            : 'info';
      rows.push([
        name,
        endpoint.label,
        fmtInt(b),
        fmtMs(medianOf(theirs, (r) => r.p50Us)),
        fmtMs(medianOf(theirs, (r) => r.p99Us)),
        fmtInt(v),
        fmtMs(medianOf(ours, (r) => r.p50Us)),
        fmtMs(medianOf(ours, (r) => r.p99Us)),
        fmtRatio(v / b),
        targeted ? `>= ${TARGET_RATIO}x` : '—',
        result,
      ]);
      cpuRows.push([
        name,
        endpoint.label,
        fmtUs(medianOf(theirs, (r) => r.appCpuUs)),
        fmtUs(medianOf(theirs, (r) => r.dbCpuUs)),
        fmtUs(medianOf(ours, (r) => r.appCpuUs)),
        backend === pg ? fmtUs(medianOf(ours, (r) => r.dbCpuUs)) : '(in app)',
        fmtMB(ours.maxRssMB),
      ]);
    }
  }

  const demoRows: string[][] = [];
  for (const [key, backend] of Object.entries(figures)) {
    if (!only.has(key)) continue;
    const d = backend.demo;
    demoRows.push([
      `revintel demo --customers ${settings.customers}, ${backend.name}`,
      d ? `${d.seconds.toFixed(1)} s` : 'n/a',
      d ? fmtMB(d.peakRssMB) : 'n/a',
      d ? `${fmtInt(d.counts.customers)} / ${fmtInt(d.counts.contracts)} / ${fmtInt(d.counts.invoices)}` : 'n/a',
    ]);
    const i = backend.import;
    demoRows.push([
      `revintel import customers (CSV), ${backend.name}`,
      i ? `${fmtInt(i.rowsPerSecond)} rows/s` : 'not measured',
      i ? fmtMB(i.peakRssMB) : 'n/a',
      i ? `${fmtInt(i.rows)} rows in ${i.seconds.toFixed(1)} s` : '—',
    ]);
  }

  log(`\n${'='.repeat(110)}`);
  log(
    `revintel ARR read benchmark — ${new Date().toISOString()} — ${navigator.hardwareConcurrency} CPUs, bun ${Bun.version}, ` +
      `load tool ${loadTool.name}${loadTool.name === 'wrk' ? ` -t${settings.threads}` : ''} -c${settings.connections}, ` +
      `${settings.rounds} round(s) × ${settings.duration} s per side (+${settings.warmup} s warm-up each), pool ${settings.pool}, baseline SQL ${baselineSql}`,
  );
  log(
    `Demo organisation: ${fmtInt(settings.customers)} customers; deep cursor after ${fmtInt(settings.deep)}. Medians over the rounds; ` +
      `ratio = revintel req/s ÷ naive baseline req/s (bench/arr-baseline.ts on PostgreSQL, same run).\n`,
  );
  log(table(['backend', 'GET /api/…', 'baseline req/s', 'p50', 'p99', 'revintel req/s', 'p50', 'p99', 'ratio', 'target', 'result'], rows));
  log('\nCPU per request (µs; user + system over the run ÷ requests) and revintel peak RSS under load:\n');
  log(table(['backend', 'GET /api/…', 'baseline app', 'baseline db', 'revintel app', 'revintel db', 'revintel RSS'], cpuRows));
  log('');
  log(table(['figure', 'time / rate', 'peak RSS', 'rows (customers / contracts / invoices)'], demoRows));
  for (const backend of Object.values(figures)) {
    for (const [key, difference] of Object.entries(backend.mismatches))
      log(`warning: ${backend.name} ${key}: the baseline's answer differs: ${difference}`);
    if (backend.skipped) log(`skipped ${backend.name}: ${backend.skipped}`);
    if (backend.error) log(`error ${backend.name}: ${backend.error.split('\n')[0]}`);
  }
  log('='.repeat(110));
}

// --- main ----------------------------------------------------------------------------------------

stopOnSignal(log, () => (databaseCreated && !opts.keep ? dropDatabase(PG_ADMIN_URL, PG_DB) : undefined));

let failed = false;
const began = performance.now();
try {
  await ensureBinary(opts.build!, log);
  log(
    `revintel ARR bench: ${BIN}\nload tool: ${loadTool.name === 'wrk' ? loadTool.wrkPath : 'bench/loadgen.ts (wrk not found)'}; ` +
      `${quick ? 'QUICK smoke run' : 'full run'}; logs in ${logDir}${opts.keep ? ' (kept)' : ''}`,
  );
  if (only.has('postgres')) await postgresPhase();
  if (only.has('embedded')) await embeddedPhase();
  report();
  failed = Object.entries(figures).some(([key, f]) => only.has(key) && f.error);
} catch (error) {
  failed = true;
  console.error(`bench failed: ${(error as Error).stack ?? error}`);
} finally {
  await cleanupAll();
  log(`total ${fmtSeconds(performance.now() - began)}`);
}
process.exit(failed ? 1 : 0);
