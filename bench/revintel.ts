// What the benchmarks share about the thing they measure: the built binary and the environment it
// runs in, starting `serve` and timing it to /readyz, the CLI, the load tool, and the PostgreSQL
// bench database. Process and temp-dir bookkeeping is bench/lib.ts's.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { freePort, runToEnd, sleep, spawnTracked, stopProcess, waitFor200 } from './lib.ts';

export const REPO = new URL('..', import.meta.url).pathname;
export const BENCH = new URL('.', import.meta.url).pathname;
export const BIN = join(REPO, 'dist', 'revintel');
export const BUN = process.execPath;

// --- the binary and its environment --------------------------------------------------------------

/** Every variable revintel reads: removed from the inherited environment so the caller's shell
 * cannot change what is measured; each run sets what it needs. */
export const REVINTEL_VARS = [
  'PORT',
  'HOST',
  'DATABASE_URL',
  'DATA_DIR',
  'REDIS_URL',
  'RATE_LIMIT_STORE',
  'REUSE_PORT',
  'PUBLIC_URL',
  'TRUST_PROXY',
  'SECRET_KEY',
  'LOG_LEVEL',
  'DATABASE_POOL_SIZE',
  'BODY_LIMIT_API',
  'BODY_LIMIT_IMPORT',
  'BODY_LIMIT_WEBHOOK',
  'RATE_LIMIT_ANON_PER_MINUTE',
  'RATE_LIMIT_ANON_PER_DAY',
  'SHUTDOWN_TIMEOUT_MS',
];

export function revintelEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of REVINTEL_VARS) delete env[name];
  // warn: no per-request log line (at info every request writes one JSON line to stdout).
  return { ...env, LOG_LEVEL: 'warn', SHUTDOWN_TIMEOUT_MS: '3000', ...extra };
}

function newestMtime(dir: string): number {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Builds dist/revintel when asked to, when it is missing, or when src/, drizzle/ or bun.lock is
 * newer (the check test/helpers/binary.ts makes): figures are never taken of a stale binary. */
export async function ensureBinary(build: boolean, log: (msg: string) => void) {
  const sources = Math.max(newestMtime(join(REPO, 'src')), newestMtime(join(REPO, 'drizzle')), statSync(join(REPO, 'bun.lock')).mtimeMs);
  if (build || !existsSync(BIN) || statSync(BIN).mtimeMs < sources) {
    log(`building dist/revintel (bun run build)…`);
    const proc = Bun.spawn([BUN, 'run', 'build'], { cwd: REPO, stdout: 'inherit', stderr: 'inherit', stdin: 'ignore' });
    if ((await proc.exited) !== 0 || !existsSync(BIN)) throw new Error('bun run build failed');
  }
}

/** The last lines of a log, each cut short (a failing server can log hundreds of long lines). */
export async function tail(file: string, lines = 8): Promise<string> {
  try {
    return (await Bun.file(file).text())
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l))
      .join('\n');
  } catch {
    return '(no log)';
  }
}

export interface Running {
  proc: Subprocess;
  port: number;
  base: string;
  /** Spawn to first 200 from /readyz. */
  readyMs: number;
  logFile: string;
}

/**
 * Starts and stops `dist/revintel serve` and runs its CLI, every process with `workDir` as its
 * working directory (so nothing lands in the repo) and its output in a numbered file of `logDir`.
 */
/** `bin`: another build to run (a baseline binary built from older code); dist/revintel by default. */
export function revintelRunner(dirs: { workDir: string; logDir: string; bin?: string }) {
  const bin = dirs.bin ?? BIN;
  let logCounter = 0;
  const logFile = (label: string) => join(dirs.logDir, `${String(++logCounter).padStart(2, '0')}-${label.replace(/\W+/g, '_')}.log`);

  /** Spawns `dist/revintel serve` and waits for /readyz to answer 200, timing it. */
  async function start(label: string, env: Record<string, string>): Promise<Running> {
    const port = freePort();
    const file = logFile(label);
    const base = `http://127.0.0.1:${port}`;
    const started = performance.now();
    const proc = spawnTracked([bin, 'serve'], {
      cwd: dirs.workDir,
      env: revintelEnv({ ...env, PORT: String(port), HOST: '127.0.0.1' }),
      logFile: file,
    });
    try {
      await waitFor200(`${base}/readyz`, proc, 20_000, 10);
    } catch (error) {
      await stopProcess(proc, 3_000);
      throw new Error(`${label}: ${(error as Error).message}\n--- ${file} ---\n${await tail(file)}`);
    }
    return { proc, port, base, readyMs: performance.now() - started, logFile: file };
  }

  async function stop(server: Running, label: string, log: (msg: string) => void) {
    await stopProcess(server.proc, 10_000);
    if (server.proc.signalCode === 'SIGKILL') log(`  warning: ${label} did not stop within 10 s of SIGTERM (killed)`);
  }

  /** Runs a revintel CLI command with --json and returns the parsed output. `onSpawn` sees the
   * process (to sample its memory). */
  async function cli(
    args: string[],
    env: Record<string, string>,
    options: { timeoutMs?: number; onSpawn?: (proc: Subprocess) => void } = {},
  ): Promise<any> {
    const result = await runToEnd([bin, ...args, '--json'], {
      cwd: dirs.workDir,
      env: revintelEnv(env),
      timeoutMs: options.timeoutMs ?? 60_000,
      onSpawn: options.onSpawn,
    });
    if (result.code !== 0) throw new Error(`revintel ${args.join(' ')} exited ${result.code}: ${result.stderr || result.stdout}`);
    const text = result.stdout;
    return JSON.parse(text.slice(Math.min(...['{', '['].map((c) => (text.includes(c) ? text.indexOf(c) : Infinity)))));
  }

  return { logFile, start, stop, cli };
}

