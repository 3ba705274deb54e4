// One Drizzle schema, two drivers: postgres.js when DATABASE_URL is set, embedded PGlite otherwise.
// Both give the same `Db` type to the rest of the code. PGlite and its driver are loaded only when
// the embedded database is opened: on PostgreSQL neither thread carries them.
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { is, sql as rawSql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { PostgresJsSession } from 'drizzle-orm/postgres-js';
import postgres, { type Sql } from 'postgres';
import type { PGlite } from '@electric-sql/pglite';
import * as schema from './schema/index.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { guardPglite, type EmbeddedDatabaseFailedError } from './embedded-guard.ts';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

type DatabaseKind = 'postgres' | 'embedded';

export interface Database {
  kind: DatabaseKind;
  db: Db;
  /** The postgres.js client (postgres mode only): the shared rate-limit store talks to it directly. */
  sql: Sql | null;
  /** The PGlite instance (embedded mode only). */
  pglite: PGlite | null;
  /** Round trip to the database, failing after `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  /** Why the embedded database stopped for good (db/embedded-guard.ts), or null. */
  failure(): Error | null;
  close(): Promise<void>;
}

/** Past this, a statement is cancelled and a transaction left idle is ended by the server: the
 * same bound as a request's (REQUEST_TIMEOUT_MS), so no request holds a connection for ever. */
interface WorkBounds {
  timeoutMs: number;
}

export function connectPostgres(url: string, poolSize = 10, bounds: WorkBounds = { timeoutMs: 30_000 }): Database {
  const sql = postgres(url, {
    max: poolSize,
    onnotice: () => {},
    connection: {
      application_name: 'revintel',
      statement_timeout: bounds.timeoutMs,
      idle_in_transaction_session_timeout: bounds.timeoutMs,
    },
  });
  const db: Db = drizzlePostgres(sql, { schema });
  return {
    kind: 'postgres',
    db,
    sql,
    pglite: null,
    ping: (timeoutMs = 2000) =>
      withTimeout(
        sql`select 1`.then(() => undefined),
        timeoutMs,
      ),
    failure: () => null,
    close: () => sql.end({ timeout: 5 }),
  };
}

/** Takes DATA_DIR (or throws DataDirBusyError) and opens the embedded database in it. A transaction
 * idle for `bounds.timeoutMs` is rolled back; `onFailure` hears of an engine failure (after which
 * every query is refused: the process must restart); `notice`, of an interrupted restore settled
 * on the way in (a line on stderr unless told otherwise). */
export async function openEmbedded(
  dataDir: string,
  command: string,
  bounds: WorkBounds = { timeoutMs: 30_000 },
  onFailure: (error: EmbeddedDatabaseFailedError) => void = () => {},
  notice: (message: string) => void = (message) => process.stderr.write(`revintel: ${message}\n`),
): Promise<Database> {
  const release = lockDataDir(dataDir, command);
  let pglite: PGlite;
  const [{ openPglite }, { drizzle: drizzlePglite }] = await Promise.all([import('./embedded.ts'), import('drizzle-orm/pglite')]);
  try {
    pglite = await openPglite(dataDir, notice);
  } catch (error) {
    release();
    throw error;
  }
  const guard = guardPglite(pglite, { idleTimeoutMs: bounds.timeoutMs, onFailure });
  const db: Db = drizzlePglite(pglite, { schema });
  return {
    kind: 'embedded',
    db,
    sql: null,
    pglite,
    ping: (timeoutMs = 2000) =>
      withTimeout(
        db.execute(rawSql`select 1`).then(() => undefined),
        timeoutMs,
      ),
    failure: guard.failure,
    close: async () => {
      try {
        // A failed engine is not asked to shut down (it may never answer): the WAL is on disk.
        if (!guard.failure()) await pglite.close();
      } finally {
        release();
      }
    },
  };
}

const dialect = new PgDialect();

/**
 * The rows of a query that requests run again and again (the lists and reads of the API). On
 * PostgreSQL it runs as a prepared statement, named by postgres.js after its text and kept per
 * connection, so the server parses and plans it once rather than for every request: drizzle's
 * `db.execute()` sends an unnamed statement each time, and planning the customers page cost more
 * database CPU than running it. Only for queries whose text has a bounded number of shapes (one per
 * combination of filters), never for text that varies with the data, or the cache would grow
 * without end. PGlite has no statement cache to speak of: plain `execute` there.
 */
export async function queryRows<T>(db: Db, query: SQL): Promise<T[]> {
  const session = db._.session;
  if (is(session, PostgresJsSession)) {
    const { sql: text, params } = dialect.sqlToQuery(query);
    return await (session.client as Sql).unsafe<T[]>(text, params as never[], { prepare: true });
  }
  return rowsOf<T>(await db.execute(query));
}

/**
 * SQL text with positional parameters ($1, $2, …), run as is on either driver, inside the
 * transaction `db` may be. For the statements drizzle's builder cannot say well — a JavaScript
 * array bound as one PostgreSQL array (`unnest($1::text[], …)`) rather than spread into a list —
 * and, like `queryRows`, prepared on PostgreSQL: the text must be fixed, never built from data.
 */
export async function queryText<T>(db: Db, text: string, params: unknown[]): Promise<T[]> {
  const session = db._.session;
  if (is(session, PostgresJsSession)) return await (session.client as Sql).unsafe<T[]>(text, params as never[], { prepare: true });
  // Otherwise PGlite's session (or transaction): its client (private to drizzle's type, a PGlite or
  // its transaction) answers `query` with `{ rows }`.
  const { client } = session as typeof session & { client: { query<R>(text: string, params: unknown[]): Promise<{ rows: R[] }> } };
  return (await client.query<T>(text, params)).rows;
}

/** `db.execute()` answers an array on postgres.js and `{ rows }` on PGlite. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

export class DatabaseTimeoutError extends Error {
  constructor(ms: number) {
    super(`database did not answer within ${ms} ms`);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: Timer;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DatabaseTimeoutError(ms)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
