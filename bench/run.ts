// bun run bench [-- --quick] — performance figures of the built binary (dist/revintel).
//
// What is measured (each figure is printed next to its target; targets are reported, never asserted:
// the run exits 0 whatever the figures are, and non-zero only if something could not be measured):
//
// 1. Throughput of authenticated GET /api/me, rate limiter on. The bench organisation gets huge
//    limit overrides so nothing is refused (any 4xx/5xx is counted and flagged). The baseline is a
//    plain Bun.serve (bench/baseline.ts, a separate process) answering the same bytes, loaded with
//    the same tool, connections and duration in the same run, alternating baseline, revintel,
//    baseline, revintel… so drift on this noisy machine hits both. Figures: median requests/s and
//    median p50/p99 latency over the rounds, and ratio = revintel median req/s / baseline median
//    req/s. Three set-ups:
//      - embedded PGlite + memory limiter            (in-process limiter; target >= 0.5x baseline)
//      - PostgreSQL + postgres limiter               (shared store;       target >= 0.2x baseline)
//      - PostgreSQL + redis limiter (REDIS_URL)      (shared store;       target >= 0.2x baseline)
//    Load tool: wrk (with bench/wrk-report.lua for the Authorization header and the percentiles) when
//    installed, else bench/loadgen.ts (Bun fetch, separate process). Each measured run is preceded
//    by a short discarded warm-up run against the same server.
//
// 2. Start-up time: from spawning `dist/revintel serve` to the first 200 from GET /readyz (polled
//    every ~10 ms). Includes loading the 130 MB executable, opening the database, migrations (a
//    no-op when already applied), starting the worker and listening. Median of several starts:
//      - PostgreSQL, database already migrated                          (target < 0.5 s)
//      - embedded, fresh DATA_DIR (an empty temp dir: cluster created)  (target < 2 s)
//      - embedded, restart on an existing DATA_DIR                      (target < 1 s)
//
// 3. Memory: VmRSS of the revintel process (/proc/<pid>/status; it includes the worker thread and,
//    on embedded, PGlite, which run inside the same process). "Idle" is read ~2 s after /readyz
//    first answered 200, before any load; "loaded" is the maximum of samples taken every 100 ms
//    during the revintel load runs. Targets: idle < 80 MB on PostgreSQL, < 200 MB on PGlite
//    (MB = 10^6 bytes); loaded figures are for information.
//
// Options (after `bun run bench --`):
//   --quick               smoke test: 3 s load runs, 1 round, 1 start per start-up figure
//   --duration S          seconds per measured load run (default 10; quick 3)
//   --rounds N            baseline/revintel alternations per set-up (default 3; quick 1)
//   --warmup S            seconds of discarded warm-up before each measured run (default 1)
//   --connections N       concurrent keep-alive connections (default 64)
//   --threads N           wrk threads (default 2)
//   --starts N            starts per start-up figure (default 5; quick 1)
//   --loadgen wrk|bun     force the load tool (default: wrk if on PATH, else bun)
//   --only LIST           comma list of embedded,postgres,redis (default: all)
//   --build               run `bun run build` first even if dist/revintel is newer than src/
//   --keep                keep the temp dirs and the revintel_bench database for inspection
// Environment: BENCH_PG_URL (a PostgreSQL URL used to create/drop the bench database; default
// postgres://postgres@127.0.0.1:5432/postgres), BENCH_PG_DB (default revintel_bench),
// BENCH_REDIS_URL (default redis://127.0.0.1:6379). PostgreSQL/Redis set-ups that cannot connect
// are reported as skipped.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  cleanupAll,
  stopOnSignal,
  fmtInt,
  fmtMB,
  fmtMs,
  fmtRatio,
  fmtSeconds,
  freePort,
  makeTempDir,
  removeTempDir,
  median,
  rssMB,
  sampleRss,
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
  chooseLoadTool,
  dropDatabase as dropBenchDatabase,
  ensureBinary,
  loadRun as runLoad,
  recreateDatabase as recreateBenchDatabase,
  revintelRunner,
  type LoadResult,
  type Running,
} from './revintel.ts';

// --- options -------------------------------------------------------------------------------------

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    quick: { type: 'boolean', default: false },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    threads: { type: 'string' },
    starts: { type: 'string' },
    loadgen: { type: 'string' },
    only: { type: 'string' },
    build: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) await printHeaderAndExit(import.meta.path);

