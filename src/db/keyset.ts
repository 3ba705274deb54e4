// Keyset pagination in SQL: the order of a list and "after this row" for a cursor, for the default
// order of every list (newest first, ties by id). The sort value is the timestamp as PostgreSQL's
// text, to the microsecond: a JavaScript Date would round it to the millisecond and skip rows.
import { sql, type SQL } from 'drizzle-orm';
import type { CursorValue } from '../lib/pagination.ts';

export interface Keyset {
  /** The sort value of a row, selected as `sort_value`. */
  value: SQL;
  order: SQL;
  after: (value: CursorValue, id: string) => SQL;
}

/** Newest first by `created_at` of the table aliased `alias`. */
export function newestFirst(alias: string): Keyset {
  const a = sql.raw(alias);
  return {
    value: sql`${a}.created_at::text`,
    // NULLS LAST as in the (org_id, created_at desc, id desc) indexes drizzle-kit writes, so they
    // are walked rather than sorted.
    order: sql`${a}.created_at desc nulls last, ${a}.id desc nulls last`,
    after: (value, id) => sql`(${a}.created_at, ${a}.id) < (${value}::timestamptz, ${id})`,
  };
}

/** ` and a and b …`: narrowing conditions appended to a WHERE that already has one. */
export const andAll = (conditions: SQL[]) =>
  sql.join(
    conditions.map((c) => sql` and ${c}`),
    sql``,
  );

/** ISO 8601 UTC with milliseconds, as the API shows times. */
export const isoTime = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** The same, in a statement written as text. */
export const isoTimeText = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The row a path names: its id, or `ext:<external_id>` (the id in the source system). */
export function idOrExternal(alias: string, ref: string): SQL {
  const a = sql.raw(alias);
  return ref.startsWith('ext:') ? sql`${a}.external_id = ${ref.slice(4)}` : sql`${a}.id = ${ref}`;
}

/** `column in (…)`, false for an empty list (SQL has no empty IN list). */
export const inList = (column: SQL, values: readonly unknown[]): SQL =>
  values.length === 0
    ? sql`false`
    : sql`${column} in (${sql.join(
        values.map((v) => sql`${v}`),
        sql`, `,
      )})`;

/** `limit n` with n written into the text, not bound: given a parameter, PostgreSQL plans a
 * prepared statement for an unknown limit, and the generic plan it settles on served a page of 50
 * customers in 450 µs instead of 210 µs. n is a checked integer, so the text stays safe and its
 * shapes few (one per page size). */
export function limitTo(n: number): SQL {
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new Error(`a page is 1 to 10,000 rows, got ${n}`);
  return sql.raw(`limit ${n}`);
}
