// Units of work: named, transaction-scoped operations on the database.
//
// In embedded mode one process owns PGlite, and pglite-socket wedges when a client holds a
// transaction open, so nothing outside the owner ever holds one: the worker thread and the CLI send
// the *name* of a unit and its arguments, and the owner runs the whole unit in one transaction. On
// PostgreSQL the same units run locally on the caller's own pool. One registry, two transports.
import { is } from 'drizzle-orm';
import { PostgresJsSession } from 'drizzle-orm/postgres-js';
import type { Db } from './client.ts';
import { transaction } from './transaction.ts';
import { setRunningUnit } from './embedded-stalls.ts';
import type { Settings } from '../settings.ts';

/** Any unit: its own args and result are read back per name (`UnitArgs`, `UnitResult`); `never`
 * as the bound's args lets a unit of any args be one (a parameter is checked the other way). The
 * settings are those of the side that runs it (its runner's), never sent with the args. */
export type Unit = (db: Db, args: never, settings: Settings) => Promise<unknown>;
export type UnitRegistry = Record<string, Unit>;

export type UnitArgs<U extends UnitRegistry, K extends keyof U> = Parameters<U[K]>[1];
export type UnitResult<U extends UnitRegistry, K extends keyof U> = Awaited<ReturnType<U[K]>>;

export interface UnitRunner<U extends UnitRegistry> {
  run<K extends keyof U & string>(name: K, args: UnitArgs<U, K>): Promise<UnitResult<U, K>>;
}

/** An error that crossed a thread or socket: the message and code survive, the stack stays home. */
export interface SerializedError {
  name: string;
  message: string;
  code?: string;
  status?: number;
}

export function serializeError(error: unknown): SerializedError {
  const e = error as { name?: string; message?: string; code?: string; status?: number };
  return { name: e?.name ?? 'Error', message: e?.message ?? String(error), code: e?.code, status: e?.status };
}

export class RemoteUnitError extends Error {
  readonly code?: string;
  readonly status?: number;
  constructor(unit: string, serialized: SerializedError) {
    super(serialized.message);
    this.name = serialized.name;
    this.code = serialized.code;
    this.status = serialized.status;
    this.cause = `unit ${unit}`;
  }
}

/** Told how long each unit ran (its transaction, begin to end). On the embedded database that is
 * how long it held the database, and with it every other request: the metrics keep the longest. */
export type UnitObserver = (name: string, seconds: number) => void;
let unitObserver: UnitObserver | null = null;
/** One observer per process (the server's metrics); a later one replaces it. */
export function observeUnits(observer: UnitObserver | null): void {
  unitObserver = observer;
}

/** How many items the next unit of a set-wise task should take (customers to score, rows to
 * import), given the last one's count and how long it took: the count that would have taken
 * `targetMs`, from `min` to `max`, and at most twice the last. What an item costs depends on the
 * data and on what else the machine runs, so a fixed count quick on one tenant can hold the
 * embedded database for seconds on a busy machine. */
export function nextSizeByTime(last: number, elapsedMs: number, bounds: { targetMs: number; min: number; max: number }): number {
  const scaled = Math.floor((last * bounds.targetMs) / Math.max(1, elapsedMs));
  return Math.max(bounds.min, Math.min(bounds.max, last * 2, scaled));
}

