// bun run bench:tickets [-- --quick] — ticket webhook ingest and the worker that processes it, on the
// built binary (dist/revintel), against a naive one-insert-per-request server in the same run.
//
// What is measured (targets are reported, never asserted: the run exits 0 whatever the figures
// are, and non-zero only if something could not be measured):
//
// 1. Ingest: POST /api/webhooks/tickets?connectorId=… with wrk -t2 -c64 (closed loop), ~1 KB JSON
//    ticket bodies ({"ticket":{"id","subject","description","requester_email","created_at"}}),
//    content-type application/json and a valid x-hub-signature-256 (every connector has a secret).
//    wrk's Lua has no HMAC, so a pool of --bodies signed bodies is made here and written to a data
//    file the generated Lua script reads; request g (a counter per wrk thread, interleaved by thread
//    id) sends body g mod P to connector floor(g / P) mod K (K = --connectors per side, all with the
//    same secret), so the first P×K requests of a round are distinct tickets (connector, id). Each
//    round starts from an empty queue and no tickets (the bench deletes them between rounds).
//    Every answer other than 200 is counted (wrk's response() hook) and flagged, as are socket
//    errors; req/s counts acknowledged (200) answers only. Side by side with bench/tickets-baseline.ts
//    (Bun.serve + postgres.js, one INSERT and one commit per request, connector cached; see
//    that file) on the same database: baseline and revintel alternate round after round,
//    each on a freshly started process, never both at once; each measured run follows a discarded
//    warm-up (--warmup s). The figures are medians over the rounds; ratio = revintel ÷ baseline.
//    While revintel is measured its worker thread processes the events in the same process (the
//    real configuration); a run starts only once the warm-up's events are all processed.
//    CPU per request: user + system time of the server process (/proc/<pid>/stat, all threads; the
//    worker thread, named "Worker", also on its own) and, on PostgreSQL, of its database backends
//    (by application_name) over the measured run ÷ acknowledged requests. revintel's figure includes
//    the worker's processing during the run, not that of the backlog left after it.
//    Also from the stored timestamps, for revintel: events processed per second during the run, the
//    backlog at its end, lag (processed_at − received_at) of the events received during it, and the
//    rate at which the worker cleared that backlog after the run (see 2 for the method).
//    Every acknowledged event must be stored: the events stored are compared with the 200s.
//    Events per INSERT: the events one statement stored share their received_at (its transaction's
//    start), so grouping by it shows how well the group commit batches (1 for the baseline).
//
// 2. Worker drain rate: --backlog pending events (distinct tickets, rows as the webhook writes them)
//    inserted with SQL while revintel is stopped, then revintel is started and nothing else runs.
//    processed_at is the start of the transaction that applies a claimed batch, so consecutive
//    distinct processed_at values bound whole batches of work: rate = events after the first batch ÷
//    (last processed_at − first processed_at). "Start → drained" adds the start-up. CPU per ticket
//    of the worker thread, the whole process and (PostgreSQL) the database backends, over the drain.
//
// 3. Lag at a sustained rate: an open-loop sender in this process fires --rate requests/s evenly for
//    --lag-seconds (distinct tickets, signed per body), at most 256 in flight (beyond that a request
//    is dropped and counted); response latency is from each request's scheduled time. Then, per
//    event, lag = processed_at − received_at (both transaction start times, ms precision or better):
//    p50 / p99 / max. Target: max under 1 s.
//
// 4. Ticket intelligence alone: CPU µs per ticket of analyseTicket (src/modules/tickets/
//    intelligence.ts), in a process of its own (bench/intelligence-timing.ts), over the bench's
//    ~1 KB bodies and over the short real customer messages of test/fixtures/intelligence (the
//    evaluation set's held-out part), after a warm-up; median of 5 passes. With --baseline-src DIR the same is measured, pass for pass alternating, for
//    DIR/src/modules/tickets/intelligence.ts (a checkout of the code before a change).
//
// Before and after a change of the intelligence: --baseline-bin PATH (a revintel binary built from
// the code before) runs the drain (2) with that binary too, alternating baseline and this build
// --drain-rounds times on the same database, each on a fresh backlog of distinct tickets; the
// report gives both medians and their ratio. --phases picks what runs (default all).
//
// On PostgreSQL (a fresh database, dropped at the end unless --keep) and PGlite (a temp DATA_DIR).
// The baseline needs postgres.js, so it runs on PostgreSQL only: PGlite's baseline column is n/a.
// On PostgreSQL the bench reads the queue with SQL while revintel runs (polling every 100 ms to
// know when it is idle); PGlite has one owner, so the bench polls `revintel events list` through
// the server's admin socket (every second) and reads the timestamps by opening DATA_DIR itself
// after the server has stopped.
//
// Options (after `bun run bench:tickets --`):
//   --quick               smoke test: 3 s runs, 1 round, smaller backlog and pools (a few minutes)
//   --seconds N           seconds per measured ingest run (default 10; quick 3)
//   --rounds N            baseline/revintel alternations (default 3; quick 1)
//   --warmup S            seconds of discarded warm-up before each measured run (default 1)
//   --connections N       wrk connections (default 64); --threads N wrk threads (default 2)
//   --pool N              DATABASE_POOL_SIZE of revintel and of the baseline (default 10)
//   --bodies N            signed bodies in the wrk pool (default 5000)
//   --connectors N        connectors per side for the wrk runs (default 16; quick 4)
//   --backlog N           pending events for the drain figure (default 20000; quick 5000)
//   --rate N              requests/s of the sustained-rate run (default 1000)
//   --lag-seconds N       its duration (default 10; quick 3)
//   --idle-timeout S      how long to wait for the worker to finish a backlog (default 300)
//   --baseline-connector cache|query
//                         the baseline's connector lookup: cached for the life of the process
//                         (default: the issue's baseline is one insert per request and nothing
//                         else) or a query per request (what naive code often does)
//   --only LIST           comma list of postgres,embedded (default: both)
//   --phases LIST         comma list of ingest,drain,sustained,intelligence (default: all)
//   --baseline-bin PATH   a revintel binary of the code before: its drain beside this build's
//   --baseline-src DIR    a checkout of the code before: its intelligence's µs beside this one's
//   --drain-rounds N      drains per binary when --baseline-bin is given (default 2)
//   --build               run `bun run build` first even if dist/revintel is newer than src/
//   --keep                keep the temp dirs and the bench database for inspection
// Environment: BENCH_PG_URL (a PostgreSQL URL used to create/drop the bench database; default
// postgres://postgres@127.0.0.1:5432/postgres), BENCH_PG_DB (default revintel_bench_tickets).
import { createHmac, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Subprocess } from 'bun';
import {
  cleanupAll,
  stopOnSignal,
  cpuMs,
  fmtInt,
  fmtRatio,
  fmtSeconds,
  freePort,
  makeTempDir,
  median,
  runToEnd,
  setKeepTempDirs,
  sleep,
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
  REPO,
  dropDatabase,
  ensureBinary,
  recreateDatabase,
  revintelRunner,
  tail,
  withAdminSql,
  type Running,
} from './revintel.ts';

// --- options -------------------------------------------------------------------------------------

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    quick: { type: 'boolean', default: false },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    threads: { type: 'string' },
    pool: { type: 'string' },
    bodies: { type: 'string' },
    connectors: { type: 'string' },
    backlog: { type: 'string' },
    rate: { type: 'string' },
    'lag-seconds': { type: 'string' },
    'idle-timeout': { type: 'string' },
    'baseline-connector': { type: 'string', default: 'cache' },
    only: { type: 'string' },
    phases: { type: 'string' },
    'baseline-bin': { type: 'string' },
    'baseline-src': { type: 'string' },
    'drain-rounds': { type: 'string' },
    build: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) await printHeaderAndExit(import.meta.path);

const quick = opts.quick!;
const settings = {
  seconds: positiveOption(opts.seconds, quick ? 3 : 10),
  rounds: positiveOption(opts.rounds, quick ? 1 : 3),
  warmup: positiveOption(opts.warmup, 1),
  connections: positiveOption(opts.connections, 64),
  threads: positiveOption(opts.threads, 2),
  pool: positiveOption(opts.pool, 10),
  bodies: positiveOption(opts.bodies, 5000),
  connectors: positiveOption(opts.connectors, quick ? 4 : 16),
  backlog: positiveOption(opts.backlog, quick ? 5000 : 20_000),
  rate: positiveOption(opts.rate, 1000),
  lagSeconds: positiveOption(opts['lag-seconds'], quick ? 3 : 10),
  idleTimeoutMs: positiveOption(opts['idle-timeout'], 300) * 1000,
  drainRounds: positiveOption(opts['drain-rounds'], 2),
};
const PHASES = ['ingest', 'drain', 'sustained', 'intelligence'] as const;
const phases = new Set((opts.phases ?? PHASES.join(',')).split(',').map((s) => s.trim()));
const onDatabase = ['ingest', 'drain', 'sustained'].some((phase) => phases.has(phase));
for (const phase of phases)
  if (!(PHASES as readonly string[]).includes(phase)) throw new Error(`--phases takes ${PHASES.join(', ')}, got "${phase}"`);
