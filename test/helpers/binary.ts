// Drives the compiled binary as an operator would: build it if it is missing or older than the
// sources, start `serve` on a free port, run CLI commands, send signals.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Subprocess } from 'bun';

const ROOT = new URL('../../', import.meta.url).pathname;
export const BINARY = join(ROOT, 'dist/revintel');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

let built = false;
/** Builds dist/revintel unless it is newer than everything it is built from. */
export function ensureBinary(): string {
  if (built) return BINARY;
  const sources = Math.max(newestSource(join(ROOT, 'src')), newestSource(join(ROOT, 'drizzle')), statSync(join(ROOT, 'bun.lock')).mtimeMs);
  const stale = () => !existsSync(BINARY) || statSync(BINARY).mtimeMs < sources;
  if (stale()) {
    // Under `bun test --parallel` two workers may want a build at once: one builds, the other
    // waits for it and finds the binary fresh.
    withBuildLock(() => {
      if (!stale()) return;
      const result = Bun.spawnSync(['bun', 'run', 'build'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
      if (result.exitCode !== 0) throw new Error(`build failed:\n${result.stderr.toString()}`);
    });
  }
  built = true;
  return BINARY;
}

function withBuildLock(build: () => void): void {
  const lock = join(ROOT, 'dist/.build.lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch {
      // A lock older than any build is left by a killed run.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 300_000) rmSync(lock, { force: true });
      if (Date.now() > deadline) throw new Error(`another build holds ${lock}`);
      Bun.sleepSync(200);
    }
  }
  try {
    build();
  } finally {
    rmSync(lock, { force: true });
  }
}

export interface ServeProcess {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  url: string;
  port: number;
  output: () => string;
  kill(signal?: NodeJS.Signals | number): void;
  exited: Promise<number>;
}

/** The environment a test binary runs with: nothing inherited that could change its behaviour. */
function baseEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'info', ...env };
}

async function collect(stream: ReadableStream<Uint8Array>, sink: string[]) {
  const decoder = new TextDecoder();
  for await (const chunk of stream) sink.push(decoder.decode(chunk, { stream: true }));
}

/** Starts `revintel serve` (PORT=0 unless given) and resolves once it logs where it listens. */
export async function startServe(env: Record<string, string>, options: { cwd?: string; timeoutMs?: number } = {}): Promise<ServeProcess> {
  const proc = Bun.spawn([ensureBinary(), 'serve'], {
    cwd: options.cwd ?? ROOT,
    env: baseEnv({ PORT: '0', HOST: '127.0.0.1', ...env }),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const chunks: string[] = [];
  void collect(proc.stdout, chunks);
  void collect(proc.stderr, chunks);
  const output = () => chunks.join('');
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const match = /"msg":"revintel serving","url":"(http:\/\/[^"]+)"/.exec(output());
    if (match) {
      const url = match[1]!.replace(/\/$/, '');
      return { proc, url, port: Number(new URL(url).port), output, kill: (s) => proc.kill(s), exited: proc.exited };
    }
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`serve did not start (exit ${proc.exitCode}):\n${output()}`);
    }
    await Bun.sleep(20);
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** The compiled binary with `args`. */
export const runCli = (args: string[], env: Record<string, string>, options: { cwd?: string } = {}) =>
  runCommand([ensureBinary(), ...args], env, options);

/** The CLI from source (`bun src/index.ts`): for tests of commands that need no binary. */
export const runSourceCli = (args: string[], env: Record<string, string>, options: { cwd?: string } = {}) =>
  runCommand(['bun', join(ROOT, 'src/index.ts'), ...args], env, options);

async function runCommand(command: string[], env: Record<string, string>, options: { cwd?: string }): Promise<CliResult> {
  const proc = Bun.spawn(command, { cwd: options.cwd ?? ROOT, env: baseEnv(env), stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

/** Probes until `probe` gives a value; `everyMs` apart (a probe that spawns the CLI costs a core
 * for a moment: poll it slowly, or the server under test waits for the CPU). */
export async function waitFor<T>(probe: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await Bun.sleep(everyMs);
  }
}

export const get = (url: string, key?: string) => fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {} });
