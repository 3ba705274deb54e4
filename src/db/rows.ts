// The rows of the hand-written list and read queries, typed from the Drizzle tables rather than
// written out again: a table's columns under their SQL names, less the ones a query leaves out,
// plus the ones it computes. `rowKeys` gives the same keys at run time, so a test can run each
// query and compare (test/db/row-columns.test.ts).
import { getTableColumns, type Column, type Table } from 'drizzle-orm';

/** A column's value as raw SQL hands it back on both drivers: a timestamp as text (the selects
 * format it with `isoTime`), an int8 as text on postgres.js and as a number on PGlite, anything
 * else as Drizzle reads it. */
type Selected<C extends Column> =
  | (C['_']['columnType'] extends 'PgTimestamp' ? string : C['_']['columnType'] extends 'PgBigInt53' ? string | number : C['_']['data'])
  | (C['_']['notNull'] extends true ? never : null);

type Columns<T extends Table> = T['_']['columns'];

/** Every column of `T`, keyed by its SQL name. */
type SqlRow<T extends Table> = { [K in keyof Columns<T> as Columns<T>[K]['_']['name']]: Selected<Columns<T>[K]> };

interface RowShape<T extends Table, Omitted extends keyof SqlRow<T>, Computed extends Record<string, unknown>> {
  table: T;
  /** The table's columns the query does not select. */
  omit: readonly Omitted[];
  /** What the query selects besides the table's columns (or under another name), by key; each
   * value is a `typed` placeholder. */
  computed: Computed;
}

/** A query's row: `table`'s columns but `omit`, and `computed`. */
export function rowShape<T extends Table, Omitted extends keyof SqlRow<T>, Computed extends Record<string, unknown>>(
  table: T,
  omit: readonly Omitted[],
  computed: Computed,
): RowShape<T, Omitted, Computed> {
  return { table, omit, computed };
}

/** A computed value's type in a `rowShape`: only its key exists at run time. */
export const typed = <V>() => undefined as V;

/** The row type a shape describes. */
export type RowOf<S> = S extends RowShape<infer T, infer Omitted, infer Computed> ? Flat<Omit<SqlRow<T>, Omitted> & Computed> : never;
type Flat<R> = { [K in keyof R]: R[K] };

/** The keys of a shape's row: the table's column names but the omitted ones, then the computed. */
export function rowKeys(shape: RowShape<Table, string, Record<string, unknown>>): string[] {
  const columns = Object.values(getTableColumns(shape.table) as Record<string, Column>).map((column) => column.name);
  return [...columns.filter((name) => !shape.omit.includes(name)), ...Object.keys(shape.computed)];
}