const baselineConnector = opts['baseline-connector']!;
if (baselineConnector !== 'query' && baselineConnector !== 'cache')
  throw new Error(`--baseline-connector must be query or cache, got "${baselineConnector}"`);
const only = new Set((opts.only ?? 'postgres,embedded').split(',').map((s) => s.trim()));
for (const key of only)
  if (key !== 'postgres' && key !== 'embedded') throw new Error(`--only takes postgres and/or embedded, got "${key}"`);
setKeepTempDirs(opts.keep!);

const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_DB = process.env.BENCH_PG_DB ?? 'revintel_bench_tickets';
/** The server's key that seals connector secrets (the CLI and the servers share it). */
const SECRET_KEY = `revintel-bench-${randomBytes(16).toString('hex')}`;
/** Every connector's webhook secret. */
const WEBHOOK_SECRET = `whsec_bench_${randomBytes(12).toString('hex')}`;
const MAX_IN_FLIGHT = 256;

const TARGETS = { ratio: 2.2, p99Ms: 15, drainPerSecond: 2000, lagMaxMs: 1000 };

const log = (msg: string) => console.log(msg);

const workDir = makeTempDir('tickets-work'); // cwd of every process (so nothing lands in the repo)
const logDir = makeTempDir('tickets-logs');
const revintel = revintelRunner({ workDir, logDir });
/** The code before a change, when given: its binary drains beside this build's. */
const baselineRevintel = opts['baseline-bin'] ? revintelRunner({ workDir, logDir, bin: opts['baseline-bin'] }) : null;

// --- bodies --------------------------------------------------------------------------------------

const SUBJECTS = [
  'Cannot log in after the latest update',
  'Invoice shows the wrong amount for March',
  'Export to CSV times out on large accounts',
  'Request: single sign-on for our whole team',
  'We are thinking about cancelling our plan',
  'Webhook deliveries failing since yesterday',
  'Great support last week, one more question',
  'Charged twice this month, please refund',
];
const SENTENCES = [
  'Since the release on Monday our agents cannot sign in and see a blank page after the redirect.',
  'This is blocking the whole support team and we have customers waiting for answers.',
  'The invoice lists forty seats but we only have thirty two active users in the workspace.',
  'Could you check the billing settings and send a corrected invoice to the finance team?',
  'The export starts, runs for about two minutes and then fails with a gateway timeout.',
  'We tried smaller date ranges and it works for a week of data but not for a month.',
  'Honestly the product has been great and the onboarding was smooth for everyone.',
  'If this is not fixed soon we will have to look at alternatives before our renewal.',
  'Our security team requires SAML single sign-on before the contract can be extended.',
  'Please let me know the expected timeline, this is urgent for our quarterly review.',
  'We noticed the webhook endpoint returns errors intermittently for about an hour a day.',
  'Thanks again for the quick help last time, the team really appreciated it.',
];

/** A ~1 KB JSON ticket body; `n` picks the text, the requester and the date. */
function ticketBody(id: string, n: number): string {
  const ticket = {
    id,
    subject: SUBJECTS[n % SUBJECTS.length],
    description: '',
    requester_email: `user${n % 500}@customer${n % 40}.example.com`,
    created_at: new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString(),
  };
  const parts: string[] = [];
  for (let k = 0; JSON.stringify({ ticket: { ...ticket, description: parts.join(' ') } }).length < 960; k++) {
    parts.push(SENTENCES[(n * 7 + k * 5) % SENTENCES.length]!);
  }
  ticket.description = parts.join(' ');
  return JSON.stringify({ ticket });
}

const sign = (body: string) => `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`;

// --- wrk -----------------------------------------------------------------------------------------

const LUA = `-- Generated by bench/tickets.ts: POSTs signed ticket bodies, counts non-200 answers, and prints
-- BENCH_JSON like bench/wrk-report.lua (latencies in microseconds).
local data_path = os.getenv("BENCH_DATA")
local paths_env = os.getenv("BENCH_PATHS")
local offset = tonumber(os.getenv("BENCH_OFFSET") or "0")
local nthreads = tonumber(os.getenv("BENCH_THREADS") or "1")

local threads = {}
local next_tid = 0
function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
  table.insert(threads, thread)
end

local bodies, sigs, paths = {}, {}, {}
local nbodies, npaths = 0, 0
sent, non200, sample = 0, 0, ""

function init(args)
  for line in io.lines(data_path) do
    local tab = string.find(line, "\\t", 1, true)
    nbodies = nbodies + 1
    sigs[nbodies] = string.sub(line, 1, tab - 1)
    bodies[nbodies] = string.sub(line, tab + 1)
  end
  for p in string.gmatch(paths_env, "[^,]+") do
    npaths = npaths + 1
    paths[npaths] = p
  end
end

function request()
  local g = offset + sent * nthreads + tid
  sent = sent + 1
  local b = g % nbodies
  local k = math.floor(g / nbodies) % npaths
  return wrk.format("POST", paths[k + 1], { ["Content-Type"] = "application/json", ["X-Hub-Signature-256"] = sigs[b + 1] }, bodies[b + 1])
end

function response(status, headers, body)
  if status ~= 200 then
    non200 = non200 + 1
    if sample == "" then sample = status .. " " .. string.gsub(string.sub(body or "", 1, 200), "[\\r\\n]", " ") end
  end
end

function done(summary, latency, requests)
  local bad, most, first = 0, 0, ""
  for _, t in ipairs(threads) do
    bad = bad + t:get("non200")
    local s = t:get("sent")
    if s > most then most = s end
    if first == "" then first = t:get("sample") end
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"non200":%d,"max_sent":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max, bad, most,
    e.connect, e.read, e.write, e.status, e.timeout))
  io.write("BENCH_SAMPLE " .. first .. "\\n")
end
`;

interface WrkFiles {
  script: string;
  data: string;
}

/** The Lua script and its data file (one "signature<TAB>body" line per body). */
async function writeWrkFiles(): Promise<WrkFiles> {
  const dir = makeTempDir('tickets-wrk');
  const lines: string[] = [];
  let bytes = 0;
  for (let i = 0; i < settings.bodies; i++) {
    const body = ticketBody(`T-${i}`, i);
    bytes += body.length;
    lines.push(`${sign(body)}\t${body}`);
  }
  const files = { script: join(dir, 'webhook.lua'), data: join(dir, 'bodies.tsv') };
  await Bun.write(files.data, `${lines.join('\n')}\n`);
  await Bun.write(files.script, LUA);
  log(`wrk pool: ${fmtInt(settings.bodies)} signed bodies, ${Math.round(bytes / settings.bodies)} bytes on average (${files.data})`);
  return files;
}

interface WrkResult {
  /** Acknowledged (200) answers per second. */
  rps: number;
  requests: number;
  ok: number;
  non200: number;
  /** connect/read/write/timeout errors (wrk's status errors are part of non200). */
  socketErrors: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  sample: string;
  /** The offset the next run of the round starts at (past every request index used). */
  nextOffset: number;
}

async function wrkRun(wrk: WrkFiles, base: string, connectorIds: string[], offset: number, seconds: number): Promise<WrkResult> {
  const wrkPath = Bun.which('wrk');
  if (!wrkPath) throw new Error('wrk is not on PATH (Debian: apt-get install wrk)');
  const cmd = [
    wrkPath,
    `-t${settings.threads}`,
    `-c${settings.connections}`,
    `-d${seconds}s`,
    '--timeout',
    '5s',
    '-s',
    wrk.script,
    `${base}/`,
  ];
  const env = {
    ...process.env,
    BENCH_DATA: wrk.data,
    BENCH_PATHS: connectorIds.map((id) => `/api/webhooks/tickets?connectorId=${id}`).join(','),
    BENCH_OFFSET: String(offset),
    BENCH_THREADS: String(settings.threads),
  };
  const result = await runToEnd(cmd, { env, timeoutMs: (seconds + 60) * 1000 });
  const line = result.stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '));
  if (result.code !== 0 || !line) throw new Error(`wrk failed (exit ${result.code}): ${result.stderr || result.stdout}`);
  const r = JSON.parse(line.slice('BENCH_JSON '.length));
  const sample =
    result.stdout
      .split('\n')
      .find((l) => l.startsWith('BENCH_SAMPLE '))
      ?.slice('BENCH_SAMPLE '.length)
      .trim() ?? '';
  const e = r.errors as { connect: number; read: number; write: number; timeout: number };
  const ok = r.requests - r.non200;
  return {
    rps: ok / (r.duration_us / 1e6),
    requests: r.requests,
    ok,
    non200: r.non200,
    socketErrors: e.connect + e.read + e.write + e.timeout,
    p50Us: r.p50_us,
    p99Us: r.p99_us,
    maxUs: r.max_us,
    sample,
    nextOffset: offset + (r.max_sent + 1) * settings.threads,
  };
}

