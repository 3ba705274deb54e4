// The webhook senders' cache: asks within its time share one load, a load is made again after it,
// a failed load is not remembered, and clear() forgets at once.
import { describe, expect, test } from 'bun:test';
import { createTtlCache } from '../../src/lib/ttl-cache.ts';

function counted(fail = () => false) {
  let loads = 0;
  return {
    loads: () => loads,
    load: async (key: string) => {
      loads++;
      if (fail()) throw new Error('database down');
      return `${key}#${loads}`;
    },
  };
}

describe('ttl cache', () => {
  test('concurrent and later asks within the time share one load; after it, the value is loaded again', async () => {
    let now = 1_000;
    const source = counted();
    const cache = createTtlCache(source.load, { ttlMs: 2_000, maxEntries: 10, clock: () => now });
    expect(await Promise.all([cache.get('a'), cache.get('a')])).toEqual(['a#1', 'a#1']);
    now += 1_999;
    expect(await cache.get('a')).toBe('a#1');
    expect(source.loads()).toBe(1);
    now += 1;
    expect(await cache.get('a')).toBe('a#2');
  });

  test('a failed load is not remembered; clear() forgets what was', async () => {
    let failing = true;
    const source = counted(() => failing);
    const cache = createTtlCache(source.load, { ttlMs: 60_000, maxEntries: 10 });
    await expect(Promise.resolve(cache.get('a'))).rejects.toThrow('database down');
    failing = false;
    expect(await cache.get('a')).toBe('a#2');
    cache.clear();
    expect(await cache.get('a')).toBe('a#3');
  });
});
