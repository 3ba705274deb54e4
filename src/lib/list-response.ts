// The one way a list endpoint answers (docs/arr-data.md "Reading"): refuse unknown parameters, read `limit`,
// fetch limit + 1 rows, and answer `data` with `meta` and a `Link` header to the next page.
import { ok } from './envelope.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageOf, type CursorValue } from './pagination.ts';
import { parseLimit, refuseUnknownParams } from './query.ts';
import type { Db } from '../db/client.ts';
import type { ListCache, VersionOf } from './list-cache.ts';
import { utcToday } from './today.ts';

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
  /** Pages of ARR data are kept until the organisation's data changes (lib/list-cache.ts), or
   * until `version` changes. */
  cached?: { cache: ListCache; db: Db; orgId: string; version?: VersionOf };
  /** More of `meta`, made with the page (and kept with it). */
  meta?: () => Promise<Record<string, unknown>>;
}

export async function listResponse<Row, T>(list: ListRequest<Row, T>) {
  refuseUnknownParams(list.request.url, list.known);
  const limit = parseLimit(list.limit, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const makePage = async () => {
    const [rows, extra] = await Promise.all([list.fetch(limit), list.meta?.()]);
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
    return extra ? { ...page, meta: { ...page.meta, ...extra } } : page;
  };
  if (!list.cached) {
    const page = await makePage();
    if (page.link) list.set.headers.link = page.link;
    return ok(page.data, page.meta);
  }
  const { cache, db, orgId, version } = list.cached;
  const url = list.request.url;
  const pathAndQuery = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  const kept = await cache.page(
    db,
    orgId,
    `${utcToday()}\n${pathAndQuery}`,
    async () => {
      const page = await makePage();
      return { body: JSON.stringify(ok(page.data, page.meta)), link: page.link };
    },
    version,
  );
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (kept.link) headers.link = kept.link;
  return new Response(kept.body, { headers });
}