// --- open-loop sender ----------------------------------------------------------------------------

interface OpenLoopResult {
  scheduled: number;
  sent: number;
  ok: number;
  non200: number;
  failed: number;
  dropped: number;
  sample: string;
  /** From each request's scheduled time to its answer, ms. */
  latenciesMs: number[];
  /** First scheduled send to last answer, ms. */
  spanMs: number;
}

/** Fires `requests` (url, body, signature) at `rate` per second, evenly, whatever the answers do. */
async function openLoop(url: string, requests: { body: string; signature: string }[], rate: number): Promise<OpenLoopResult> {
  const result: OpenLoopResult = {
    scheduled: requests.length,
    sent: 0,
    ok: 0,
    non200: 0,
    failed: 0,
    dropped: 0,
    sample: '',
    latenciesMs: [],
    spanMs: 0,
  };
  const interval = 1000 / rate;
  const start = performance.now() + 20;
  const pending = new Set<Promise<void>>();
  const fire = (i: number, due: number) => {
    result.sent++;
    const { body, signature } = requests[i]!;
    const p = fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature } })
      .then(async (response) => {
        const text = await response.text();
        result.latenciesMs.push(performance.now() - due);
        if (response.status === 200) result.ok++;
        else {
          result.non200++;
          result.sample ||= `${response.status} ${text.slice(0, 200)}`;
        }
      })
      .catch((error) => {
        result.failed++;
        result.sample ||= `fetch failed: ${(error as Error).message}`;
      })
      .finally(() => pending.delete(p));
    pending.add(p);
  };
  let i = 0;
  while (i < requests.length) {
    const now = performance.now();
    while (i < requests.length && start + i * interval <= now) {
      if (pending.size >= MAX_IN_FLIGHT) result.dropped++;
      else fire(i, start + i * interval);
      i++;
    }
    if (i < requests.length) await sleep(Math.max(1, start + i * interval - performance.now()));
  }
  await Promise.all(pending);
  result.spanMs = performance.now() - start;
  return result;
}

// --- CPU -----------------------------------------------------------------------------------------

/** CPU so far of the threads of `pid` named `name` (the Bun Worker thread is "Worker"), ms. */
function threadCpuMs(pid: number, name: string): number {
  let total = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        if (readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim() !== name) continue;
        const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        total += (Number(fields[11]) + Number(fields[12])) * 10;
      } catch {}
    }
  } catch {}
  return total;
}

/** Pids of the PostgreSQL backends of `applicationName` on the bench database. */
async function backendPids(applicationName: string): Promise<number[]> {
  return withAdminSql(PG_ADMIN_URL, async (sql) => {
    const rows = await sql`select pid from pg_stat_activity where datname = ${PG_DB} and application_name = ${applicationName}`;
    return rows.map((r: { pid: number }) => r.pid);
  });
}

interface CpuSpent {
  appMs: number;
  workerMs: number;
  /** NaN on PGlite (the database is in the server process). */
  dbMs: number;
}

/** Starts counting the CPU of `proc` (and its database backends, by application name). */
async function cpuMeter(proc: Subprocess, applicationName: string | null): Promise<() => Promise<CpuSpent>> {
  const cpuOf = (pids: number[]) => new Map(pids.map((pid) => [pid, cpuMs(pid) ?? 0]));
  const dbBefore = applicationName ? cpuOf(await backendPids(applicationName)) : new Map<number, number>();
  const appBefore = cpuMs(proc.pid) ?? NaN;
  const workerBefore = threadCpuMs(proc.pid, 'Worker');
  return async () => {
    const appMs = (cpuMs(proc.pid) ?? NaN) - appBefore;
    const workerMs = threadCpuMs(proc.pid, 'Worker') - workerBefore;
    let dbMs = NaN;
    if (applicationName) {
      // A backend that appeared during the run counts whole; one that left is lost (rare: the pools
      // keep their connections, and the warm-up has opened them).
      dbMs = 0;
      for (const [pid, after] of cpuOf(await backendPids(applicationName))) dbMs += after - (dbBefore.get(pid) ?? 0);
    }
    return { appMs, workerMs, dbMs };
  };
}

// --- reading the queue ---------------------------------------------------------------------------

/** SQL on the bench's own connection (PostgreSQL) or on DATA_DIR opened by the bench (PGlite). */
interface Probe {
  rows<T = Record<string, unknown>>(text: string): Promise<T[]>;
  exec(text: string): Promise<void>;
}

const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;
const ts = (ms: number) => `${lit(new Date(ms).toISOString())}::timestamptz`;
const idList = (ids: string[]) => {
  for (const id of ids) if (!/^[A-Za-z0-9_]+$/.test(id)) throw new Error(`unexpected id ${id}`);
  return ids.map(lit).join(', ');
};

interface Setup {
  orgId: string;
  ingest: string[];
  baseline: string[];
  drain: string;
  lag: string;
}

interface Backend {
  key: 'postgres' | 'embedded';
  name: string;
  env: Record<string, string>;
  databaseUrl: string | null;
  dataDir: string | null;
  setup?: Setup;
  /** Runs `fn` on the database; on PGlite only while no server holds DATA_DIR. */
  withProbe<T>(fn: (probe: Probe) => Promise<T>): Promise<T>;
  /** True while events are pending or processing (the server running). */
  busy(): Promise<boolean>;
  close(): Promise<void>;
}

function postgresBackend(databaseUrl: string): Backend {
  let sql: any = null;
  const probe = async (): Promise<Probe> => {
    if (!sql) {
      const postgres = (await import('postgres')).default;
      sql = postgres(databaseUrl, { max: 2, onnotice: () => {}, connection: { application_name: 'tickets-bench' } });
    }
    return { rows: (text) => sql.unsafe(text), exec: async (text) => void (await sql.unsafe(text)) };
  };
  return {
    key: 'postgres',
    name: 'PostgreSQL',
    env: webhookEnv({ DATABASE_URL: databaseUrl }),
    databaseUrl,
    dataDir: null,
    withProbe: async (fn) => fn(await probe()),
    async busy() {
      // Two index probes (the queue's partial indexes), not a count: polled every 100 ms while the
      // worker is measured, a count scanned the whole table (150–230 ms with parallel workers
      // each time) and took the CPU the worker was being measured with.
      const [row] = await (await probe()).rows<{ busy: boolean }>(
        `select (select run_after from ticket_events where status = 'pending' order by run_after, id limit 1) is not null
                or exists (select 1 from ticket_events where status = 'processing') as busy`,
      );
      return row!.busy;
    },
    close: async () => {
      await sql?.end({ timeout: 5 });
      sql = null;
    },
  };
}

function embeddedBackend(dataDir: string): Backend {
  const backend: Backend = {
    key: 'embedded',
    name: 'PGlite',
    env: webhookEnv({ DATA_DIR: dataDir }),
    databaseUrl: null,
    dataDir,
    async withProbe(fn) {
      const { PGlite } = await import('@electric-sql/pglite');
      const db = await PGlite.create(join(dataDir, 'pgdata'));
      try {
        return await fn({ rows: async (text) => (await db.query(text)).rows as any[], exec: async (text) => void (await db.exec(text)) });
      } finally {
        await db.close();
      }
    },
    async busy() {
      for (const status of ['pending', 'processing']) {
        const events = await revintel.cli(['events', 'list', '--status', status, '--limit', '1'], backend.env);
        if (events.length > 0) return true;
      }
      return false;
    },
    close: async () => {},
  };
  return backend;
}

/** revintel's environment for the bench: the shared secret key, and webhook limits nobody reaches. */
function webhookEnv(extra: Record<string, string>): Record<string, string> {
  return {
    ...extra,
    SECRET_KEY,
    DATABASE_POOL_SIZE: String(settings.pool),
    RATE_LIMIT_WEBHOOK_PER_MINUTE: '100000000',
    RATE_LIMIT_WEBHOOK_PER_DAY: '1000000000',
  };
}

