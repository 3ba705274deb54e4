import { sql } from 'drizzle-orm';
import type { Db } from './client.ts';

/**
 * Runs `work` in one transaction on `db` — a savepoint when `db` is already a transaction — and
 * hands it the transaction as a `Db`, so the functions it calls take the same handle whether they
 * run alone or inside a larger unit. A throw rolls it back and is thrown again; either driver.
 */
export function transaction<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(work);
}

/**
 * `transaction`, with PostgreSQL's JIT compiler off for it: for the set-wise reads over a whole
 * organisation (features, the ARR history), whose plans cost enough to be compiled — 0.3 s of the
 * 1.9 s the features of 100,000 demo customers took, and seconds when stale statistics inflate the
 * costs — while they run once each, on rows the interpreter reads as fast. The embedded database has
 * no JIT; the setting is harmless there.
 */
export function withoutJit<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('jit', 'off', true)`);
    return work(tx);
  });
}
