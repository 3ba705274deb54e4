import { writeSync } from 'node:fs';
import type { LogLevel } from '../config.ts';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  /** Whether a line at this level would be written: lets hot paths skip building it. */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Keys whose values never reach a log line, wherever they appear. */
const SECRET_KEY_PATTERN = /authorization|token|secret|password|api[-_]?key|cookie|signature/i;
const KEY_PATTERN = /rvk_[0-9A-Za-z]+/g;

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(KEY_PATTERN, 'rvk_[REDACTED]');
  if (depth > 5 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = SECRET_KEY_PATTERN.test(key) ? '[REDACTED]' : redact(inner, depth + 1);
  }
  return out;
}

export type LogSink = (line: string, level: Exclude<LogLevel, 'silent'>) => void;

// Info and debug lines leave in one write per turn of the event loop: a write each cost twice the
// CPU, a quarter of a busy server's at one line per request. Warnings and errors leave at once, so
// that what explains a crash is out before it; at exit whatever waits is written. A kill -9 loses
// at most the info lines of the turn it lands in.
let pendingOut: string[] = [];
let flushScheduled = false;
function flushOut(): void {
  flushScheduled = false;
  if (pendingOut.length === 0) return;
  const out = pendingOut.join('');
  pendingOut = [];
  process.stdout.write(out);
}
process.on('exit', () => {
  if (pendingOut.length > 0) writeSync(1, pendingOut.splice(0).join(''));
});

const stdSink: LogSink = (line, level) => {
  if (RANK[level] >= RANK.warn) {
    flushOut();
    process.stderr.write(`${line}\n`);
    return;
  }
  pendingOut.push(`${line}\n`);
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flushOut);
  }
};

/** JSON lines on stdout (stderr for warnings and errors), secrets redacted. */
export function createLogger(level: LogLevel, base: Record<string, unknown> = {}, sink: LogSink = stdSink): Logger {
  const threshold = RANK[level];
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < threshold) return;
    const line = JSON.stringify({
      time: new Date().toISOString(),
      level: lvl,
      msg,
      ...base,
      ...(fields ? (redact(fields) as object) : {}),
    });
    sink(line, lvl);
  };
  return {
    enabled: (lvl) => RANK[lvl] >= threshold,
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  };
}
