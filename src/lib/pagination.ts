// Cursor pagination (SPEC §4): `limit` 1–200 (default 50), an opaque `cursor`, `meta` and a
// `Link: <…>; rel="next"` header. A cursor names the sort it belongs to and the position after the
// last row of a page (the sort value and the id that breaks ties), so a walk sees every row once
// even while rows are inserted, and a cursor from one sort is refused by another.
import { AppError } from './errors.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export type CursorValue = string | number | null;

export interface CursorPosition {
  sort: string;
  value: CursorValue;
  id: string;
}

const invalidCursor = (why: string) => new AppError('validation_failed', `Invalid query parameter "cursor": ${why}`);

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.sort, position.value, position.id])).toString('base64url');
}

export function decodeCursor(raw: string, sort: string): CursorPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor('not a cursor this API returned');
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw invalidCursor('not a cursor this API returned');
  const [cursorSort, value, id] = parsed as unknown[];
  if (typeof cursorSort !== 'string' || typeof id !== 'string' || !(value === null || typeof value === 'string' || typeof value === 'number')) {
    throw invalidCursor('not a cursor this API returned');
  }
  if (cursorSort !== sort) throw invalidCursor(`it belongs to sort "${cursorSort}", not "${sort}"`);
  return { sort: cursorSort, value, id };
}

export interface Page<T> {
  data: T[];
  meta: { has_more: boolean; next_cursor: string | null; limit: number };
  /** The Link header, when there is a next page. */
  link: string | null;
}

/**
 * Builds a page from rows fetched with `limit + 1` (the extra row only says whether there is more).
 * `positionOf` gives the cursor position of a row; `requestUrl` is the URL this page answered, the
 * next one is the same with `cursor` replaced.
 */
export function pageOf<Row, T>(rows: Row[], limit: number, sort: string, positionOf: (row: Row) => { value: CursorValue; id: string }, present: (row: Row) => T, requestUrl: string): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  const nextCursor = hasMore && last ? encodeCursor({ sort, ...positionOf(last) }) : null;
  let link: string | null = null;
  if (nextCursor) {
    const next = new URL(requestUrl);
    next.searchParams.set('cursor', nextCursor);
    link = `<${next.pathname}${next.search}>; rel="next"`;
  }
  return { data: pageRows.map(present), meta: { has_more: hasMore, next_cursor: nextCursor, limit }, link };
}