/** Waits until no event is pending or processing; resolves false at the deadline. */
async function waitIdle(backend: Backend): Promise<{ idle: boolean; ms: number }> {
  const started = performance.now();
  const every = backend.key === 'postgres' ? 100 : 1000;
  while (performance.now() - started < settings.idleTimeoutMs) {
    if (!(await backend.busy())) return { idle: true, ms: performance.now() - started };
    await sleep(every);
  }
  return { idle: false, ms: performance.now() - started };
}

interface BatchRate {
  /** Events after the first batch ÷ (last − first processed_at), per second. */
  perSecond: number;
  events: number;
  batches: number;
  firstAt: number;
  lastAt: number;
}

/** The drain rate from the distinct processed_at values of `connectorIds`' done events after `afterMs`. */
async function batchRate(probe: Probe, connectorIds: string[], afterMs: number): Promise<BatchRate | null> {
  const rows = await probe.rows<{ t: number; n: number }>(
    `select extract(epoch from processed_at)::float8 * 1000 as t, count(*)::int as n from ticket_events
     where connector_id in (${idList(connectorIds)}) and status = 'done' and processed_at > ${ts(afterMs)}
     group by processed_at order by processed_at`,
  );
  const events = rows.reduce((a, r) => a + r.n, 0);
  // Too few to say anything: fewer than two batches, or under 250 events after the first.
  if (rows.length < 2 || events - rows[0]!.n < 250) return null;
  const firstAt = rows[0]!.t;
  const lastAt = rows[rows.length - 1]!.t;
  return { perSecond: ((events - rows[0]!.n) * 1000) / (lastAt - firstAt), events, batches: rows.length, firstAt, lastAt };
}

