// bun run bench:startup — start-up and idle cost of `serve`, this build against a baseline, in one run.
//
// For each database — PostgreSQL, a fresh embedded DATA_DIR, a restart on that DATA_DIR — both
// binaries are started in turn, `--runs` times each (alternating, so a busy machine weighs on both
// alike), and each run gives:
//   ready   ms from spawning `revintel serve` to the first 200 from GET /readyz (polled every 10 ms);
//   rss     VmRSS of the process (every thread, PGlite included) `--settle` seconds after ready,
//           and of it the anonymous pages (heaps, PGlite's memory) and the file pages (the binary);
//   cpu     CPU time of the idle process over the next `--idle` seconds, in % of one core.
// (Defaults: 10 s to settle — the first minutes' jobs and the worker's first looks are start-up's
// tail, not idling — and 20 s of idle; about half a minute a run.)
// Medians are printed, with the slowest and fastest run for ready.
//
// The baseline is `--baseline FILE`, or else built from `--ref` (default main) in a temporary git
// worktree. PostgreSQL: BENCH_PG_URL (an admin URL; default postgres@127.0.0.1); the bench makes
// and drops its own database. Targets: ready < 0.5 s on PostgreSQL and < 1 s on an embedded
// restart; idle RSS < 80 MB on PostgreSQL and < 200 MB embedded; idle CPU < 1 % of a core.
import { parseArgs } from 'node:util';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  cleanupAll,
  cpuMs,
  makeTempDir,
  median,
  rssMB,
  runToEnd,
  sleep,
  spawnTracked,
  stopOnSignal,
  stopProcess,
  waitFor200,
  freePort,
} from './lib.ts';
import { BIN, BUN, dropDatabase, ensureBinary, recreateDatabase, REPO, revintelEnv } from './revintel.ts';

const { values: opts } = parseArgs({
  options: {
    baseline: { type: 'string' },
    ref: { type: 'string', default: 'main' },
    runs: { type: 'string', default: '5' },
    settle: { type: 'string', default: '10' },
    idle: { type: 'string', default: '20' },
    build: { type: 'boolean', default: false },
  },
});
const RUNS = Number(opts.runs);
const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_DB = 'revintel_bench_startup';
const log = (line: string) => console.log(line);
stopOnSignal(log, () => dropDatabase(PG_ADMIN_URL, PG_DB));

/** The baseline binary: given, or built from `ref` in a worktree of its own. */
async function baselineBinary(): Promise<string> {
  if (opts.baseline) return opts.baseline;
  const dir = join(makeTempDir('baseline'), 'tree');
  const git = (args: string[]) => runToEnd(['git', ...args], { cwd: REPO, timeoutMs: 60_000 });
  log(`building the baseline from ${opts.ref} in ${dir}…`);
  if ((await git(['worktree', 'add', '--detach', dir, opts.ref!])).code !== 0) throw new Error(`git worktree add ${opts.ref} failed`);
  try {
    for (const cmd of [
      [BUN, 'install', '--frozen-lockfile'],
      [BUN, 'run', 'build'],
    ]) {
      const result = await runToEnd(cmd, { cwd: dir, timeoutMs: 600_000 });
      if (result.code !== 0) throw new Error(`${cmd.join(' ')} failed in the baseline: ${result.stderr.slice(-500)}`);
    }
    const binary = join(makeTempDir('baseline-bin'), 'revintel');
    copyFileSync(join(dir, 'dist/revintel'), binary);
    return binary;
  } finally {
    await git(['worktree', 'remove', '--force', dir]);
  }
}

interface Run {
  readyMs: number;
  rssMB: number;
  anonMB: number;
  fileMB: number;
  cpuPercent: number;
}

/** RssAnon and RssFile of /proc/<pid>/status, in MB (10^6 bytes, as rssMB). */
function rssParts(pid: number): { anonMB: number; fileMB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (name: string) => (Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024) / 1e6;
  return { anonMB: mb('RssAnon'), fileMB: mb('RssFile') + mb('RssShmem') };
}

/** One start of `binary` with `env`: ready, then idle RSS and CPU, then SIGTERM. */
async function measure(binary: string, env: Record<string, string>): Promise<Run> {
  const port = freePort();
  const started = performance.now();
  const proc = spawnTracked([binary, 'serve'], {
    cwd: makeTempDir('cwd'),
    env: revintelEnv({ ...env, PORT: String(port), HOST: '127.0.0.1' }),
  });
  try {
    await waitFor200(`http://127.0.0.1:${port}/readyz`, proc, 60_000, 10);
    const readyMs = performance.now() - started;
    await sleep(Number(opts.settle) * 1000);
    const rss = rssMB(proc.pid) ?? NaN;
    const parts = rssParts(proc.pid);
    const cpuBefore = cpuMs(proc.pid) ?? NaN;
    await sleep(Number(opts.idle) * 1000);
    const cpuPercent = (((cpuMs(proc.pid) ?? NaN) - cpuBefore) / (Number(opts.idle) * 1000)) * 100;
    return { readyMs, rssMB: rss, ...parts, cpuPercent };
  } finally {
    await stopProcess(proc, 10_000);
  }
}

const summary = (runs: Run[]) => {
  const ready = runs.map((r) => r.readyMs);
  return `ready ${Math.round(median(ready))} ms (${Math.round(Math.min(...ready))}–${Math.round(Math.max(...ready))})  rss ${median(runs.map((r) => r.rssMB)).toFixed(0)} MB (anon ${median(runs.map((r) => r.anonMB)).toFixed(0)}, file ${median(runs.map((r) => r.fileMB)).toFixed(0)})  cpu ${median(runs.map((r) => r.cpuPercent)).toFixed(1)} %`;
};

try {
  await ensureBinary(opts.build, log);
  const current = join(makeTempDir('current-bin'), 'revintel');
  copyFileSync(BIN, current); // a rebuild during the run must not change what is measured
  const baseline = await baselineBinary();
  if (!existsSync(baseline)) throw new Error(`no baseline binary at ${baseline}`);
  const binaries = { baseline, current } as const;
  const databaseUrl = await recreateDatabase(PG_ADMIN_URL, PG_DB);
  // Each binary's embedded DATA_DIR of its own: its fresh start makes it, its restarts reuse it.
  const dataDirs = { baseline: '', current: '' };
  const scenarios: [string, (who: keyof typeof binaries) => Record<string, string>][] = [
    ['postgres', () => ({ DATABASE_URL: databaseUrl })],
    ['embedded, fresh DATA_DIR', (who) => ({ DATA_DIR: (dataDirs[who] = join(makeTempDir(`data-${who}`), 'data')) })],
    ['embedded, restart', (who) => ({ DATA_DIR: dataDirs[who] })],
  ];
  // PostgreSQL is migrated once by each binary before anything is timed.
  for (const who of ['baseline', 'current'] as const) await measure(binaries[who], { DATABASE_URL: databaseUrl });
  log(`${RUNS} runs each, alternating; medians (ready: fastest–slowest)`);
  for (const [name, envOf] of scenarios) {
    const results: Record<keyof typeof binaries, Run[]> = { baseline: [], current: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const who of ['baseline', 'current'] as const) {
        // A fresh start each run: the DATA_DIR of the last one stays for the restarts.
        results[who].push(await measure(binaries[who], envOf(who)));
      }
    }
    log(`${name} (load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
    for (const who of ['baseline', 'current'] as const) log(`  ${who.padEnd(9)} ${summary(results[who])}`);
  }
} finally {
  await cleanupAll();
  await dropDatabase(PG_ADMIN_URL, PG_DB).catch(() => {});
}