// --- load ----------------------------------------------------------------------------------------

export type LoadToolName = 'wrk' | 'bun';

/** wrk (with bench/wrk-report.lua) when installed, else bench/loadgen.ts; `forced` is --loadgen. */
export function chooseLoadTool(forced: string | undefined): { name: LoadToolName; wrkPath: string | null } {
  const wrkPath = Bun.which('wrk');
  const name: LoadToolName = forced === 'bun' || (forced !== 'wrk' && !wrkPath) ? 'bun' : 'wrk';
  if (name === 'wrk' && !wrkPath) throw new Error('--loadgen wrk: wrk is not on PATH');
  return { name, wrkPath };
}

export interface LoadResult {
  rps: number;
  requests: number;
  p50Us: number;
  p99Us: number;
  errors: number;
}

/** One closed-loop load run against `url` with the load tool; returns req/s and latency percentiles. */
export async function loadRun(
  tool: { name: LoadToolName; wrkPath: string | null },
  url: string,
  authorization: string,
  seconds: number,
  settings: { threads: number; connections: number },
): Promise<LoadResult> {
  const cmd =
    tool.name === 'wrk'
      ? [
          tool.wrkPath!,
          `-t${settings.threads}`,
          `-c${settings.connections}`,
          `-d${seconds}s`,
          '--latency',
          '--timeout',
          '5s',
          '-s',
          join(BENCH, 'wrk-report.lua'),
          url,
        ]
      : [
          BUN,
          join(BENCH, 'loadgen.ts'),
          '--url',
          url,
          '--connections',
          String(settings.connections),
          '--duration',
          String(seconds),
          '--header',
          `Authorization: ${authorization}`,
        ];
  const result = await runToEnd(cmd, { env: { ...process.env, BENCH_AUTHORIZATION: authorization }, timeoutMs: (seconds + 60) * 1000 });
  const line = result.stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '));
  if (result.code !== 0 || !line) throw new Error(`load run failed (${tool.name} exit ${result.code}): ${result.stderr || result.stdout}`);
  const r = JSON.parse(line.slice('BENCH_JSON '.length));
  const errors = Object.values(r.errors as Record<string, number>).reduce((a, b) => a + b, 0);
  return { rps: r.requests / (r.duration_us / 1e6), requests: r.requests, p50Us: r.p50_us, p99Us: r.p99_us, errors };
}

// --- the PostgreSQL bench database ---------------------------------------------------------------

export async function withAdminSql<T>(adminUrl: string, fn: (sql: any) => Promise<T>): Promise<T> {
  const postgres = (await import('postgres')).default;
  const sql = postgres(adminUrl, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Drops and creates database `name` through `adminUrl`; returns its URL. */
export async function recreateDatabase(adminUrl: string, name: string): Promise<string> {
  await withAdminSql(adminUrl, async (sql) => {
    await sql.unsafe(`drop database if exists "${name}" with (force)`);
    await sql.unsafe(`create database "${name}"`);
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.href;
}

export async function dropDatabase(adminUrl: string, name: string) {
  await withAdminSql(adminUrl, (sql) => sql.unsafe(`drop database if exists "${name}" with (force)`));
}

// --- webhook acknowledgements at a steady rate ------------------------------------------------------

/** Posts a ticket to the connector's webhook `rate` times a second (not waiting for answers) until
 * `until()` says stop, and returns the latency of each 200 in ms. */
export async function pacedAcks(
  base: string,
  connectorId: string,
  rate: number,
  until: () => boolean,
  bodyOf: (n: number) => string = defaultTicket,
): Promise<number[]> {
  const latencies: number[] = [];
  const inFlight: Promise<void>[] = [];
  for (let n = 0; !until(); n++) {
    const due = performance.now() + 1000 / rate;
    const sent = performance.now();
    inFlight.push(
      fetch(`${base}/api/webhooks/tickets?connectorId=${connectorId}`, {
        method: 'POST',
        body: bodyOf(n),
        headers: { 'content-type': 'application/json' },
      }).then(async (response) => {
        await response.arrayBuffer();
        if (response.status === 200) latencies.push(performance.now() - sent);
      }),
    );
    await sleep(Math.max(0, due - performance.now()));
  }
  await Promise.all(inFlight);
  return latencies;
}

const defaultTicket = (n: number) =>
  JSON.stringify({
    ticket: {
      id: `ACK-${n}-${Math.random().toString(36).slice(2)}`,
      subject: 'Export fails',
      description: 'The CSV export fails again.',
      requester_email: 'ops@example.com',
    },
  });