const quick = opts.quick!;
const settings = {
  duration: positiveOption(opts.duration, quick ? 3 : 10),
  rounds: positiveOption(opts.rounds, quick ? 1 : 3),
  warmup: positiveOption(opts.warmup, 1),
  connections: positiveOption(opts.connections, 64),
  threads: positiveOption(opts.threads, 2),
  starts: positiveOption(opts.starts, quick ? 1 : 5),
};
const only = new Set((opts.only ?? 'embedded,postgres,redis').split(',').map((s) => s.trim()));
setKeepTempDirs(opts.keep!);

const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_DB = process.env.BENCH_PG_DB ?? 'revintel_bench';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

const TARGETS = {
  ratioInProcess: 0.5,
  ratioShared: 0.2,
  startPostgresMs: 500,
  startFreshEmbeddedMs: 2_000,
  startRestartEmbeddedMs: 1_000,
  idleRssPostgresMB: 80,
  idleRssPgliteMB: 200,
};

const log = (msg: string) => console.log(msg);

// --- the binary ----------------------------------------------------------------------------------

const workDir = makeTempDir('work'); // cwd of every revintel process (so nothing lands in the repo)
const logDir = makeTempDir('logs');
const revintel = revintelRunner({ workDir, logDir });
const startRevintel = revintel.start;
const stopRevintel = (server: Running, label: string) => revintel.stop(server, label, log);
const cli = (args: string[], env: Record<string, string>) => revintel.cli(args, env);

/** An organisation whose limits nothing in this benchmark can reach, and a key for it. */
async function createBenchKey(env: Record<string, string>): Promise<{ orgId: string; secret: string }> {
  const org = await cli(
    [
      'orgs',
      'create',
      '--name',
      `bench-${Date.now()}`,
      '--plan',
      'enterprise',
      '--limit-per-minute',
      '100000000',
      '--limit-per-day',
      '1000000000',
    ],
    env,
  );
  const key = await cli(['keys', 'create', '--org', org.id, '--name', 'bench'], env);
  if (typeof key.secret !== 'string') throw new Error(`keys create printed no secret: ${JSON.stringify(key)}`);
  log(`  bench organisation ${org.id} (limits ${org.limit_per_minute}/min, ${org.limit_per_day}/day), key ${key.prefix}…`);
  return { orgId: org.id, secret: key.secret };
}

// --- load ----------------------------------------------------------------------------------------

const loadTool = chooseLoadTool(opts.loadgen);

/** One closed-loop load run against `url` with the load tool; returns req/s and latency percentiles. */
const loadRun = (url: string, authorization: string, seconds: number) => runLoad(loadTool, url, authorization, seconds, settings);

interface LoadScenario {
  name: string;
  target: number;
  baseline: LoadResult[];
  revintel: LoadResult[];
  idleRssMB: number;
  loadedRssMB: number;
  baselineRssMB: number;
  error?: string;
}

const medianOf = (runs: LoadResult[], pick: (r: LoadResult) => number) => median(runs.map(pick));

/**
 * Alternates baseline and revintel runs on the same URL path with the same key header. The baseline
 * is started here, answering the bytes revintel just answered for /api/me.
 */
async function measureLoad(scenario: LoadScenario, server: Running, secret: string) {
  const authorization = `Bearer ${secret}`;
  const probe = await fetch(`${server.base}/api/me`, { headers: { authorization } });
  const body = await probe.text();
  if (probe.status !== 200) throw new Error(`GET /api/me answered ${probe.status}: ${body}`);
  const headers: Record<string, string> = { 'content-type': probe.headers.get('content-type') ?? 'application/json' };
  for (const [name, value] of probe.headers) {
    if (name.startsWith('x-ratelimit-') || name === 'x-request-id') headers[name] = value;
  }
  const responseFile = join(makeTempDir('baseline'), 'response.json');
  writeFileSync(responseFile, JSON.stringify({ body, headers }));

  const baselinePort = freePort();
  const baselineLog = revintel.logFile('baseline');
  const baseline = spawnTracked([BUN, join(BENCH, 'baseline.ts'), responseFile], {
    cwd: workDir,
    env: { ...process.env, PORT: String(baselinePort), HOST: '127.0.0.1' },
    logFile: baselineLog,
  });
  try {
    await waitFor200(`http://127.0.0.1:${baselinePort}/readyz`, baseline, 30_000);
    const targets = [
      { kind: 'baseline' as const, url: `http://127.0.0.1:${baselinePort}/api/me`, proc: baseline, runs: scenario.baseline },
      { kind: 'revintel' as const, url: `${server.base}/api/me`, proc: server.proc, runs: scenario.revintel },
    ];
    for (let round = 1; round <= settings.rounds; round++) {
      for (const t of targets) {
        await loadRun(t.url, authorization, settings.warmup); // warm-up, discarded
        const sampler = sampleRss(t.proc.pid);
        const result = await loadRun(t.url, authorization, settings.duration);
        const maxRss = sampler.stop();
        if (t.kind === 'revintel') scenario.loadedRssMB = Math.max(scenario.loadedRssMB, maxRss);
        else scenario.baselineRssMB = Math.max(scenario.baselineRssMB, maxRss);
        t.runs.push(result);
        log(
          `  round ${round}/${settings.rounds} ${t.kind.padEnd(8)} ${fmtInt(result.rps).padStart(7)} req/s  ` +
            `p50 ${fmtMs(result.p50Us)}  p99 ${fmtMs(result.p99Us)}  rss max ${fmtMB(maxRss)}` +
            (result.errors ? `  ERRORS ${result.errors}` : ''),
        );
      }
    }
  } finally {
    await stopProcess(baseline, 5_000);
  }
}

