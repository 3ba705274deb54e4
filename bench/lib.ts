// Helpers for bench/run.ts: every process and temp dir the benchmark makes is registered here, so
// that one cleanup (normal end, error, Ctrl-C, SIGTERM) stops and removes all of them.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// --- processes -----------------------------------------------------------------------------------

const live = new Set<Subprocess>();
const tempDirs = new Set<string>();
export let keepTempDirs = false;
export const setKeepTempDirs = (keep: boolean) => void (keepTempDirs = keep);

export interface SpawnOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Where the child's stdout and stderr go (a file, so an unread pipe can never stall it). */
  logFile?: string;
}

/** Spawns a long-running child and registers it for cleanup. */
export function spawnTracked(cmd: string[], options: SpawnOptions = {}): Subprocess {
  const out = options.logFile ? Bun.file(options.logFile) : 'ignore';
  const proc = Bun.spawn(cmd, {
    cwd: options.cwd,
    env: options.env as Record<string, string>,
    stdin: 'ignore',
    stdout: out,
    stderr: out,
  });
  live.add(proc);
  proc.exited.then(() => live.delete(proc));
  return proc;
}

/** Runs a command to completion (registered while it runs) and returns its output. */
export async function runToEnd(
  cmd: string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number; onSpawn?: (proc: Subprocess) => void } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(cmd, {
    cwd: options.cwd,
    env: options.env as Record<string, string>,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  live.add(proc);
  options.onSpawn?.(proc);
  const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
    live.delete(proc);
  }
}

/** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
export async function stopProcess(proc: Subprocess, graceMs = 10_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  const exited = await Promise.race([proc.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!exited) {
    proc.kill('SIGKILL');
    await proc.exited;
  }
}

/** Stops every child still running, then removes the temp dirs. */
export async function cleanupAll(): Promise<void> {
  await Promise.all([...live].map((proc) => stopProcess(proc, 5_000).catch(() => {})));
  removeTempDirs();
}

function removeTempDirs() {
  if (keepTempDirs) return;
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {}
    tempDirs.delete(dir);
  }
}

// Last resort when the process is ending without having run cleanupAll (uncaught error, exit()):
// only synchronous work is possible here, so children get SIGKILL.
process.on('exit', () => {
  for (const proc of live) {
    try {
      proc.kill('SIGKILL');
    } catch {}
  }
  removeTempDirs();
});

/** On SIGINT or SIGTERM: stops every child the bench started, runs `thenAlso` (drop the bench's
 * database, say; given at most 5 s), and exits with 130. */
export function stopOnSignal(log: (line: string) => void, thenAlso: () => Promise<unknown> | undefined): void {
  const onSignal = (signal: string) => {
    log(`\n${signal}: stopping every process started by the benchmark…`);
    cleanupAll()
      .then(() => {
        const also = thenAlso();
        return also ? Promise.race([also, sleep(5_000)]) : undefined;
      })
      .catch(() => {})
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
}

// --- temp dirs, ports ----------------------------------------------------------------------------

/** Removes one temp dir now (unless --keep). */
export function removeTempDir(dir: string) {
  if (keepTempDirs || !tempDirs.has(dir)) return;
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {}
  tempDirs.delete(dir);
}

export function makeTempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `revintel-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

/** A port nobody listens on right now (the OS picks it; we release it at once). */
export function freePort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

// --- measurements --------------------------------------------------------------------------------

/** Resident set size of a process in MB (10^6 bytes; VmRSS in /proc/<pid>/status is in KiB), or
 * null if it is gone. */
export function rssMB(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? (Number(match[1]) * 1024) / 1e6 : null;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the maximum seen. */
export function sampleRss(pid: number, everyMs = 100) {
  let max = 0;
  const take = () => {
    const rss = rssMB(pid);
    if (rss !== null && rss > max) max = rss;
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop(): number {
      clearInterval(timer);
      take();
      return max;
    },
  };
}

/** CPU time a process has used so far (user + system, all its threads), in milliseconds, or null
 * if it is gone. /proc/<pid>/stat fields 14 and 15, in clock ticks (100 per second on Linux). */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // the name may contain spaces
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The `q` quantile (nearest rank) of `values`. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

/** Polls `url` every `everyMs` until it answers 200; throws if `proc` exits first or on timeout
 * (naming the last answer, if any). */
export async function waitFor200(url: string, proc: Subprocess, timeoutMs = 60_000, everyMs = 10): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = 'no answer (connection refused)';
  while (performance.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`process exited (code ${proc.exitCode ?? proc.signalCode}) before ${url} answered 200`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      const body = await response.text();
      if (response.status === 200) return;
      last = `${response.status} ${body.slice(0, 300)}`;
    } catch {}
    await sleep(everyMs);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms; last answer: ${last}`);
}

// --- formatting ----------------------------------------------------------------------------------

export const fmtInt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
export const fmtMs = (us: number) => (Number.isFinite(us) ? `${(us / 1000).toFixed(2)} ms` : 'n/a');
export const fmtRatio = (r: number) => (Number.isFinite(r) ? `${r.toFixed(2)}x` : 'n/a');
export const fmtMB = (m: number) => (Number.isFinite(m) ? `${Math.round(m)} MB` : 'n/a');
export const fmtSeconds = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : 'n/a');

/** A plain text table with a header rule; right-aligns columns whose cells all look numeric. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => /^[\d,.]+( ?(ms|s|MB|x))?$|^n\/a$|^—$/.test(r[i] ?? '')));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** --help: prints the file's header comment (every bench documents its options there) and exits. */
export async function printHeaderAndExit(path: string): Promise<never> {
  const source = await Bun.file(path).text();
  console.log(
    source
      .split('\n')
      .filter((l) => l.startsWith('//'))
      .map((l) => l.slice(3))
      .join('\n'),
  );
  process.exit(0);
}

/** A positive number option, or `fallback` when it is absent. */
export function positiveOption(raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`bad numeric option: ${raw}`);
  return n;
}