interface LagStats {
  stored: number;
  done: number;
  dead: number;
  notDone: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Lag (processed_at − received_at) of `connectorIds`' events received in [fromMs, toMs] (all when null). */
async function lagStats(probe: Probe, connectorIds: string[], window: { fromMs: number; toMs: number } | null): Promise<LagStats> {
  const inWindow = window ? `and received_at >= ${ts(window.fromMs)} and received_at <= ${ts(window.toMs)}` : '';
  const lag = `extract(epoch from processed_at - received_at)::float8 * 1000`;
  const [row] = await probe.rows<any>(
    `select count(*)::int as stored, count(*) filter (where status = 'done')::int as done, count(*) filter (where status = 'dead')::int as dead,
            count(*) filter (where status not in ('done', 'dead'))::int as not_done,
            percentile_cont(0.5) within group (order by ${lag}) filter (where status = 'done') as p50,
            percentile_cont(0.99) within group (order by ${lag}) filter (where status = 'done') as p99,
            max(${lag}) filter (where status = 'done') as max
     from ticket_events where connector_id in (${idList(connectorIds)}) ${inWindow}`,
  );
  const n = (v: unknown) => (v === null || v === undefined ? NaN : Number(v));
  return {
    stored: row.stored,
    done: row.done,
    dead: row.dead,
    notDone: row.not_done,
    p50Ms: n(row.p50),
    p99Ms: n(row.p99),
    maxMs: n(row.max),
  };
}

interface DrainFigures {
  backlog: number;
  rate: BatchRate | null;
  startToDrainedMs: number;
  idle: boolean;
  lag: LagStats;
  cpu: CpuSpent;
}

interface InsertSizes {
  inserts: number;
  mean: number;
  max: number;
}

/** How many events each INSERT stored: the events of one statement share their received_at (the
 * transaction's start), so grouping by it gives the writer's batches (1 for the baseline). */
async function insertSizes(probe: Probe, connectorIds: string[], window: { fromMs: number; toMs: number } | null): Promise<InsertSizes> {
  const inWindow = window ? `and received_at >= ${ts(window.fromMs)} and received_at <= ${ts(window.toMs)}` : '';
  const [row] = await probe.rows<{ inserts: number; mean: number | null; max: number | null }>(
    `select count(*)::int as inserts, avg(n)::float8 as mean, max(n)::int as max
     from (select count(*) as n from ticket_events where connector_id in (${idList(connectorIds)}) ${inWindow} group by received_at) b`,
  );
  return { inserts: row!.inserts, mean: Number(row!.mean ?? NaN), max: Number(row!.max ?? NaN) };
}

/** The first few errors of dead or failing events (what went wrong, for the report). */
async function failures(probe: Probe): Promise<string[]> {
  const rows = await probe.rows<{ status: string; n: number; last_error: string | null }>(
    `select status, count(*)::int as n, min(last_error) as last_error from ticket_events
     where status <> 'done' or last_error is not null group by status order by status`,
  );
  return rows.map((r) => `${fmtInt(r.n)} ${r.status}${r.last_error ? ` (e.g. ${r.last_error.slice(0, 160)})` : ''}`);
}

/** Starts the next round from nothing: the ingest connectors' events and tickets deleted. */
async function clearIngest(probe: Probe, connectorIds: string[]) {
  await probe.exec(`delete from ticket_events where connector_id in (${idList(connectorIds)})`);
  await probe.exec(`delete from tickets where connector_id in (${idList(connectorIds)})`);
  await probe.exec('vacuum analyze ticket_events');
  await probe.exec('vacuum analyze tickets');
}

// --- figures -------------------------------------------------------------------------------------

interface IngestRun extends WrkResult {
  appCpuUs: number;
  workerCpuUs: number;
  dbCpuUs: number;
  /** Events stored for the round (warm-up and run) minus 200 answers: never negative if none is lost. */
  storedMinusAcked: number;
  /** Events per INSERT statement during the run. */
  perInsert: InsertSizes;
}

interface WorkerUnderLoad {
  processedPerSecond: number;
  backlogAtEnd: number;
  lag: LagStats;
  after: BatchRate | null;
  idleMs: number;
  idle: boolean;
}

interface Figures {
  baseline: IngestRun[];
  revintel: IngestRun[];
  worker: WorkerUnderLoad[];
  drain?: DrainFigures;
  /** With --baseline-bin: tickets/s of each drain, the baseline binary's and this build's. */
  drainRates?: { baseline: number[]; ours: number[] };
  sustained?: { send: OpenLoopResult; lag: LagStats; cpu: CpuSpent; idle: boolean; perInsert: InsertSizes };
  failures: string[];
  notes: string[];
  error?: string;
  skipped?: string;
}

const figures: Record<'postgres' | 'embedded', Figures> = {
  postgres: { baseline: [], revintel: [], worker: [], failures: [], notes: [] },
  embedded: { baseline: [], revintel: [], worker: [], failures: [], notes: [] },
};

const perRequestUs = (ms: number, requests: number) => (requests > 0 ? (ms * 1000) / requests : NaN);
const fmtUs = (us: number) => (Number.isFinite(us) ? `${Math.round(us)} µs` : 'n/a');
const fmtMsVal = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(ms < 10 ? 2 : ms < 100 ? 1 : 0)} ms` : 'n/a');

/** Warnings and errors a server logged (revintel logs JSON lines; the baseline only errors). */
async function logProblems(backend: Backend, file: string, label: string) {
  let text = '';
  try {
    text = await Bun.file(file).text();
  } catch {
    return;
  }
  const problems = text.split('\n').filter((l) => /"level":"(warn|error|fatal)"|^\w*Error\b|^error:/i.test(l));
  if (problems.length === 0) return;
  const messages = new Map<string, number>();
  for (const line of problems) {
    let key = line.slice(0, 200);
    try {
      const entry = JSON.parse(line);
      key = `${entry.level}: ${entry.msg}${entry.error ? ` (${String(entry.error).slice(0, 160)})` : ''}`;
    } catch {}
    messages.set(key, (messages.get(key) ?? 0) + 1);
  }
  for (const [message, count] of messages) {
    const note = `${label} logged ${count} × ${message}`;
    figures[backend.key].notes.push(note);
    log(`    ${note}`);
  }
}

// --- phases --------------------------------------------------------------------------------------

async function setupBackend(backend: Backend, withBaseline: boolean): Promise<Setup> {
  await revintel.cli(['migrate'], backend.env);
  // On PGlite the CLI goes through the running server's admin socket (one owner of DATA_DIR).
  const server = await revintel.start(`${backend.key}-setup`, backend.env);
  try {
    const org = await revintel.cli(['orgs', 'create', '--name', `Tickets bench ${Date.now()}`, '--plan', 'enterprise'], backend.env);
    const names = [
      ...Array.from({ length: settings.connectors }, (_, k) => `revintel-ingest-${k + 1}`),
      ...(withBaseline ? Array.from({ length: settings.connectors }, (_, k) => `baseline-ingest-${k + 1}`) : []),
      'drain',
      'lag',
    ];
    const ids = new Map<string, string>();
    const parallel = backend.key === 'postgres' ? 4 : 1;
    for (let i = 0; i < names.length; i += parallel) {
      await Promise.all(
        names.slice(i, i + parallel).map(async (name) => {
          const connector = await revintel.cli(
            ['connectors', 'create', '--org', org.id, '--platform', 'generic', '--name', name, '--secret', WEBHOOK_SECRET],
            backend.env,
          );
          ids.set(name, connector.id);
        }),
      );
    }
    log(`  organisation ${org.id}; ${names.length} generic connectors, each signed (x-hub-signature-256)`);
    return {
      orgId: org.id,
      ingest: names.filter((n) => n.startsWith('revintel-ingest-')).map((n) => ids.get(n)!),
      baseline: names.filter((n) => n.startsWith('baseline-ingest-')).map((n) => ids.get(n)!),
      drain: ids.get('drain')!,
      lag: ids.get('lag')!,
    };
  } finally {
    await revintel.stop(server, `${backend.key}-setup`, log);
  }
}

/** A signed request answers 200 in revintel's shape, and a wrong signature 401 (checked on each server). */
async function checkAnswers(base: string, connectorId: string, label: string) {
  const url = `${base}/api/webhooks/tickets?connectorId=${connectorId}`;
  const body = ticketBody(`check-${label}-${Date.now()}`, 1);
  const good = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(body) },
  });
  const answer = (await good.json()) as Record<string, unknown>;
  if (
    good.status !== 200 ||
    answer.ok !== true ||
    answer.status !== 'received' ||
    typeof answer.event_id !== 'string' ||
    typeof answer.connector !== 'string'
  ) {
    throw new Error(`${label}: a signed delivery answered ${good.status} ${JSON.stringify(answer)}`);
  }
  const bad = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(`${body} `) },
  });
  await bad.text();
  if (bad.status !== 401) throw new Error(`${label}: a wrongly signed delivery answered ${bad.status}, expected 401`);
}

async function startBaseline(databaseUrl: string): Promise<{ proc: Subprocess; base: string; logFile: string }> {
  const port = freePort();
  const logFile = revintel.logFile('tickets-baseline');
  const proc = spawnTracked([BUN, join(BENCH, 'tickets-baseline.ts')], {
    cwd: workDir,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      SECRET_KEY,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_POOL_SIZE: String(settings.pool),
      BASELINE_CONNECTOR: baselineConnector,
    },
    logFile,
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor200(`${base}/readyz`, proc, 30_000);
  } catch (error) {
    await stopProcess(proc, 3_000);
    throw new Error(`tickets-baseline: ${(error as Error).message}\n--- ${logFile} ---\n${await tail(logFile)}`);
  }
  return { proc, base, logFile };
}

const describeRun = (side: string, run: IngestRun) =>
  `    ${side.padEnd(8)} ${fmtInt(run.rps).padStart(7)} req/s  p50 ${fmtMsVal(run.p50Us / 1000)}  p99 ${fmtMsVal(run.p99Us / 1000)}  max ${fmtMsVal(run.maxUs / 1000)}  ` +
  `cpu/req app ${fmtUs(run.appCpuUs)} (worker ${fmtUs(run.workerCpuUs)}) db ${fmtUs(run.dbCpuUs)}  ` +
  `events/INSERT ${run.perInsert.mean.toFixed(1)} (max ${run.perInsert.max})` +
  (run.non200 || run.socketErrors ? `  NON-200 ${run.non200} SOCKET ERRORS ${run.socketErrors} (${run.sample})` : '') +
  (run.storedMinusAcked < 0 ? `  LOST ${-run.storedMinusAcked} ACKNOWLEDGED EVENTS` : '');

async function baselineRound(backend: Backend, wrk: WrkFiles, round: number) {
  const setup = backend.setup!;
  const server = await startBaseline(backend.databaseUrl!);
  let run: IngestRun;
  try {
    if (round === 1) await checkAnswers(server.base, setup.baseline[0]!, 'baseline');
    const warm = await wrkRun(wrk, server.base, setup.baseline, 0, settings.warmup);
    const meter = await cpuMeter(server.proc, 'tickets-baseline');
    const fromMs = Date.now();
    const result = await wrkRun(wrk, server.base, setup.baseline, warm.nextOffset, settings.seconds);
    const toMs = Date.now();
    const cpu = await meter();
    run = {
      ...result,
      appCpuUs: perRequestUs(cpu.appMs, result.ok),
      workerCpuUs: NaN,
      dbCpuUs: perRequestUs(cpu.dbMs, result.ok),
      storedMinusAcked: 0,
      perInsert: { inserts: 0, mean: NaN, max: NaN },
    };
    await stopProcess(server.proc, 5_000);
    await backend.withProbe(async (probe) => {
      const [row] = await probe.rows<{ n: number }>(
        `select count(*)::int as n from ticket_events where connector_id in (${idList(setup.baseline)})`,
      );
      run.storedMinusAcked = row!.n - warm.ok - result.ok - (round === 1 ? 1 : 0);
      run.perInsert = await insertSizes(probe, setup.baseline, { fromMs, toMs });
      await clearIngest(probe, setup.baseline); // revintel's worker must never see them
    });
  } finally {
    await stopProcess(server.proc, 5_000);
    await logProblems(backend, server.logFile, 'baseline');
  }
  figures[backend.key].baseline.push(run);
  log(describeRun('baseline', run));
}

async function revintelRound(backend: Backend, wrk: WrkFiles, round: number) {
  const setup = backend.setup!;
  const label = `${backend.key}-ingest-${round}`;
  const server: Running = await revintel.start(label, backend.env);
  let run: IngestRun;
  let window: { fromMs: number; toMs: number };
  let idle: { idle: boolean; ms: number };
  let warm: WrkResult;
  try {
    if (round === 1) await checkAnswers(server.base, setup.ingest[0]!, 'revintel');
    warm = await wrkRun(wrk, server.base, setup.ingest, 0, settings.warmup);
    const warmIdle = await waitIdle(backend);
    if (!warmIdle.idle) log(`    warning: the warm-up's events were not all processed within ${fmtSeconds(settings.idleTimeoutMs)}`);
    const meter = await cpuMeter(server.proc, backend.key === 'postgres' ? 'revintel' : null);
    const fromMs = Date.now();
    const result = await wrkRun(wrk, server.base, setup.ingest, warm.nextOffset, settings.seconds);
    const toMs = Date.now();
    const cpu = await meter();
    window = { fromMs, toMs };
    run = {
      ...result,
      appCpuUs: perRequestUs(cpu.appMs, result.ok),
      workerCpuUs: perRequestUs(cpu.workerMs, result.ok),
      dbCpuUs: perRequestUs(cpu.dbMs, result.ok),
      storedMinusAcked: 0,
      perInsert: { inserts: 0, mean: NaN, max: NaN },
    };
    idle = await waitIdle(backend);
  } finally {
    await revintel.stop(server, label, log);
    await logProblems(backend, server.logFile, label);
  }
  const worker = await backend.withProbe(async (probe) => {
    const ids = setup.ingest;
    const [row] = await probe.rows<{ stored: number; processed: number; backlog: number }>(
      `select count(*)::int as stored,
              count(*) filter (where processed_at >= ${ts(window.fromMs)} and processed_at <= ${ts(window.toMs)})::int as processed,
              count(*) filter (where received_at <= ${ts(window.toMs)} and (processed_at is null or processed_at > ${ts(window.toMs)}))::int as backlog
       from ticket_events where connector_id in (${idList(ids)})`,
    );
    run.storedMinusAcked = row!.stored - warm.ok - run.ok - (round === 1 ? 1 : 0);
    run.perInsert = await insertSizes(probe, ids, window);
    const lag = await lagStats(probe, ids, window);
    const after = await batchRate(probe, ids, window.toMs);
    const figure: WorkerUnderLoad = {
      processedPerSecond: (row!.processed * 1000) / (window.toMs - window.fromMs),
      backlogAtEnd: row!.backlog,
      lag,
      after,
      idleMs: idle.ms,
      idle: idle.idle,
    };
    if (lag.dead || lag.notDone) figures[backend.key].failures.push(...(await failures(probe)));
    await clearIngest(probe, ids);
    return figure;
  });
  figures[backend.key].revintel.push(run);
  figures[backend.key].worker.push(worker);
  log(describeRun('revintel', run));
  log(
    `             worker during the run ${fmtInt(worker.processedPerSecond)} tickets/s, backlog at its end ${fmtInt(worker.backlogAtEnd)}, ` +
      `cleared ${worker.idle ? `in ${fmtSeconds(worker.idleMs)}` : `NOT within ${fmtSeconds(worker.idleMs)}`}` +
      (worker.after ? ` at ${fmtInt(worker.after.perSecond)} tickets/s` : '') +
      `; lag of the run's events p50 ${fmtMsVal(worker.lag.p50Ms)} p99 ${fmtMsVal(worker.lag.p99Ms)} max ${fmtMsVal(worker.lag.maxMs)}` +
      (worker.lag.dead || worker.lag.notDone ? `; ${worker.lag.dead} DEAD, ${worker.lag.notDone} NOT DONE` : ''),
  );
}

