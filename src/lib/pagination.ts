// Cursor pagination (docs/arr-data.md "Reading"): `limit` 1–200 (default 50), an opaque `cursor`, `meta` and a
// `Link: <…>; rel="next"` header. A cursor names the sort it belongs to and the position after the
// last row of a page (the sort value and the id that breaks ties), so a walk sees every row once
// even while rows are inserted, and a cursor from one sort is refused by another. A cursor comes
// back from the client, so every part of it is checked against what its sort's SQL casts it to
// before it gets there: a forged one is a 400, not a failed cast.
import { AppError } from './errors.ts';
import { textProblem } from './json.ts';
import { isCalendarDay } from './formats.ts';

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

/** What a sort's value is in SQL: a timestamptz as PostgreSQL writes it, a bigint, or text. */
export type CursorKind = 'timestamp' | 'integer' | 'text';

/** PostgreSQL's text of a timestamptz (`2026-11-26 11:59:40.123456+00`), on the calendar. */
const TIMESTAMP_TEXT = /^(\d{4})-(\d{2})-(\d{2}) ([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?[+-](0\d|1[0-5])(:[0-5]\d){0,2}$/;
const INTEGER_TEXT = /^-?\d{1,18}$/;
const ID_TEXT = /^[A-Za-z0-9_]{1,64}$/;

function valueFits(value: CursorValue, kind: CursorKind): boolean {
  if (value === null) return kind !== 'timestamp';
  switch (kind) {
    case 'timestamp':
      return typeof value === 'string' && TIMESTAMP_TEXT.test(value) && isCalendarDay(value.slice(0, 10));
    case 'integer':
      return typeof value === 'number' ? Number.isSafeInteger(value) : INTEGER_TEXT.test(value);
    case 'text':
      return typeof value === 'string' && value.length <= 1_000 && textProblem(value) === null;
  }
}

export function decodeCursor(raw: string, sort: string, kind: CursorKind): CursorPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor('not a cursor this API returned');
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw invalidCursor('not a cursor this API returned');
  const [cursorSort, value, id] = parsed as unknown[];
  if (
    typeof cursorSort !== 'string' ||
    typeof id !== 'string' ||
    !(value === null || typeof value === 'string' || typeof value === 'number')
  ) {
    throw invalidCursor('not a cursor this API returned');
  }
  if (cursorSort !== sort) throw invalidCursor(`it belongs to sort "${cursorSort}", not "${sort}"`);
  if (!ID_TEXT.test(id) || !valueFits(value, kind)) throw invalidCursor('not a cursor this API returned');
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
export function pageOf<Row, T>(
  rows: Row[],
  limit: number,
  sort: string,
  positionOf: (row: Row) => { value: CursorValue; id: string },
  present: (row: Row) => T,
  requestUrl: string,
): Page<T> {
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
