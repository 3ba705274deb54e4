// Cursors: opaque to clients, bound to their sort, refused with a 400 naming the parameter.
import { describe, expect, test } from 'bun:test';
import { decodeCursor, encodeCursor, pageOf } from '../../src/lib/pagination.ts';
import { AppError } from '../../src/lib/errors.ts';

const refusedWith = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(400);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('cursor pagination', () => {
  test('a cursor round-trips its position, and only for its own sort', () => {
    const cursor = encodeCursor({ sort: 'created_at', value: '2026-11-25 10:00:00.123456+00', id: 'cus_1' });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/); // URL-safe, no padding
    expect(decodeCursor(cursor, 'created_at', 'timestamp')).toEqual({
      sort: 'created_at',
      value: '2026-11-25 10:00:00.123456+00',
      id: 'cus_1',
    });
    expect(refusedWith(() => decodeCursor(cursor, 'name', 'text'))).toBe(
      'Invalid query parameter "cursor": it belongs to sort "created_at", not "name"',
    );
  });

  test('anything else is refused, naming the parameter', () => {
    for (const raw of [
      'garbage!!',
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from('["created_at",{},"x"]').toString('base64url'),
      '',
    ]) {
      expect(refusedWith(() => decodeCursor(raw, 'created_at', 'timestamp'))).toStartWith('Invalid query parameter "cursor"');
    }
  });

  test('a forged position is refused before SQL casts it: each part is what its sort says', () => {
    const forged = (sort: string, value: unknown, id: unknown) => Buffer.from(JSON.stringify([sort, value, id])).toString('base64url');
    const refusals: [string, string][] = [
      [forged('created_at', 'x', 'y'), 'timestamp'],
      [forged('created_at', '2026-02-30 10:00:00+00', 'cus_1'), 'timestamp'],
      [forged('created_at', '2026-01-01 10:00:00+23:59', 'cus_1'), 'timestamp'],
      [forged('created_at', null, 'cus_1'), 'timestamp'],
      [forged('arr', 1.5, 'cus_1'), 'integer'],
      [forged('arr', '1e3', 'cus_1'), 'integer'],
      [forged('arr', 2 ** 64, 'cus_1'), 'integer'],
      [forged('name', 'a\u0000b', 'cus_1'), 'text'],
      [forged('name', 'Acme', 'cus_\u0000'), 'text'],
      [forged('name', 'Acme', "x' or 1=1"), 'text'],
    ];
    for (const [raw, kind] of refusals) {
      const sort = JSON.parse(Buffer.from(raw, 'base64url').toString())[0];
      expect(refusedWith(() => decodeCursor(raw, sort, kind as 'text'))).toBe(
        'Invalid query parameter "cursor": not a cursor this API returned',
      );
    }
    expect(decodeCursor(forged('arr', '120000', 'cus_1'), 'arr', 'integer').value).toBe('120000');
    expect(decodeCursor(forged('name', 'Ünïcode & Co', 'cus_1'), 'name', 'text').value).toBe('Ünïcode & Co');
  });

  test('a page from limit + 1 rows: has_more, next_cursor and Link, with the other parameters kept', () => {
    const rows = [1, 2, 3].map((n) => ({ id: `cus_${n}`, n }));
    const page = pageOf(
      rows,
      2,
      'created_at',
      (r) => ({ value: r.n, id: r.id }),
      (r) => r.id,
      'http://api.test/api/customers?status=active&limit=2',
    );
    expect(page.data).toEqual(['cus_1', 'cus_2']);
    expect(page.meta.has_more).toBe(true);
    expect(decodeCursor(page.meta.next_cursor!, 'created_at', 'integer')).toEqual({ sort: 'created_at', value: 2, id: 'cus_2' });
    expect(page.link).toBe(`</api/customers?status=active&limit=2&cursor=${page.meta.next_cursor}>; rel="next"`);
    const last = pageOf(
      rows.slice(0, 2),
      2,
      'created_at',
      (r) => ({ value: r.n, id: r.id }),
      (r) => r.id,
      'http://api.test/api/customers',
    );
    expect(last.meta).toEqual({ has_more: false, next_cursor: null, limit: 2 });
    expect(last.link).toBeNull();
  });
});