/** Starts revintel with `env`, reads idle RSS, then measures load; records failures in the scenario. */
async function loadScenario(scenario: LoadScenario, env: Record<string, string>, secret: () => Promise<string>) {
  log(
    `\n[${scenario.name}] load: ${settings.rounds} round(s) of ${settings.duration} s, ${settings.connections} connections, ${loadTool.name}`,
  );
  let server: Running | null = null;
  try {
    server = await startRevintel(scenario.name, env);
    await sleep(2_000);
    scenario.idleRssMB = rssMB(server.proc.pid) ?? NaN;
    log(`  ready in ${fmtSeconds(server.readyMs)}; idle RSS ${fmtMB(scenario.idleRssMB)}`);
    await measureLoad(scenario, server, await secret());
  } catch (error) {
    scenario.error = (error as Error).message;
    log(`  FAILED: ${scenario.error}`);
  } finally {
    if (server) await stopRevintel(server, scenario.name);
  }
}

const newScenario = (name: string, target: number): LoadScenario => ({
  name,
  target,
  baseline: [],
  revintel: [],
  idleRssMB: NaN,
  loadedRssMB: 0,
  baselineRssMB: 0,
});

// --- start-up ------------------------------------------------------------------------------------

interface StartupFigure {
  name: string;
  targetMs: number;
  samples: number[];
  error?: string;
}

async function measureStart(figure: StartupFigure, env: () => Record<string, string>) {
  try {
    for (let i = 1; i <= settings.starts; i++) {
      const server = await startRevintel(figure.name, env());
      figure.samples.push(server.readyMs);
      await stopRevintel(server, figure.name);
      log(`  ${figure.name} ${i}/${settings.starts}: ${fmtSeconds(server.readyMs)}`);
    }
  } catch (error) {
    figure.error = (error as Error).message;
    log(`  FAILED: ${figure.error}`);
  }
}

// --- PostgreSQL and Redis set-up -----------------------------------------------------------------

const recreateDatabase = () => recreateBenchDatabase(PG_ADMIN_URL, PG_DB);
const dropDatabase = () => dropBenchDatabase(PG_ADMIN_URL, PG_DB);

async function redisReachable(): Promise<boolean> {
  try {
    const { RedisClient } = await import('bun');
    const client = new RedisClient(REDIS_URL, { connectionTimeout: 2_000, autoReconnect: false });
    try {
      return (await client.send('PING', [])) === 'PONG';
    } finally {
      client.close();
    }
  } catch {
    return false;
  }
}

/** Removes the limiter's counters for the bench organisation (they would otherwise live a day). */
async function deleteRedisCounters(orgId: string) {
  const { RedisClient } = await import('bun');
  const client = new RedisClient(REDIS_URL, { connectionTimeout: 2_000, autoReconnect: false });
  try {
    let cursor = '0';
    do {
      const [next, keys] = (await client.send('SCAN', [cursor, 'MATCH', `*${orgId}*`, 'COUNT', '1000'])) as [string, string[]];
      cursor = next;
      if (keys.length) await client.send('DEL', keys);
    } while (cursor !== '0');
  } finally {
    client.close();
  }
}

// --- main ----------------------------------------------------------------------------------------

const startupFigures = {
  postgres: { name: 'start PostgreSQL (migrated)', targetMs: TARGETS.startPostgresMs, samples: [] } as StartupFigure,
  fresh: { name: 'start embedded, fresh DATA_DIR', targetMs: TARGETS.startFreshEmbeddedMs, samples: [] } as StartupFigure,
  restart: { name: 'start embedded, restart', targetMs: TARGETS.startRestartEmbeddedMs, samples: [] } as StartupFigure,
};
const scenarios = {
  embedded: newScenario('embedded + memory limiter', TARGETS.ratioInProcess),
  postgres: newScenario('PostgreSQL + postgres limiter', TARGETS.ratioShared),
  redis: newScenario('PostgreSQL + redis limiter', TARGETS.ratioShared),
};
const skipped = new Map<string, string>();
/** The bench database exists and has to be dropped on the way out. */
let databaseCreated = false;

