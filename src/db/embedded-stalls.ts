// What held the main thread when it stalled (DEBUG_STALLS=true, embedded database only).
//
// On the embedded database every query runs on the server's main thread, so any long stretch of
// work there — a query, a unit's JavaScript between its queries, a body parsed, a collection of
// the heap — delays every request, /healthz included. A timer due every `tickMs` measures how late
// it fires; each time it is more than `thresholdMs` late, the stall is reported with the time
// spent since the previous tick by each kind of work we can see, in this thread's CPU time (so a
// busy machine's preemption is not counted twice):
//   - `wasm <unit>`: PostgreSQL itself (PGlite's wasm) for the unit of work holding the database,
//     or `wasm request` outside any unit;
//   - `js <unit>`: the unit's own JavaScript, from the start of its transaction to its end less
//     PostgreSQL's time (with whatever else ran while it awaited a query: little, on PGlite);
//   - `js <label>`: stretches of our own code marked with `timedWork` (body parsing, encoding);
//   - `other`: the rest of the thread's CPU (JavaScript of units and requests, garbage collection,
//     I/O callbacks);
//   - `cpu-wait`: wall time the thread was runnable but not running (the machine's other
//     processes, from /proc/thread-self/schedstat; 0 where that is missing);
//   - `off-cpu`: the rest of the window (blocked in a system call: disk, or idle).
// and how much the JavaScript heap shrank in the window: a collection ran in it when it did.
import { heapSize } from 'bun:jsc';
import { readFileSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';

export interface Stall {
  /** How late the timer fired. */
  lateMs: number;
  /** From the previous tick to this one. */
  windowMs: number;
  /** Time by kind of work in that window, largest first. */
  spent: { what: string; ms: number }[];
  /** How much the JavaScript heap shrank in the window (MB; 0 if it did not): a collection ran. */
  heapFreedMb: number;
}

let watching = false;
let runningUnit: string | null = null;
const spent = new Map<string, number>();

/** This thread's CPU time, in ms. */
const cpuMs = () => {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
};

const add = (what: string, ms: number) => {
  if (watching) spent.set(what, (spent.get(what) ?? 0) + ms);
};

let unitStartedCpu = 0;
let unitWasm = 0;

/** The unit of work now inside its transaction (db/units.ts sets it; null when it ends). */
export function setRunningUnit(label: string | null): void {
  if (watching && label === null && runningUnit !== null) add(`js ${runningUnit}`, Math.max(0, cpuMs() - unitStartedCpu - unitWasm));
  runningUnit = label;
  if (watching && label !== null) {
    unitStartedCpu = cpuMs();
    unitWasm = 0;
  }
}

/** Runs `work` (synchronous), counting its time as `js <label>` while stalls are watched. */
export function timedWork<T>(label: string, work: () => T): T {
  if (!watching) return work();
  const started = cpuMs();
  try {
    return work();
  } finally {
    add(`js ${label}`, cpuMs() - started);
  }
}

/** Nanoseconds this thread has waited for a CPU while runnable (0 where the kernel does not say). */
function cpuWaitNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1] ?? 0);
  } catch {
    return 0;
  }
}

export function watchStalls(options: { pglite: PGlite; report: (stall: Stall) => void; tickMs?: number; thresholdMs?: number }): {
  stop(): void;
} {
  const tickMs = options.tickMs ?? 10;
  const thresholdMs = options.thresholdMs ?? 50;
  // PGlite runs each protocol message synchronously in execProtocolRawSync: its time is the wasm's.
  const engine = options.pglite as unknown as { execProtocolRawSync(message: Uint8Array): Uint8Array };
  const original = engine.execProtocolRawSync.bind(engine);
  engine.execProtocolRawSync = (message) => {
    const started = cpuMs();
    try {
      return original(message);
    } finally {
      const ms = cpuMs() - started;
      add(`wasm ${runningUnit ?? 'request'}`, ms);
      if (runningUnit !== null) unitWasm += ms;
    }
  };
  watching = true;
  let last = performance.now();
  let lastWait = cpuWaitNs();
  let lastCpu = cpuMs();
  let lastHeap = heapSize();
  const timer = setInterval(() => {
    const now = performance.now();
    const wait = cpuWaitNs();
    const cpu = cpuMs();
    const heap = heapSize();
    const windowMs = now - last;
    const lateMs = windowMs - tickMs;
    if (lateMs > thresholdMs) {
      const cpuWait = (wait - lastWait) / 1e6;
      const onCpu = cpu - lastCpu;
      let known = 0;
      const parts: { what: string; ms: number }[] = [
        { what: 'cpu-wait', ms: cpuWait },
        { what: 'off-cpu', ms: Math.max(0, windowMs - onCpu - cpuWait) },
      ];
      for (const [what, ms] of spent) {
        parts.push({ what, ms });
        known += ms;
      }
      parts.push({ what: 'other', ms: Math.max(0, onCpu - known) });
      parts.sort((a, b) => b.ms - a.ms);
      options.report({ lateMs, windowMs, spent: parts.filter((p) => p.ms >= 1), heapFreedMb: Math.max(0, (lastHeap - heap) / 1e6) });
    }
    spent.clear();
    last = now;
    lastWait = wait;
    lastCpu = cpu;
    lastHeap = heap;
  }, tickMs);
  timer.unref?.();
  return {
    stop() {
      clearInterval(timer);
      watching = false;
      engine.execProtocolRawSync = original;
    },
  };
}
