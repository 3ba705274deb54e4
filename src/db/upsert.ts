// Writing records the way API clients and imports do: many rows at once, each created or — when its
// `external_id` is already known in the organisation — updated in place (a deleted record comes
// back), and told apart as created, updated or unchanged. One statement per batch of rows that set
// the same columns; a row that breaks a rule of the database is found by retrying the batch row by
// row, each in a savepoint, so one bad row never takes the good ones with it.
//
// Only the columns a row sets are written: a column it leaves out keeps its value on update (and
// gets its default on create). Unchanged rows are not touched at all, so their `updated_at` — what
// `updated_since` syncs walk — stays put.
import { getTableColumns, getTableName, sql, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { rowsOf, type Db } from './client.ts';
import { transaction } from './transaction.ts';
import { newId } from '../lib/ids.ts';
import { AppError } from '../lib/errors.ts';
import { idOrExternal, inList } from './keyset.ts';

export interface RecordTable {
  name: string;
  idPrefix: 'cus' | 'ctr' | 'inv';
  /** Every column a write may set, with its SQL type (the cast of its parameter). */
  columns: Record<string, string>;
  /** What a broken database rule (a constraint of this table, or one pointing at it) means for
   * a write, as the error the client gets. */
  explain: (violation: ConstraintViolation) => AppError;
}

/** Columns no write names: the id (made here) and organisation (the caller's), and the times the
 * statements themselves keep. */
const KEPT_BY_WRITES = new Set(['id', 'org_id', 'created_at', 'updated_at', 'deleted_at']);

/** A table as writes see it: they may set each of its columns but those kept by the writes
 * themselves and those the database generates. */
export function recordTable(table: PgTable, idPrefix: RecordTable['idPrefix'], explain: RecordTable['explain']): RecordTable {
  const writable = Object.values(getTableColumns(table)).filter((column) => !KEPT_BY_WRITES.has(column.name) && !column.generated);
  return {
    name: getTableName(table),
    idPrefix,
    columns: Object.fromEntries(writable.map((column) => [column.name, column.getSQLType()])),
    explain,
  };
}

interface RowToWrite {
  /** The row's position in what the caller sent, to report outcomes against. */
  index: number;
  /** Column -> value, for the columns this row sets (a subset of the table's columns). */
  values: Record<string, unknown>;
}

/** A row to write, or why it cannot be (its references did not resolve). */
type RowOrRejection = { index: number; values: Record<string, unknown> | AppError };

export type RowOutcome =
  | { index: number; outcome: 'created' | 'updated' | 'unchanged'; id: string }
  | { index: number; outcome: 'rejected'; error: AppError };

export interface ConstraintViolation {
  /** SQLSTATE: 23505 unique, 23503 foreign key, 23514 check, … */
  code: string;
  constraint: string;
}

/** The integrity constraint a database error broke, if that is what it is (both drivers, through
 * drizzle's wrapping). */
export function constraintViolation(error: unknown): ConstraintViolation | null {
  for (let e = error as Record<string, unknown> | undefined, depth = 0; e && depth < 5; e = e.cause as Record<string, unknown>, depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    const constraint = (e.constraint_name ?? e.constraint) as string | undefined;
    if (code.startsWith('23')) return { code, constraint: constraint ?? '' };
  }
  return null;
}

const cast = (value: unknown, type: string): SQL => {
  if (value === null || value === undefined) return sql`null::${sql.raw(type)}`;
  if (type === 'jsonb') return sql`${JSON.stringify(value)}::jsonb`;
  // The value itself, not its text: postgres.js serialises a parameter by the type the cast gives
  // it, and would write the string 'true' as false.
  return sql`${value}::${sql.raw(type)}`;
};

const ident = (name: string) => sql.raw(`"${name}"`);

/** Column names reach the SQL as identifiers: only the table's own may (the schemas already refuse
 * unknown fields; this keeps it so whatever a caller passes). */
function checkColumns(table: RecordTable, columns: string[]): void {
  for (const column of columns) {
    if (!Object.hasOwn(table.columns, column)) throw new Error(`${table.name} has no writable column ${JSON.stringify(column)}`);
  }
}

/** One INSERT … ON CONFLICT for rows that all set `columns`, with no external_id twice. The rows
 * travel as one JSON parameter read by jsonb_to_recordset: a parameter per value (12,000 for a
 * batch of customers) was measured to cost more to build than the insert itself. */
async function upsertStatement(db: Db, table: RecordTable, orgId: string, columns: string[], rows: (RowToWrite & { id: string })[]) {
  const t = ident(table.name);
  const all = ['id', ...columns];
  const recordType = sql.raw(all.map((c) => `"${c}" ${c === 'id' ? 'text' : table.columns[c]}`).join(', '));
  const payload = JSON.stringify(rows.map((row) => ({ ...row.values, id: row.id })));
  const updatable = columns.filter((c) => c !== 'external_id');
  const mine = (c: string) => sql`${t}.${ident(c)}`;
  const theirs = (c: string) => sql`excluded.${ident(c)}`;
  // A row that sets nothing but its external_id changes nothing but a tombstone.
  const assignments = sql.join(
    [...updatable.map((c) => sql`${ident(c)} = ${theirs(c)}`), sql`updated_at = now()`, sql`deleted_at = null`],
    sql`, `,
  );
  const current = sql.join([...updatable.map(mine), sql`${t}.deleted_at is not null`], sql`, `);
  const incoming = sql.join([...updatable.map(theirs), sql`false`], sql`, `);
  const result = await db.execute(sql`
    insert into ${t} (org_id, ${sql.join(all.map(ident), sql`, `)})
    select ${orgId}, ${sql.join(
      all.map((c) => sql`r.${ident(c)}`),
      sql`, `,
    )} from jsonb_to_recordset(${payload}::jsonb) as r(${recordType})
    on conflict (org_id, external_id) where external_id is not null
    do update set ${assignments}
    where (${current}) is distinct from (${incoming})
    returning id, external_id, (xmax = 0) as created`);
  return rowsOf<{ id: string; external_id: string | null; created: boolean }>(result);
}

/** Outcomes of one statement's rows: returned rows were created or updated; a row with an
 * external_id that came back with nothing was already as it says. */
async function outcomesOf(
  db: Db,
  table: RecordTable,
  orgId: string,
  rows: (RowToWrite & { id: string })[],
  returned: { id: string; external_id: string | null; created: boolean }[],
): Promise<RowOutcome[]> {
  const byExternal = new Map(returned.filter((r) => r.external_id !== null).map((r) => [r.external_id!, r]));
  const missing = rows
    .filter((row) => row.values.external_id != null && !byExternal.has(String(row.values.external_id)))
    .map((row) => String(row.values.external_id));
  const unchangedIds = new Map<string, string>();
  if (missing.length > 0) {
    const found = await db.execute(
      sql`select id, external_id from ${ident(table.name)} where org_id = ${orgId} and ${inList(sql`external_id`, missing)}`,
    );
    for (const r of rowsOf<{ id: string; external_id: string }>(found)) unchangedIds.set(r.external_id, r.id);
  }
  return rows.map((row): RowOutcome => {
    const external = row.values.external_id == null ? null : String(row.values.external_id);
    // Without an external_id a row can only have been created, with the id it was given.
    if (external === null) return { index: row.index, outcome: 'created', id: row.id };
    const hit = byExternal.get(external);
    if (hit) return { index: row.index, outcome: hit.created ? 'created' : 'updated', id: hit.id };
    return { index: row.index, outcome: 'unchanged', id: unchangedIds.get(external)! };
  });
}

/** Statements for `rows`: consecutive rows that set the same columns share one, and an
 * external_id seen twice starts a new one (one statement cannot update a row twice). */
function statementsOf(table: RecordTable, rows: RowToWrite[]): { columns: string[]; rows: (RowToWrite & { id: string })[] }[] {
  const groups: { columns: string[]; signature: string; externals: Set<string>; rows: (RowToWrite & { id: string })[] }[] = [];
  for (const given of rows) {
    const row = { ...given, id: newId(table.idPrefix) };
    const columns = Object.keys(row.values).sort();
    checkColumns(table, columns);
    const signature = columns.join(',');
    const external = row.values.external_id == null ? null : String(row.values.external_id);
    const open = groups.at(-1);
    if (open && open.signature === signature && (external === null || !open.externals.has(external))) {
      open.rows.push(row);
      if (external !== null) open.externals.add(external);
    } else {
      groups.push({ columns, signature, externals: new Set(external === null ? [] : [external]), rows: [row] });
    }
  }
  return groups;
}

/**
 * Creates or updates `rows` of `table` in organisation `orgId`, in the order given; a row that is
 * already a rejection is reported as one. Must run inside a transaction (it uses savepoints). A
 * broken database rule is reported for its row (`table.explain`); errors that are not a broken rule
 * (the database went away) are thrown.
 */
export async function upsertRecords(db: Db, table: RecordTable, orgId: string, given: RowOrRejection[]): Promise<RowOutcome[]> {
  const outcomes: RowOutcome[] = [];
  const rows: RowToWrite[] = [];
  for (const row of given) {
    if (row.values instanceof AppError) outcomes.push({ index: row.index, outcome: 'rejected', error: row.values });
    else rows.push({ index: row.index, values: row.values });
  }
  const attempt = async (statement: { columns: string[]; rows: (RowToWrite & { id: string })[] }): Promise<RowOutcome[]> => {
    const returned = await transaction(db, (tx) => upsertStatement(tx, table, orgId, statement.columns, statement.rows));
    return outcomesOf(db, table, orgId, statement.rows, returned);
  };
  for (const statement of statementsOf(table, rows)) {
    try {
      outcomes.push(...(await attempt(statement)));
    } catch (error) {
      if (!constraintViolation(error)) throw error;
      // Which rows? Each on its own, in a savepoint.
      for (const row of statement.rows) {
        try {
          outcomes.push(...(await attempt({ columns: statement.columns, rows: [row] })));
        } catch (rowError) {
          const violation = constraintViolation(rowError);
          if (!violation) throw rowError;
          outcomes.push({ index: row.index, outcome: 'rejected', error: table.explain(violation) });
        }
      }
    }
  }
  return outcomes.sort((a, b) => a.index - b.index);
}

export type PatchOutcome = { outcome: 'updated' | 'unchanged'; id: string } | { outcome: 'not_found' };

/** Sets `values` on the live record `ref` names (an id or `ext:<external_id>`), in a savepoint; a
 * broken database rule is thrown as `table.explain` says. */
export async function patchRecord(
  db: Db,
  table: RecordTable,
  orgId: string,
  ref: string,
  values: Record<string, unknown>,
): Promise<PatchOutcome> {
  try {
    return await transaction(db, (tx) => patchStatements(tx, table, orgId, idOrExternal(table.name, ref), values));
  } catch (error) {
    const violation = constraintViolation(error);
    throw violation ? table.explain(violation) : error;
  }
}

async function patchStatements(
  db: Db,
  table: RecordTable,
  orgId: string,
  match: SQL,
  values: Record<string, unknown>,
): Promise<PatchOutcome> {
  const t = ident(table.name);
  const columns = Object.keys(values);
  checkColumns(table, columns);
  const scope = sql`${t}.org_id = ${orgId} and ${match} and ${t}.deleted_at is null`;
  if (columns.length > 0) {
    const assignments = sql.join(
      [...columns.map((c) => sql`${ident(c)} = ${cast(values[c], table.columns[c]!)}`), sql`updated_at = now()`],
      sql`, `,
    );
    const current = sql.join(
      columns.map((c) => sql`${t}.${ident(c)}`),
      sql`, `,
    );
    const incoming = sql.join(
      columns.map((c) => cast(values[c], table.columns[c]!)),
      sql`, `,
    );
    const [updated] = rowsOf<{ id: string }>(
      await db.execute(
        sql`update ${t} set ${assignments} where ${scope} and (${current}) is distinct from (${incoming}) returning ${t}.id`,
      ),
    );
    if (updated) return { outcome: 'updated', id: updated.id };
  }
  const [existing] = rowsOf<{ id: string }>(await db.execute(sql`select ${t}.id from ${t} where ${scope}`));
  return existing ? { outcome: 'unchanged', id: existing.id } : { outcome: 'not_found' };
}

/** Soft delete of the live record `ref` names: it gets `deleted_at` (and a new `updated_at`, so
 * syncs see the tombstone). */
export async function softDeleteRecord(db: Db, table: RecordTable, orgId: string, ref: string): Promise<string | null> {
  const t = ident(table.name);
  const match = idOrExternal(table.name, ref);
  const [row] = rowsOf<{ id: string }>(
    await db.execute(
      sql`update ${t} set deleted_at = now(), updated_at = now() where ${t}.org_id = ${orgId} and ${match} and ${t}.deleted_at is null returning ${t}.id`,
    ),
  );
  return row?.id ?? null;
}