async function ingestPhase(backend: Backend, wrk: WrkFiles) {
  const sides = backend.key === 'postgres' ? ['baseline', 'revintel'] : ['revintel'];
  log(
    `  ingest: ${settings.rounds} round(s) of ${settings.seconds} s (+${settings.warmup} s warm-up), wrk -t${settings.threads} -c${settings.connections}, ` +
      `${settings.connectors} connector(s) per side; ${sides.join(' / ')}, each on a fresh process`,
  );
  for (let round = 1; round <= settings.rounds; round++) {
    for (const side of sides) {
      if (side === 'baseline') await baselineRound(backend, wrk, round);
      else await revintelRound(backend, wrk, round);
    }
  }
}

/** One drain by `runner` (this build or the baseline binary); `round` keeps its tickets distinct
 * from earlier drains' (the same ids would be updates, not new tickets). */
async function drainOnce(backend: Backend, runner: typeof revintel, name: string, round: number): Promise<DrainFigures> {
  const setup = backend.setup!;
  const n = settings.backlog;
  log(`  drain (${name}): ${fmtInt(n)} pending events inserted with SQL while revintel is stopped, then revintel started alone`);
  await backend.withProbe(async (probe) => {
    const headers = lit(JSON.stringify({ 'content-type': 'application/json', 'user-agent': 'revintel-bench' }));
    const chunk = 500;
    for (let i = 0; i < n; i += chunk) {
      const values: string[] = [];
      for (let j = i; j < Math.min(n, i + chunk); j++) {
        const id = `evt_${randomBytes(15).toString('base64url').replace(/[-_]/g, 'x')}`;
        values.push(
          `(${lit(id)}, ${lit(setup.orgId)}, ${lit(setup.drain)}, 'webhook', ${lit(ticketBody(`D${round}-${j}`, j))}, ${headers}::jsonb)`,
        );
      }
      await probe.exec(`insert into ticket_events (id, org_id, connector_id, source, body, headers) values ${values.join(', ')}`);
    }
    await probe.exec('vacuum analyze ticket_events');
  });
  const label = `${backend.key}-drain-${name}-${round}`;
  const startedAt = Date.now();
  const server = await runner.start(label, backend.env);
  let idle: { idle: boolean; ms: number };
  let cpu: CpuSpent;
  try {
    const meter = await cpuMeter(server.proc, backend.key === 'postgres' ? 'revintel' : null);
    idle = await waitIdle(backend);
    cpu = await meter();
  } finally {
    await runner.stop(server, label, log);
    await logProblems(backend, server.logFile, label);
  }
  const result = await backend.withProbe(async (probe) => {
    const rate = await batchRate(probe, [setup.drain], startedAt - 1);
    const lag = await lagStats(probe, [setup.drain], null);
    if (lag.dead || lag.notDone) figures[backend.key].failures.push(...(await failures(probe)));
    return { rate, lag };
  });
  const startToDrainedMs = result.rate ? result.rate.lastAt - startedAt : NaN;
  const drained: DrainFigures = { backlog: n, rate: result.rate, startToDrainedMs, idle: idle.idle, lag: result.lag, cpu };
  log(
    `    ${result.rate ? `${fmtInt(result.rate.perSecond)} tickets/s (${fmtInt(result.rate.events)} events in ${result.rate.batches} batches over ${fmtSeconds(result.rate.lastAt - result.rate.firstAt)})` : 'no rate: fewer than two batches'}; ` +
      `start → drained ${fmtSeconds(startToDrainedMs)}; CPU per ticket: worker thread ${fmtUs(perRequestUs(cpu.workerMs, n))}, ` +
      `whole process ${fmtUs(perRequestUs(cpu.appMs, n))}, db ${backend.key === 'postgres' ? fmtUs(perRequestUs(cpu.dbMs, n)) : 'in process'}` +
      (result.lag.dead || result.lag.notDone ? `; ${result.lag.dead} DEAD, ${result.lag.notDone} NOT DONE` : ''),
  );
  return drained;
}

/** The drain of this build; with --baseline-bin, alternating with the baseline binary's. */
async function drainPhase(backend: Backend) {
  const f = figures[backend.key];
  if (!baselineRevintel) {
    f.drain = await drainOnce(backend, revintel, 'this build', 0);
    return;
  }
  const ours: DrainFigures[] = [];
  const theirs: DrainFigures[] = [];
  for (let round = 0; round < settings.drainRounds; round++) {
    theirs.push(await drainOnce(backend, baselineRevintel, 'baseline', 2 * round));
    ours.push(await drainOnce(backend, revintel, 'this build', 2 * round + 1));
  }
  f.drain = ours.at(-1);
  f.drainRates = { baseline: theirs.map((d) => d.rate?.perSecond ?? NaN), ours: ours.map((d) => d.rate?.perSecond ?? NaN) };
}

async function sustainedPhase(backend: Backend) {
  const setup = backend.setup!;
  const count = Math.round(settings.rate * settings.lagSeconds);
  log(
    `  sustained: ${fmtInt(settings.rate)} requests/s for ${settings.lagSeconds} s (+${settings.warmup} s warm-up; open loop, at most ${MAX_IN_FLIGHT} in flight), distinct tickets`,
  );
  const requests = Array.from({ length: count }, (_, i) => {
    const body = ticketBody(`L-${i}`, i);
    return { body, signature: sign(body) };
  });
  const label = `${backend.key}-sustained`;
  const server = await revintel.start(label, backend.env);
  let send: OpenLoopResult;
  let cpu: CpuSpent;
  let idle: { idle: boolean; ms: number };
  try {
    await checkAnswers(server.base, setup.lag, 'revintel');
    // Warm-up at the same rate to another connector (the drain one, whose events are done), then
    // wait for the worker to finish it: the measured events find a warm process and an empty queue.
    const warmup = Array.from({ length: Math.round(settings.rate * settings.warmup) }, (_, i) => {
      const body = ticketBody(`W-${i}`, i);
      return { body, signature: sign(body) };
    });
    await openLoop(`${server.base}/api/webhooks/tickets?connectorId=${setup.drain}`, warmup, settings.rate);
    await waitIdle(backend);
    const meter = await cpuMeter(server.proc, backend.key === 'postgres' ? 'revintel' : null);
    send = await openLoop(`${server.base}/api/webhooks/tickets?connectorId=${setup.lag}`, requests, settings.rate);
    cpu = await meter();
    idle = await waitIdle(backend);
  } finally {
    await revintel.stop(server, label, log);
    await logProblems(backend, server.logFile, label);
  }
  const { lag, perInsert } = await backend.withProbe(async (probe) => {
    const stats = await lagStats(probe, [setup.lag], null);
    if (stats.dead || stats.notDone) figures[backend.key].failures.push(...(await failures(probe)));
    return { lag: stats, perInsert: await insertSizes(probe, [setup.lag], null) };
  });
  figures[backend.key].sustained = { send, lag, cpu, idle: idle.idle, perInsert };
  const sorted = [...send.latenciesMs].sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
  log(
    `    sent ${fmtInt(send.sent)} in ${fmtSeconds(send.spanMs)} (${fmtInt((send.sent * 1000) / send.spanMs)}/s), ${fmtInt(send.ok)} × 200` +
      (send.non200 || send.failed || send.dropped
        ? `, NON-200 ${send.non200}, FAILED ${send.failed}, DROPPED ${send.dropped} (${send.sample})`
        : '') +
      `; answer p50 ${fmtMsVal(pct(0.5))} p99 ${fmtMsVal(pct(0.99))}; lag p50 ${fmtMsVal(lag.p50Ms)} p99 ${fmtMsVal(lag.p99Ms)} max ${fmtMsVal(lag.maxMs)}; ` +
      `CPU app ${Math.round((cpu.appMs / send.spanMs) * 100)}% (worker ${Math.round((cpu.workerMs / send.spanMs) * 100)}%)` +
      (Number.isFinite(cpu.dbMs) ? ` db ${Math.round((cpu.dbMs / send.spanMs) * 100)}%` : '') +
      ` of a core; events/INSERT ${perInsert.mean.toFixed(1)} (max ${perInsert.max})` +
      (lag.stored !== send.ok + 1 ? `; STORED ${lag.stored} for ${send.ok + 1} acknowledged` : ''),
  );
}

