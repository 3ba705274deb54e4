// Two ways the embedded database could stop answering everyone, and what stops them.
//
// 1. The engine fails under PostgreSQL. Deep recursion in PostgreSQL's C code (its jsonb code on a
//    value nested ~5,000 levels, seen here) overflows the JavaScript engine's own stack, below
//    PostgreSQL's `max_stack_depth` check, and the engine throws a RangeError out of the wasm.
//    PGlite 0.5.16's loop (execProtocolRawSync) catches everything around `_PostgresMainLoopOnce`
//    and goes on as if nothing happened, with PostgreSQL half-unwound: queries then return no rows
//    ("201" for a customer never stored), fail with "bad buffer ID: 0", or spin at 100% CPU for
//    good. Inputs are bounded so this is not reached (lib/json.ts); should anything else get
//    there, the instance is marked failed, every query is refused at once (503), and the server
//    is told so it can restart on a sound instance (PostgreSQL's recovery replays the WAL).
// 2. A transaction nobody finishes. PGlite runs one transaction at a time, so a unit of work that
//    waits on something that never comes holds every other query behind it. A transaction that
//    issues no query for `idleTimeoutMs` is rolled back and its caller gets a clear error —
//    PostgreSQL's idle_in_transaction_session_timeout, which the PostgreSQL pool sets to the same.
import type { PGlite, Transaction } from '@electric-sql/pglite';

export class EmbeddedDatabaseFailedError extends Error {
  readonly code = 'EMBEDDED_DATABASE_FAILED';
  constructor(readonly reason: unknown) {
    super(`the embedded database stopped after an engine failure (${String((reason as Error)?.message ?? reason)}); restart revintel`);
    this.name = 'EmbeddedDatabaseFailedError';
  }
}

export class TransactionIdleTimeoutError extends Error {
  readonly code = 'TRANSACTION_IDLE_TIMEOUT';
  constructor(ms: number) {
    super(`a transaction issued no query for ${ms} ms and was rolled back`);
    this.name = 'TransactionIdleTimeoutError';
  }
}

type Module = Record<string, (...args: unknown[]) => unknown>;

export interface GuardedPglite {
  /** The engine failure that stopped the instance, or null. */
  failure(): EmbeddedDatabaseFailedError | null;
}

export function guardPglite(
  pglite: PGlite,
  options: { idleTimeoutMs: number; onFailure: (error: EmbeddedDatabaseFailedError) => void },
): GuardedPglite {
  const internals = pglite as unknown as { mod?: Module; POSTGRES_MAIN_LONGJMP?: unknown };
  const mod = internals.mod;
  const longjmp = internals.POSTGRES_MAIN_LONGJMP;
  for (const name of ['_PostgresMainLoopOnce', 'stackRestore', '_PostgresSendReadyForQueryIfNecessary', '_pgl_pq_flush']) {
    if (typeof mod?.[name] !== 'function' || longjmp === undefined)
      throw new Error(`PGlite no longer has ${name}: revisit src/db/embedded-guard.ts`);
  }
  let failure: EmbeddedDatabaseFailedError | null = null;

  const mainLoopOnce = mod!._PostgresMainLoopOnce!;
  mod!._PostgresMainLoopOnce = (...args) => {
    if (failure) throw failure;
    try {
      return mainLoopOnce(...args);
    } catch (error) {
      // PostgreSQL's own ERRORs arrive as PGlite's longjmp signal: those it recovers from.
      if ((error as { status?: unknown })?.status === longjmp) throw error;
      failure = new EmbeddedDatabaseFailedError(error);
      options.onFailure(failure);
      throw failure;
    }
  };
  // PGlite's loop catches what the main loop throws, restores the stack and goes round again; after
  // a failure that restore throws instead, so the loop ends and the query rejects.
  const stackRestore = mod!.stackRestore!;
  mod!.stackRestore = (...args) => {
    stackRestore(...args);
    if (failure) throw failure;
  };
  // Its `finally` then talks to PostgreSQL again: not to a failed one.
  for (const name of ['_PostgresSendReadyForQueryIfNecessary', '_pgl_pq_flush']) {
    const original = mod![name]!;
    mod![name] = (...args) => (failure ? undefined : original(...args));
  }

  const transaction = pglite.transaction.bind(pglite);
  pglite.transaction = <T>(callback: (tx: Transaction) => Promise<T>) =>
    transaction((tx) => idleBounded(tx, callback, options.idleTimeoutMs));

  return { failure: () => failure };
}

/** A guarded transaction's caller doing long work of its own on the engine (a backup's copy of the
 * data directory) says so, and is not taken for a transaction nobody finishes. */
export interface WorkingTransaction {
  working<R>(work: Promise<R>): Promise<R>;
}

/** Runs `callback` in `tx`, rejecting once it has issued no query for `idleMs` (PGlite then rolls
 * the transaction back, and the callback's later queries fail: its transaction is closed). */
function idleBounded<T>(tx: Transaction, callback: (tx: Transaction) => Promise<T>, idleMs: number): Promise<T> {
  let lastActivity = Date.now();
  let inFlight = 0;
  const track = <F extends (...args: never[]) => Promise<unknown>>(fn: F): F =>
    (async (...args: Parameters<F>) => {
      inFlight++;
      try {
        return await fn(...args);
      } finally {
        inFlight--;
        lastActivity = Date.now();
      }
    }) as F;
  const watched: Transaction & WorkingTransaction = Object.create(tx, {
    query: { value: track(tx.query.bind(tx)) },
    sql: { value: track(tx.sql.bind(tx)) },
    exec: { value: track(tx.exec.bind(tx)) },
    working: { value: track(<R>(work: Promise<R>) => work) },
  });
  let timer: Timer | undefined;
  const idle = new Promise<never>((_, reject) => {
    const check = () => {
      const quiet = Date.now() - lastActivity;
      if (inFlight === 0 && quiet >= idleMs) reject(new TransactionIdleTimeoutError(idleMs));
      else timer = setTimeout(check, inFlight > 0 ? idleMs : idleMs - quiet);
    };
    timer = setTimeout(check, idleMs);
  });
  return Promise.race([callback(watched), idle]).finally(() => clearTimeout(timer));
}
