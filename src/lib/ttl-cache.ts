// What a webhook's sender is (a connector with its secrets opened), kept for a moment: a platform
// posting thousands of events a minute costs one query every `ttlMs`, not one per event. Concurrent
// asks for one key share one load; a failed load is not remembered; unknown keys are remembered
// too (a flood of made-up ids costs no more queries), within `maxEntries`.

/** A webhook sender (a connector) is looked up again after two seconds: a rotation or a change
 * made on another instance is seen within that time. */
export const SENDER_CACHE = { ttlMs: 2_000, maxEntries: 10_000 } as const;

export interface TtlCache<V> {
  get(key: string): V | Promise<V>;
  /** Forgets everything (after a change this process made: it is seen at once here). */
  clear(): void;
}

export function createTtlCache<V>(
  load: (key: string) => Promise<V>,
  options: { ttlMs: number; maxEntries: number; clock?: () => number },
): TtlCache<V> {
  const clock = options.clock ?? Date.now;
  const cache = new Map<string, { at: number; value: Promise<V> | V }>();
  return {
    get(key) {
      const now = clock();
      const hit = cache.get(key);
      if (hit && now - hit.at < options.ttlMs) return hit.value;
      if (cache.size >= options.maxEntries) cache.clear();
      const pending = load(key).then(
        (value) => {
          if (cache.get(key)?.value === pending) cache.set(key, { at: now, value });
          return value;
        },
        (error) => {
          cache.delete(key); // a failed query is not remembered
          throw error;
        },
      );
      cache.set(key, { at: now, value: pending });
      return pending;
    },
    clear: () => cache.clear(),
  };
}