/** Setup, then the three figures; each failure is recorded and the next backend still runs. */
// --- ticket intelligence alone ------------------------------------------------------------------

interface IntelligenceTiming {
  corpus: string;
  tickets: number;
  ourUs: number;
  baselineUs: number | null;
}
const intelligenceFigures: IntelligenceTiming[] = [];

/** µs per ticket of analyseTicket, this checkout's and (--baseline-src) the older one's, each pass
 * in a process of its own (bench/intelligence-timing.ts), alternating, 5 passes each. */
async function intelligencePhase() {
  log(`\n[intelligence] µs per ticket of analyseTicket${opts['baseline-src'] ? `, beside ${opts['baseline-src']}` : ''}`);
  const bodies = Array.from({ length: 2000 }, (_, n) => {
    const { subject, description } = JSON.parse(ticketBody(`I-${n}`, n)).ticket;
    return JSON.stringify({ subject, description });
  });
  const messages = readFileSync(join(REPO, 'test', 'fixtures', 'intelligence', 'signals.heldout.ndjson'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.stringify({ subject: null, description: JSON.parse(line).text }));
  const baselineModule = opts['baseline-src'] ? join(resolve(opts['baseline-src']), 'src', 'modules', 'tickets', 'intelligence.ts') : null;
  const ourModule = join(REPO, 'src', 'modules', 'tickets', 'intelligence.ts');
  const time = async (file: string, module: string) => {
    const result = await runToEnd([BUN, join(BENCH, 'intelligence-timing.ts'), file, module, '1'], {
      cwd: REPO,
      env: process.env,
      timeoutMs: 600_000,
    });
    if (result.code !== 0) throw new Error(`intelligence timing failed: ${result.stderr}`);
    return (JSON.parse(result.stdout) as { us: number[] }).us[0]!;
  };
  for (const [corpus, lines] of [
    ['bench bodies (~1 KB)', bodies],
    ['real customer messages (held-out set)', messages],
  ] as const) {
    const file = join(workDir, `intelligence-${intelligenceFigures.length}.ndjson`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let pass = 0; pass < 5; pass++) {
      if (baselineModule) theirs.push(await time(file, baselineModule));
      ours.push(await time(file, ourModule));
    }
    const timing = { corpus, tickets: lines.length, ourUs: median(ours), baselineUs: baselineModule ? median(theirs) : null };
    intelligenceFigures.push(timing);
    log(
      `  ${corpus}, ${fmtInt(lines.length)} tickets: ${fmtUs(timing.ourUs)} per ticket${timing.baselineUs === null ? '' : ` (baseline ${fmtUs(timing.baselineUs)})`}`,
    );
  }
}

async function runBackend(backend: Backend, wrk: WrkFiles) {
  const f = figures[backend.key];
  try {
    log(
      `\n[${backend.name}] ${backend.databaseUrl ? `database ${PG_DB}` : `DATA_DIR ${backend.dataDir}`}: migrate, organisation, connectors`,
    );
    backend.setup = await setupBackend(backend, backend.key === 'postgres');
    if (phases.has('ingest')) await ingestPhase(backend, wrk);
    if (phases.has('drain')) await drainPhase(backend);
    if (phases.has('sustained')) await sustainedPhase(backend);
    const rest = await backend.withProbe(async (probe) =>
      probe.rows<{ n: number }>(`select count(*)::int as n from ticket_events where status <> 'done'`),
    );
    if (rest[0]!.n > 0) f.notes.push(`${rest[0]!.n} events not done at the end`);
  } catch (error) {
    f.error = (error as Error).message;
    log(`  FAILED: ${f.error}`);
  } finally {
    await backend.close();
  }
}

let databaseCreated = false;

async function postgresPhase(wrk: WrkFiles) {
  let databaseUrl: string;
  try {
    databaseUrl = await recreateDatabase(PG_ADMIN_URL, PG_DB);
    databaseCreated = true;
  } catch (error) {
    figures.postgres.skipped = `PostgreSQL not reachable at ${PG_ADMIN_URL}: ${(error as Error).message}`;
    log(`\n[PostgreSQL] skipped: ${figures.postgres.skipped}`);
    return;
  }
  try {
    await runBackend(postgresBackend(databaseUrl), wrk);
  } finally {
    if (!opts.keep) {
      await dropDatabase(PG_ADMIN_URL, PG_DB).catch((error) => log(`warning: could not drop ${PG_DB}: ${error.message}`));
      databaseCreated = false;
    }
  }
}

async function embeddedPhase(wrk: WrkFiles) {
  await runBackend(embeddedBackend(makeTempDir('tickets-data')), wrk);
}

// --- report --------------------------------------------------------------------------------------

function report() {
  const sections: string[] = [];
  for (const key of ['postgres', 'embedded'] as const) {
    if (!only.has(key) || !onDatabase) continue;
    const f = figures[key];
    const name = key === 'postgres' ? 'PostgreSQL' : 'PGlite';
    const targeted = key === 'postgres';
    const verdict = (pass: boolean | null) =>
      pass === null ? 'n/a' : targeted ? (pass ? 'PASS' : 'MISS') : `info (${pass ? 'pass' : 'miss'})`;
    const rows: string[][] = [];
    const med = <T>(runs: T[], pick: (r: T) => number) => (runs.length ? median(runs.map(pick)) : NaN);
    const b = f.baseline;
    const v = f.revintel;
    const baselineNA = key === 'embedded' ? 'n/a (PG only)' : 'n/a';
    const bRps = med(b, (r) => r.rps);
    const vRps = med(v, (r) => r.rps);
    const ratio = vRps / bRps;
    const vP99 = med(v, (r) => r.p99Us) / 1000;
    const bad = (runs: IngestRun[]) => runs.reduce((a, r) => a + r.non200 + r.socketErrors, 0);
    const lost = (runs: IngestRun[]) => runs.reduce((a, r) => a + Math.max(0, -r.storedMinusAcked), 0);
    const invalid = bad(v) + bad(b) + lost(v) + lost(b);
    rows.push([
      'ingest: acknowledged req/s',
      b.length ? fmtInt(bRps) : baselineNA,
      v.length ? fmtInt(vRps) : 'n/a',
      key === 'postgres' ? `>= ${TARGETS.ratio}x baseline` : '—',
      key === 'postgres' && b.length && v.length
        ? `${invalid ? 'INVALID ' : ''}${verdict(ratio >= TARGETS.ratio)} (${fmtRatio(ratio)})`
        : 'n/a',
    ]);
    rows.push([
      'ingest: latency p50',
      b.length ? fmtMsVal(med(b, (r) => r.p50Us) / 1000) : baselineNA,
      fmtMsVal(med(v, (r) => r.p50Us) / 1000),
      '—',
      '',
    ]);
    rows.push([
      `ingest: latency p99 (${settings.connections} connections)`,
      b.length ? fmtMsVal(med(b, (r) => r.p99Us) / 1000) : baselineNA,
      fmtMsVal(vP99),
      `< ${TARGETS.p99Ms} ms`,
      v.length ? verdict(vP99 < TARGETS.p99Ms) : 'n/a',
    ]);
    rows.push([
      'ingest: non-200 + socket errors; acked events not stored',
      b.length ? `${bad(b)}; ${lost(b)}` : baselineNA,
      v.length ? `${bad(v)}; ${lost(v)}` : 'n/a',
      'none',
      v.length ? (invalid ? 'FLAGGED' : 'ok') : 'n/a',
    ]);
    rows.push([
      'ingest: CPU per request, app (worker) / db',
      b.length ? `${fmtUs(med(b, (r) => r.appCpuUs))} / ${fmtUs(med(b, (r) => r.dbCpuUs))}` : baselineNA,
      v.length
        ? `${fmtUs(med(v, (r) => r.appCpuUs))} (${fmtUs(med(v, (r) => r.workerCpuUs))}) / ${key === 'postgres' ? fmtUs(med(v, (r) => r.dbCpuUs)) : 'in app'}`
        : 'n/a',
      '—',
      '',
    ]);
    rows.push([
      'ingest: events per INSERT statement, mean / max',
      b.length ? `${med(b, (r) => r.perInsert.mean).toFixed(1)} / ${fmtInt(med(b, (r) => r.perInsert.max))}` : baselineNA,
      v.length ? `${med(v, (r) => r.perInsert.mean).toFixed(1)} / ${fmtInt(med(v, (r) => r.perInsert.max))}` : 'n/a',
      '—',
      '',
    ]);
    const w = f.worker;
    rows.push([
      'worker during ingest: tickets/s; backlog at end',
      'n/a',
      w.length ? `${fmtInt(med(w, (x) => x.processedPerSecond))}/s; ${fmtInt(med(w, (x) => x.backlogAtEnd))}` : 'n/a',
      '—',
      '',
    ]);
    rows.push([
      'worker during ingest: lag p50 / p99 / max',
      'n/a',
      w.length
        ? `${fmtMsVal(med(w, (x) => x.lag.p50Ms))} / ${fmtMsVal(med(w, (x) => x.lag.p99Ms))} / ${fmtMsVal(med(w, (x) => x.lag.maxMs))}`
        : 'n/a',
      '—',
      '',
    ]);
    const afterRate = med(w, (x) => x.after?.perSecond ?? NaN);
    rows.push([
      'worker after ingest: backlog cleared at',
      'n/a',
      !w.length ? 'n/a' : Number.isFinite(afterRate) ? `${fmtInt(afterRate)} tickets/s` : 'n/a (backlog too small)',
      '—',
      '',
    ]);
    const d = f.drain;
    rows.push([
      `worker drain: ${fmtInt(settings.backlog)} pending, nothing else running`,
      'n/a',
      d?.rate ? `${fmtInt(d.rate.perSecond)} tickets/s` : 'n/a',
      `>= ${fmtInt(TARGETS.drainPerSecond)}/s`,
      d?.rate ? `${d.lag.dead || d.lag.notDone ? 'FLAGGED ' : ''}${verdict(d.rate.perSecond >= TARGETS.drainPerSecond)}` : 'n/a',
    ]);
    if (f.drainRates) {
      const before = median(f.drainRates.baseline);
      const after = median(f.drainRates.ours);
      rows.push([
        `worker drain, baseline binary vs this build (median of ${f.drainRates.ours.length} each)`,
        `${fmtInt(before)} tickets/s`,
        `${fmtInt(after)} tickets/s (${fmtRatio(after / before)})`,
        '>= 0.80×',
        verdict(after / before >= 0.8),
      ]);
    }
    rows.push(['worker drain: start → drained', 'n/a', d ? fmtSeconds(d.startToDrainedMs) : 'n/a', '—', '']);
    rows.push([
      'worker drain: CPU per ticket, worker thread (process) / db',
      'n/a',
      d
        ? `${fmtUs(perRequestUs(d.cpu.workerMs, d.backlog))} (${fmtUs(perRequestUs(d.cpu.appMs, d.backlog))}) / ${key === 'postgres' ? fmtUs(perRequestUs(d.cpu.dbMs, d.backlog)) : 'in process'}`
        : 'n/a',
      '—',
      '',
    ]);
    const s = f.sustained;
    if (s) {
      const sorted = [...s.send.latenciesMs].sort((a, c) => a - c);
      const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
      const problems = s.send.non200 + s.send.failed + s.send.dropped;
      rows.push([
        `${fmtInt(settings.rate)}/s sustained: 200s / sent; non-200, failed, dropped`,
        'n/a',
        `${fmtInt(s.send.ok)} / ${fmtInt(s.send.sent)}; ${problems}`,
        'none',
        problems ? 'FLAGGED' : 'ok',
      ]);
      rows.push([
        `${fmtInt(settings.rate)}/s sustained: answer p50 / p99`,
        'n/a',
        `${fmtMsVal(pct(0.5))} / ${fmtMsVal(pct(0.99))}`,
        '—',
        '',
      ]);
      rows.push([
        `${fmtInt(settings.rate)}/s sustained: lag p50 / p99 / max`,
        'n/a',
        `${fmtMsVal(s.lag.p50Ms)} / ${fmtMsVal(s.lag.p99Ms)} / ${fmtMsVal(s.lag.maxMs)}`,
        `max < ${fmtInt(TARGETS.lagMaxMs)} ms`,
        Number.isFinite(s.lag.maxMs) ? `${s.lag.dead || s.lag.notDone ? 'FLAGGED ' : ''}${verdict(s.lag.maxMs < TARGETS.lagMaxMs)}` : 'n/a',
      ]);
      const pctOfCore = (ms: number) => (Number.isFinite(ms) ? `${Math.round((ms / s.send.spanMs) * 100)}%` : 'in app');
      rows.push([
        `${fmtInt(settings.rate)}/s sustained: CPU app (worker) / db, of a core`,
        'n/a',
        `${pctOfCore(s.cpu.appMs)} (${pctOfCore(s.cpu.workerMs)}) / ${pctOfCore(s.cpu.dbMs)}`,
        '—',
        '',
      ]);
    } else {
      rows.push([`${fmtInt(settings.rate)}/s sustained`, 'n/a', 'n/a', `max lag < ${fmtInt(TARGETS.lagMaxMs)} ms`, 'n/a']);
    }
    let text = `[${name}]${key === 'embedded' ? " — the baseline is PostgreSQL-only (postgres.js): n/a here; targets are PostgreSQL's, shown for information" : ''}\n`;
    text += table(['figure', 'baseline', 'revintel', 'target', 'result'], rows);
    for (const failure of new Set(f.failures)) text += `\nevents not done: ${failure}`;
    for (const note of f.notes) text += `\nnote: ${note}`;
    if (f.skipped) text += `\nskipped: ${f.skipped}`;
    if (f.error) text += `\nerror: ${f.error.split('\n')[0]}`;
    sections.push(text);
  }
  log(`\n${'='.repeat(110)}`);
  log(
    `revintel ticket webhook benchmark — ${new Date().toISOString()} — ${navigator.hardwareConcurrency} CPUs, bun ${Bun.version}, ` +
      `wrk -t${settings.threads} -c${settings.connections}, ${settings.rounds} round(s) × ${settings.seconds} s per side (+${settings.warmup} s warm-up), ` +
      `pool ${settings.pool}, baseline connector lookup: ${baselineConnector === 'query' ? 'a query per request' : 'cached'}; ` +
      `load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} (other work on the machine skews the figures)`,
  );
  log(
    `Medians over the rounds; ratio = revintel ÷ baseline acknowledged req/s (bench/tickets-baseline.ts: Bun.serve, one INSERT per request, same run). ` +
      `Bodies ~1 KB, signed; ${fmtInt(settings.bodies)} × ${settings.connectors} connectors distinct tickets per round. ` +
      `A closed loop of ${settings.connections} connections with p99 < ${TARGETS.p99Ms} ms needs at least ${fmtInt((settings.connections * 1000) / TARGETS.p99Ms)} req/s (Little's law).\n`,
  );
  if (intelligenceFigures.length) {
    sections.push(
      'Ticket intelligence alone (analyseTicket, CPU µs per ticket, median of 5 passes)\n' +
        table(
          ['texts', 'tickets', 'this build', 'baseline'],
          intelligenceFigures.map((x) => [
            x.corpus,
            fmtInt(x.tickets),
            fmtUs(x.ourUs),
            x.baselineUs === null ? 'n/a' : fmtUs(x.baselineUs),
          ]),
        ),
    );
  }
  log(sections.join('\n\n'));
  log('='.repeat(110));
}

// --- main ----------------------------------------------------------------------------------------

stopOnSignal(log, () => (databaseCreated && !opts.keep ? dropDatabase(PG_ADMIN_URL, PG_DB) : undefined));

let failed = false;
const began = performance.now();
const loadAtStart = loadavg();
try {
  await ensureBinary(opts.build!, log);
  log(`revintel ticket webhook bench: ${BIN}; ${quick ? 'QUICK smoke run' : 'full run'}; logs in ${logDir}${opts.keep ? ' (kept)' : ''}`);
  const wrk = await writeWrkFiles();
  if (phases.has('intelligence')) await intelligencePhase();
  if (onDatabase && only.has('postgres')) await postgresPhase(wrk);
  if (onDatabase && only.has('embedded')) await embeddedPhase(wrk);
  report();
  failed = (['postgres', 'embedded'] as const).some((key) => only.has(key) && figures[key].error);
} catch (error) {
  failed = true;
  console.error(`bench failed: ${(error as Error).stack ?? error}`);
} finally {
  await cleanupAll();
  log(`total ${fmtSeconds(performance.now() - began)}`);
}
process.exit(failed ? 1 : 0);
