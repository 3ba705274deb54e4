// How a record names another of its organisation: by our id or by its external id (the id in the
// source system). One lookup for a whole batch of names.
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from './client.ts';
import { inList } from './keyset.ts';

export interface Named {
  id: string;
  external_id: string | null;
}

/** The rows of `table` in organisation `orgId` that `ids` or `externalIds` name, by either name;
 * `columns` are what to select beside the two ids, `where` narrows (e.g. live records only). */
export async function findNamed<T extends Named>(
  db: Db,
  table: 'customers' | 'contracts',
  orgId: string,
  names: { ids: Iterable<string>; externalIds: Iterable<string> },
  columns: SQL,
  where: SQL = sql`true`,
) {
  const ids = [...new Set(names.ids)];
  const externalIds = [...new Set(names.externalIds)];
  const byId = new Map<string, T>();
  const byExternal = new Map<string, T>();
  if (ids.length + externalIds.length === 0) return { byId, byExternal };
  const rows = rowsOf<T>(
    await db.execute(sql`
      select id, external_id, ${columns} from ${sql.raw(table)}
      where org_id = ${orgId} and ${where} and (${inList(sql`id`, ids)} or ${inList(sql`external_id`, externalIds)})`),
  );
  for (const row of rows) {
    byId.set(row.id, row);
    if (row.external_id !== null) byExternal.set(row.external_id, row);
  }
  return { byId, byExternal };
}