async function embeddedPhase() {
  log(`\n[embedded] start-up, ${settings.starts} start(s) each`);
  let dataDir = '';
  await measureStart(startupFigures.fresh, () => {
    if (dataDir) removeTempDir(dataDir); // keep only the last one (the restarts use it)
    dataDir = makeTempDir('data'); // empty: revintel creates the cluster in it
    return { DATA_DIR: dataDir };
  });
  if (!dataDir || startupFigures.fresh.error) {
    scenarios.embedded.error = startupFigures.restart.error = 'no embedded DATA_DIR (fresh start failed)';
    return;
  }
  await measureStart(startupFigures.restart, () => ({ DATA_DIR: dataDir }));
  // The key is created through the running server's admin socket, after the idle RSS reading.
  await loadScenario(scenarios.embedded, { DATA_DIR: dataDir }, async () => (await createBenchKey({ DATA_DIR: dataDir })).secret);
}

async function postgresPhase() {
  let databaseUrl: string;
  try {
    databaseUrl = await recreateDatabase();
    databaseCreated = true;
  } catch (error) {
    const reason = `PostgreSQL not reachable at ${PG_ADMIN_URL}: ${(error as Error).message}`;
    for (const k of ['postgres', 'redis'] as const) skipped.set(scenarios[k].name, reason);
    skipped.set(startupFigures.postgres.name, reason);
    log(`\n[postgres] skipped: ${reason}`);
    return;
  }
  try {
    log(`\n[postgres] database ${PG_DB}: migrate, create bench key`);
    const env = { DATABASE_URL: databaseUrl };
    await cli(['migrate'], env);
    const { orgId, secret } = await createBenchKey(env);

    if (only.has('postgres')) {
      log(`[postgres] start-up, ${settings.starts} start(s)`);
      await measureStart(startupFigures.postgres, () => env);
      await loadScenario(scenarios.postgres, { ...env, RATE_LIMIT_STORE: 'postgres' }, async () => secret);
    }
    if (only.has('redis')) {
      if (!(await redisReachable())) {
        skipped.set(scenarios.redis.name, `Redis not reachable at ${REDIS_URL}`);
        log(`\n[redis] skipped: Redis not reachable at ${REDIS_URL}`);
      } else {
        try {
          await loadScenario(scenarios.redis, { ...env, REDIS_URL, RATE_LIMIT_STORE: 'redis' }, async () => secret);
        } finally {
          if (!opts.keep) await deleteRedisCounters(orgId).catch(() => {});
        }
      }
    }
  } finally {
    if (!opts.keep) {
      await dropDatabase().catch((error) => log(`warning: could not drop ${PG_DB}: ${error.message}`));
      databaseCreated = false;
    }
  }
}

