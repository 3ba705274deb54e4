// Moving an embedded installation to PostgreSQL (docs/operating.md "Growing past one machine"): every table of
// DATA_DIR's database copied into an empty PostgreSQL migrated to the same version, then compared
// table by table — rows counted and a checksum of every row's text on both sides. Rows travel as
// JSON made by the database itself (`to_jsonb`) and are rebuilt by the target with
// `jsonb_populate_recordset`, so every value keeps its exact type and precision (a JavaScript Date
// would cut timestamps to the millisecond). The target's own triggers are off during the copy
// (`DISABLE TRIGGER USER`): the rows they would make (stale marks, data versions, history) are
// copied as they are. Secrets stay sealed under the same SECRET_KEY: the servers on PostgreSQL need
// that key (DATA_DIR/secret.key when it was generated).
import type { PGlite } from '@electric-sql/pglite';
import type postgres from 'postgres';

interface TableCopy {
  table: string;
  rows: number;
  ms: number;
}

interface ExportReport {
  tables: TableCopy[];
  rows: number;
  verified: { table: string; rows: number; checksum: string }[];
}

/** Tables of the public schema, parents before children (foreign keys), each with its key columns. */
async function tablesInOrder(source: PGlite): Promise<{ name: string; key: string[] }[]> {
  const tables = (
    await source.query<{ name: string; key: string[] | null }>(`
    select c.relname as name,
      (select array_agg(a.attname order by array_position(i.indkey::int2[], a.attnum))
         from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey::int2[])
        where i.indrelid = c.oid and i.indisprimary) as key
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') order by c.relname`)
  ).rows;
  const parents = new Map<string, Set<string>>(tables.map((t) => [t.name, new Set<string>()]));
  for (const edge of (
    await source.query<{ child: string; parent: string }>(`
    select c.relname as child, p.relname as parent from pg_constraint k
    join pg_class c on c.oid = k.conrelid join pg_class p on p.oid = k.confrelid join pg_namespace n on n.oid = c.relnamespace
    where k.contype = 'f' and n.nspname = 'public' and c.relname <> p.relname`)
  ).rows) {
    parents.get(edge.child)?.add(edge.parent);
  }
  const ordered: { name: string; key: string[] }[] = [];
  const placed = new Set<string>();
  while (ordered.length < tables.length) {
    const ready = tables.filter((t) => !placed.has(t.name) && [...parents.get(t.name)!].every((p) => placed.has(p)));
    if (ready.length === 0)
      throw new Error(
        `the tables' foreign keys form a cycle: ${tables
          .filter((t) => !placed.has(t.name))
          .map((t) => t.name)
          .join(', ')}`,
      );
    for (const table of ready) {
      placed.add(table.name);
      ordered.push({ name: table.name, key: table.key ?? [] });
    }
  }
  return ordered;
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
const orderBy = (key: string[]) => (key.length ? key.map(ident).join(', ') : 'ctid');

/** The target holds no row in any table of its public schema. */
export async function targetIsEmpty(target: postgres.Sql): Promise<string | null> {
  const tables = await target<{ name: string }[]>`select tablename as name from pg_tables where schemaname = 'public'`;
  for (const { name } of tables) {
    const [row] = await target.unsafe(`select exists (select 1 from ${ident(name)}) as taken`);
    if (row!.taken) return name;
  }
  return null;
}

/** Copies every table in batches of `batchSize` rows, each batch one statement; `progress` hears
 * of each table as it goes. The whole copy is one transaction on the target: a failure leaves it
 * empty, to be tried again. */
export async function copyTables(
  source: PGlite,
  target: postgres.Sql,
  options: { batchSize: number; progress: (table: string, copied: number, total: number) => void },
): Promise<TableCopy[]> {
  const tables = await tablesInOrder(source);
  const copies: TableCopy[] = [];
  await target.begin(async (tx) => {
    for (const { name } of tables) await tx.unsafe(`alter table ${ident(name)} disable trigger user`);
    for (const { name, key } of tables) {
      const started = performance.now();
      const total = Number((await source.query<{ n: number }>(`select count(*)::int as n from ${ident(name)}`)).rows[0]!.n);
      let copied = 0;
      // Batches follow the primary key (each starts after the last row of the one before, typed by
      // the table itself); a table without one pages by offset.
      let last: string | null = null;
      const inKeyOrder = (direction: string) => (key.length ? ` order by ${key.map((k) => `t.${ident(k)}${direction}`).join(', ')}` : '');
      for (let offset = 0; offset < total; offset += options.batchSize) {
        const after =
          key.length && last
            ? `where (${key.map(ident).join(', ')}) > (select ${key.map(ident).join(', ')} from jsonb_populate_record(null::${ident(name)}, $1::jsonb))`
            : '';
        const page = key.length
          ? `${after} order by ${orderBy(key)} limit ${options.batchSize}`
          : `order by ctid limit ${options.batchSize} offset ${offset}`;
        const result: { rows: string; last: string | null } = (
          await source.query<{ rows: string; last: string | null }>(
            `select coalesce(jsonb_agg(to_jsonb(t)${inKeyOrder('')}), '[]'::jsonb)::text as rows, (array_agg(to_jsonb(t)${inKeyOrder(' desc')}))[1]::text as last from (select * from ${ident(name)} ${page}) t`,
            after ? [last] : [],
          )
        ).rows[0]!;
        const batch = result.rows;
        last = result.last;
        // Identity columns (the audit log's, the action events') keep their numbers.
        const inserted = await tx.unsafe(
          `insert into ${ident(name)} overriding system value select * from jsonb_populate_recordset(null::${ident(name)}, ($1::text)::jsonb)`,
          [batch],
        );
        copied += inserted.count;
        options.progress(name, copied, total);
      }
      // The next number an identity column gives follows the copied ones.
      for (const { column } of await tx<
        { column: string }[]
      >`select attname as column from pg_attribute where attrelid = ${name}::regclass and attidentity <> ''`) {
        await tx.unsafe(
          `select setval(pg_get_serial_sequence($1, $2), max_id) from (select max(${ident(column)}) as max_id from ${ident(name)}) m where max_id is not null`,
          [name, column],
        );
      }
      copies.push({ table: name, rows: copied, ms: Math.round(performance.now() - started) });
    }
    for (const { name } of tables) await tx.unsafe(`alter table ${ident(name)} enable trigger user`);
  });
  return copies;
}

const checksumQuery = (name: string, key: string[]) =>
  `select count(*)::int as rows, coalesce(md5(string_agg(md5(t::text), '' order by ${key.length ? key.map((k) => `t.${ident(k)}`).join(', ') : 't::text'})), '') as checksum from ${ident(name)} t`;

/** Every table's rows and checksum on both sides; the tables that differ. */
export async function verifyCopy(source: PGlite, target: postgres.Sql): Promise<{ verified: ExportReport['verified']; differ: string[] }> {
  const verified: ExportReport['verified'] = [];
  const differ: string[] = [];
  for (const { name, key } of await tablesInOrder(source)) {
    const here = (await source.query<{ rows: number; checksum: string }>(checksumQuery(name, key))).rows[0]!;
    const [there] = await target.unsafe(checksumQuery(name, key));
    if (Number(there!.rows) !== Number(here.rows) || there!.checksum !== here.checksum)
      differ.push(
        `${name} (${here.rows} rows here, ${there!.rows} there${Number(there!.rows) === Number(here.rows) ? ', contents differ' : ''})`,
      );
    else verified.push({ table: name, rows: Number(here.rows), checksum: here.checksum });
  }
  return { verified, differ };
}
