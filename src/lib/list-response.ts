// The one way a list endpoint answers (SPEC §4): refuse unknown parameters, read `limit`, fetch
// limit + 1 rows, and answer `data` with `meta` and a `Link` header to the next page.
import { ok } from './envelope.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageOf, type CursorValue } from './pagination.ts';
import { parseLimit, refuseUnknownParams } from './query.ts';

export interface ListRequest<Row, T> {
  request: Request;
  set: { headers: Record<string, string | number> };
  /** The parameters this list understands (its query schema's). */
  known: readonly string[];
  limit: string | undefined;
  sort: string;
  fetch: (limit: number) => Promise<Row[]>;
  positionOf: (row: Row) => { value: CursorValue | bigint; id: string };
  present: (row: Row) => T;
}

export async function listResponse<Row, T>(list: ListRequest<Row, T>) {
  refuseUnknownParams(list.request.url, list.known);
  const limit = parseLimit(list.limit, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const rows = await list.fetch(limit);
  const page = pageOf(
    rows,
    limit,
    list.sort,
    (row) => {
      const { value, id } = list.positionOf(row);
      return { value: typeof value === 'bigint' ? String(value) : value, id };
    },
    list.present,
    list.request.url,
  );
  if (page.link) list.set.headers.link = page.link;
  return ok(page.data, page.meta);
}
