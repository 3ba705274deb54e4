// Units of work: named, transaction-scoped operations on the database.
//
// In embedded mode one process owns PGlite, and pglite-socket wedges when a client holds a
// transaction open, so nothing outside the owner ever holds one: the worker thread and the CLI send
// the *name* of a unit and its arguments, and the owner runs the whole unit in one transaction. On
// PostgreSQL the same units run locally on the caller's own pool. One registry, two transports.
import type { Db } from './client.ts';

export type Unit<A = any, R = any> = (db: Db, args: A) => Promise<R>;
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

/** Runs units in-process, each in its own transaction. */
export function localRunner<U extends UnitRegistry>(db: Db, units: U): UnitRunner<U> {
  return {
    run(name, args) {
      const unit = units[name];
      if (!unit) return Promise.reject(new Error(`unknown unit ${name}`));
      return db.transaction((tx) => unit(tx as unknown as Db, args));
    },
  };
}

// --- across threads: the worker asks, the owner (main thread) answers -------------------------

interface UnitRequest {
  type: 'unit';
  id: number;
  name: string;
  args: unknown;
}
interface UnitReply {
  type: 'unit-reply';
  id: number;
  ok: boolean;
  result?: unknown;
  error?: SerializedError;
}

type Port = {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
};

/** The worker's side: each `run` is a message to the owner and a promise of its reply. */
export function portRunner<U extends UnitRegistry>(port: Port): UnitRunner<U> {
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void; name: string }>();
  port.addEventListener('message', (event) => {
    const reply = event.data as UnitReply;
    if (reply?.type !== 'unit-reply') return;
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.result);
    else waiter.reject(new RemoteUnitError(waiter.name, reply.error!));
  });
  return {
    run(name, args) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, name });
        port.postMessage({ type: 'unit', id, name, args } satisfies UnitRequest);
      });
    },
  };
}

/** The owner's side: answers unit requests arriving on `port` with `runner`. */
export function answerUnits(port: Port, runner: UnitRunner<UnitRegistry>): void {
  port.addEventListener('message', (event) => {
    const request = event.data as UnitRequest;
    if (request?.type !== 'unit') return;
    runner.run(request.name, request.args).then(
      (result) => port.postMessage({ type: 'unit-reply', id: request.id, ok: true, result } satisfies UnitReply),
      (error) => port.postMessage({ type: 'unit-reply', id: request.id, ok: false, error: serializeError(error) } satisfies UnitReply),
    );
  });
}
