import type { Db } from './client.ts';

/**
 * Runs `work` in one transaction on `db` — a savepoint when `db` is already a transaction — and
 * hands it the transaction as a `Db`, so the functions it calls take the same handle whether they
 * run alone or inside a larger unit. A throw rolls it back and is thrown again; either driver.
 */
export function transaction<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(work);
}