/** This thread's CPU time, in ms. */
const threadCpuMs = () => {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** `unit` with `ms` added to its answer: how long it ran inside its transaction, on the database's
 * side. A caller sizing its next unit by time reads this, not its own clock: that also counts the
 * wait for the unit's turn (behind requests in flight and other units), and sizes judged by it fell
 * to the least and stayed there (an import through a busy server at 300 rows/s).
 * On the embedded database the unit runs on this thread, and what it costs everyone else is the
 * CPU it takes here: its thread CPU time. Wall time also counts the time the machine's other
 * processes had the CPU, and on a loaded machine (load 40 on 2 cores, DEBUG_STALLS: 95% of each
 * stall) sizes judged by it fell to the least although each unit's own work had not grown, so the
 * fixed cost of a unit (its turn, transaction, messages) took over: a 40,000-status delivery's job
 * beside an import's stale recompute had 0.1 s of PostgreSQL's CPU in the stalls of 20 minutes. On PostgreSQL the work is the server's: wall time. */
export function timed<A, R extends object>(
  unit: (db: Db, args: A, settings: Settings) => Promise<R>,
): (db: Db, args: A, settings: Settings) => Promise<R & { ms: number }> {
  return async (db, args, settings) => {
    const clock = is(db._.session, PostgresJsSession) ? () => performance.now() : threadCpuMs;
    const started = clock();
    const result = await unit(db, args, settings);
    return { ...result, ms: clock() - started };
  };
}

/** A job's units are named by their kind too (`jobs.unit predictions.recompute/score-chunk`). */
function unitLabel(name: string, args: unknown): string {
  const a = args as { kind?: unknown; unit?: unknown; job?: { kind?: unknown } } | null;
  if (name === 'jobs.unit' && typeof a?.kind === 'string') return `${name} ${a.kind}/${String(a.unit)}`;
  if (name === 'jobs.perform' && typeof a?.job?.kind === 'string') return `${name} ${a.job.kind}`;
  return name;
}

/** Runs units in-process, each in its own transaction, with `settings`. */
export function localRunner<U extends UnitRegistry>(db: Db, units: U, settings: Settings): UnitRunner<U> {
  return {
    run<K extends keyof U & string>(name: K, args: UnitArgs<U, K>) {
      const unit = units[name];
      if (!unit) return Promise.reject(new Error(`unknown unit ${name}`));
      const started = performance.now();
      const label = unitLabel(name, args);
      return transaction(db, (tx) => {
        setRunningUnit(label);
        // `unit` is `U[K]`, whose result TypeScript does not resolve from inside the generic.
        return unit(tx, args, settings) as Promise<UnitResult<U, K>>;
      }).finally(() => {
        setRunningUnit(null);
        unitObserver?.(label, (performance.now() - started) / 1000);
      });
    },
  };
}

// --- across threads: the worker asks, the owner (main thread) answers -------------------------
// The messages are part of the worker's door (jobs/protocol.ts), which dispatches them.

export interface UnitRequest {
  type: 'unit';
  id: number;
  name: string;
  args: unknown;
}
export interface UnitReply {
  type: 'unit-reply';
  id: number;
  ok: boolean;
  result?: unknown;
  error?: SerializedError;
}

/** The asking side: each `run` posts a request and waits for the reply handed to `receive`. */
export function messageRunner<U extends UnitRegistry>(
  post: (request: UnitRequest) => void,
): UnitRunner<U> & { receive(reply: UnitReply): void } {
  let nextId = 1;
  const pending = new Map<number, { resolve: (result: unknown) => void; reject: (e: Error) => void; name: string }>();
  return {
    run<K extends keyof U & string>(name: K, args: UnitArgs<U, K>) {
      const id = nextId++;
      return new Promise<UnitResult<U, K>>((resolve, reject) => {
        // The result crossed the thread as a structured clone of what the unit returned.
        pending.set(id, { resolve: (result) => resolve(result as UnitResult<U, K>), reject, name });
        post({ type: 'unit', id, name, args });
      });
    },
    receive(reply) {
      const waiter = pending.get(reply.id);
      if (!waiter) return;
      pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply.result);
      else waiter.reject(new RemoteUnitError(waiter.name, reply.error!));
    },
  };
}

/** The owner's side: runs one request and posts its reply. */
export function answerUnit(runner: UnitRunner<UnitRegistry>, request: UnitRequest, post: (reply: UnitReply) => void): void {
  // The args crossed the thread as a structured clone of what the asking side's typed `run` took.
  runner.run(request.name, request.args as never).then(
    (result) => post({ type: 'unit-reply', id: request.id, ok: true, result }),
    (error) => post({ type: 'unit-reply', id: request.id, ok: false, error: serializeError(error) }),
  );
}