function report() {
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

  // Throughput, side by side with the baseline.
  const loadRows: string[][] = [];
  for (const [key, s] of Object.entries(scenarios)) {
    if (!only.has(key)) continue;
    if (skipped.has(s.name) || s.error || s.revintel.length === 0 || s.baseline.length === 0) {
      loadRows.push([
        s.name,
        'n/a',
        'n/a',
        'n/a',
        'n/a',
        'n/a',
        'n/a',
        'n/a',
        `>= ${s.target}x`,
        skipped.has(s.name) ? 'skipped' : 'error',
      ]);
      continue;
    }
    const b = medianOf(s.baseline, (r) => r.rps);
    const v = medianOf(s.revintel, (r) => r.rps);
    const errors = s.revintel.reduce((a, r) => a + r.errors, 0);
    loadRows.push([
      s.name,
      fmtInt(b),
      fmtMs(medianOf(s.baseline, (r) => r.p50Us)),
      fmtMs(medianOf(s.baseline, (r) => r.p99Us)),
      fmtInt(v),
      fmtMs(medianOf(s.revintel, (r) => r.p50Us)),
      fmtMs(medianOf(s.revintel, (r) => r.p99Us)),
      fmtRatio(v / b),
      `>= ${s.target}x`,
      errors ? `INVALID (${errors} errors)` : verdict(v / b >= s.target),
    ]);
  }

  const summary: string[][] = [];
  for (const [key, s] of Object.entries(scenarios)) {
    if (!only.has(key)) continue;
    const b = medianOf(s.baseline, (r) => r.rps);
    const v = medianOf(s.revintel, (r) => r.rps);
    const status = skipped.has(s.name) ? 'skipped' : s.error || !s.revintel.length ? 'error' : verdict(v / b >= s.target);
    summary.push([`GET /api/me req/s, ${s.name}`, `${fmtInt(v)} = ${fmtRatio(v / b)} of ${fmtInt(b)}`, `>= ${s.target}x baseline`, status]);
  }
  for (const f of Object.values(startupFigures)) {
    if (f === startupFigures.postgres && !only.has('postgres')) continue;
    if (f !== startupFigures.postgres && !only.has('embedded')) continue;
    const m = median(f.samples);
    const status = skipped.has(f.name) ? 'skipped' : f.error || !f.samples.length ? 'error' : verdict(m < f.targetMs);
    const range =
      f.samples.length > 1 ? ` (${fmtSeconds(Math.min(...f.samples))}–${fmtSeconds(Math.max(...f.samples))}, n=${f.samples.length})` : '';
    summary.push([`${f.name} → /readyz 200`, `${fmtSeconds(m)}${range}`, `< ${fmtSeconds(f.targetMs)}`, status]);
  }
  const rssRows: [LoadScenario, string, number | null][] = [
    [scenarios.postgres, 'PostgreSQL', TARGETS.idleRssPostgresMB],
    [scenarios.redis, 'PostgreSQL + redis limiter', null],
    [scenarios.embedded, 'PGlite', TARGETS.idleRssPgliteMB],
  ];
  for (const [s, label, target] of rssRows) {
    const key = Object.entries(scenarios).find(([, v]) => v === s)![0];
    if (!only.has(key)) continue;
    const status = skipped.has(s.name)
      ? 'skipped'
      : Number.isNaN(s.idleRssMB)
        ? 'error'
        : target === null
          ? 'info'
          : verdict(s.idleRssMB < target);
    summary.push([`RSS idle, ${label}`, fmtMB(s.idleRssMB), target === null ? '—' : `< ${target} MB`, status]);
    const loadedStatus = skipped.has(s.name) ? 'skipped' : s.loadedRssMB > 0 ? 'info' : 'error';
    summary.push([`RSS loaded (max), ${label}`, s.loadedRssMB > 0 ? fmtMB(s.loadedRssMB) : 'n/a', '—', loadedStatus]);
  }

  log(`\n${'='.repeat(100)}`);
  log(
    `revintel benchmark — ${new Date().toISOString()} — ${navigator.hardwareConcurrency} CPUs, bun ${Bun.version}, ` +
      `load tool ${loadTool.name}${loadTool.name === 'wrk' ? ` -t${settings.threads}` : ''} -c${settings.connections}, ` +
      `${settings.rounds} round(s) × ${settings.duration} s per side (+${settings.warmup} s warm-up each), ${settings.starts} start(s) per start-up figure`,
  );
  log('Throughput: medians over the rounds; ratio = revintel req/s ÷ baseline req/s (plain Bun.serve, same bytes, same run).\n');
  log(table(['GET /api/me', 'baseline req/s', 'p50', 'p99', 'revintel req/s', 'p50', 'p99', 'ratio', 'target', 'result'], loadRows));
  log('');
  log(table(['figure', 'measured', 'target', 'result'], summary));
  for (const [name, reason] of skipped) log(`skipped ${name}: ${reason}`);
  log('='.repeat(100));
}

let failed = false;
stopOnSignal(log, () => (databaseCreated && !opts.keep ? dropDatabase() : undefined));

const began = performance.now();
try {
  await ensureBinary(opts.build!, log);
  log(
    `revintel bench: ${BIN}\nload tool: ${loadTool.name === 'wrk' ? loadTool.wrkPath : 'bench/loadgen.ts (wrk not found)'}; ` +
      `${quick ? 'QUICK smoke run' : 'full run'}; logs in ${logDir}${opts.keep ? ' (kept)' : ''}`,
  );
  if (only.has('embedded')) await embeddedPhase();
  if (only.has('postgres') || only.has('redis')) await postgresPhase();
  report();
  const errors = [...Object.values(scenarios), ...Object.values(startupFigures)].filter((x) => x.error);
  failed = errors.length > 0;
} catch (error) {
  failed = true;
  console.error(`bench failed: ${(error as Error).stack ?? error}`);
} finally {
  await cleanupAll();
  log(`total ${fmtSeconds(performance.now() - began)}`);
}
process.exit(failed ? 1 : 0);
