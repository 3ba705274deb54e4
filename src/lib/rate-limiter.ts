// Fixed windows aligned to the UTC minute and the UTC day (SPEC §9), counted in one of three stores.
//
// rate-limiter-flexible gives us atomic "increment with expiry" on memory, PostgreSQL and Redis with
// the same semantics. Its own windows start at a key's first hit, so alignment comes from the key:
// every window has its own key (`org:ID:m:<minute number>`). We give the limiter no limit of its own
// (points = MAX) and compare the count it returns with the subject's limit ourselves, because limits
// differ per organisation. Each request gets a distinct count from the atomic increment, so with a
// limit of N exactly N concurrent requests pass, in one process or many.
import { RateLimiterPostgres, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Sql } from 'postgres';
import type Redis from 'ioredis';
import type { RateLimitStoreKind } from '../config.ts';

export type WindowName = 'minute' | 'day';
const WINDOW_SECONDS: Record<WindowName, number> = { minute: 60, day: 86_400 };
const UNLIMITED = Number.MAX_SAFE_INTEGER;

export interface Limits {
  perMinute: number;
  perDay: number;
}

export interface WindowState {
  limit: number;
  remaining: number;
  /** Unix epoch seconds when this window ends. */
  reset: number;
}

export interface Decision {
  allowed: boolean;
  minute: WindowState;
  day: WindowState;
  /** The window that runs out first: fewest requests left, the minute on a tie (SPEC §9). */
  inForce: WindowState;
  /** Seconds until every exhausted window has reset; 0 when allowed. */
  retryAfter: number;
}

export interface RateLimiter {
  readonly kind: RateLimitStoreKind;
  /** Counts one request against both windows, unless refused (a refused request counts nowhere).
   * Synchronous when the store is. */
  consume(subject: string, limits: Limits, now?: number): Decision | Promise<Decision>;
  /** The current state without counting (health checks). */
  peek(subject: string, limits: Limits, now?: number): Promise<Decision>;
}

/** An atomic counter per key. The in-process one answers synchronously (no promise on the hot path). */
interface Counter {
  increment(key: string): number | Promise<number>;
  decrement(key: string): void | Promise<void>;
  read(key: string): number | Promise<number>;
}

function counterOver(limiter: RateLimiterAbstract): Counter {
  return {
    increment: async (key) => (await limiter.consume(key, 1)).consumedPoints,
    decrement: async (key) => {
      await limiter.reward(key, 1);
    },
    read: async (key) => (await limiter.get(key))?.consumedPoints ?? 0,
  };
}

/** `f(value)` now if `value` is plain, once it resolves if it is a promise. */
function andThen<T, R>(value: T | Promise<T>, f: (v: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(f) : f(value);
}

function windowOf(name: WindowName, nowMs: number) {
  const seconds = WINDOW_SECONDS[name];
  const index = Math.floor(nowMs / 1000 / seconds);
  return { index, reset: (index + 1) * seconds, seconds };
}

function stateOf(limit: number, count: number, reset: number): WindowState {
  return { limit, remaining: Math.max(0, limit - count), reset };
}

function decide(limits: Limits, minuteCount: number, dayCount: number, nowMs: number, allowed: boolean): Decision {
  const minuteWindow = windowOf('minute', nowMs);
  const dayWindow = windowOf('day', nowMs);
  const minute = stateOf(limits.perMinute, minuteCount, minuteWindow.reset);
  const day = stateOf(limits.perDay, dayCount, dayWindow.reset);
  const inForce = day.remaining < minute.remaining ? day : minute;
  const nowSeconds = nowMs / 1000;
  let retryAfter = 0;
  if (!allowed) {
    for (const w of [minute, day]) if (w.remaining === 0) retryAfter = Math.max(retryAfter, Math.ceil(w.reset - nowSeconds));
    retryAfter = Math.max(1, retryAfter);
  }
  return { allowed, minute, day, inForce, retryAfter };
}

export function createRateLimiter(kind: RateLimitStoreKind, counters: Record<WindowName, Counter>): RateLimiter {
  const key = (subject: string, name: WindowName, nowMs: number) =>
    `${subject}:${name === 'minute' ? 'm' : 'd'}:${windowOf(name, nowMs).index}`;

  return {
    kind,
    consume(subject, limits, nowMs = Date.now()) {
      // Written with `andThen` rather than await: with the in-process store every step is
      // synchronous, and the request then pays for no promise at all until the gate's own await.
      const minuteKey = key(subject, 'minute', nowMs);
      const dayKey = key(subject, 'day', nowMs);
      // A refused request is taken back out of every window it was counted in, so it counts
      // nowhere: raising a limit mid-window admits at once, whatever was refused before.
      return andThen(counters.minute.increment(minuteKey), (minuteCount) => {
        if (minuteCount > limits.perMinute) {
          return andThen(counters.minute.decrement(minuteKey), () =>
            andThen(counters.day.read(dayKey), (dayCount) => decide(limits, minuteCount - 1, dayCount, nowMs, false)),
          );
        }
        return andThen(counters.day.increment(dayKey), (dayCount) => {
          if (dayCount <= limits.perDay) return decide(limits, minuteCount, dayCount, nowMs, true);
          return andThen(counters.day.decrement(dayKey), () =>
            andThen(counters.minute.decrement(minuteKey), () => decide(limits, minuteCount - 1, dayCount - 1, nowMs, false)),
          );
        });
      });
    },
    async peek(subject, limits, nowMs = Date.now()) {
      const [minuteCount, dayCount] = await Promise.all([
        counters.minute.read(key(subject, 'minute', nowMs)),
        counters.day.read(key(subject, 'day', nowMs)),
      ]);
      return decide(limits, minuteCount, dayCount, nowMs, true);
    },
  };
}

// The key already names the window, so the store's expiry (`duration`) only has to outlive it.
/**
 * The in-process store. rate-limiter-flexible's RateLimiterMemory costs about 7 µs a request here
 * (two promise-returning consumes, a result object each); within one process a Map of counters is
 * exact by construction and answers without a promise. Expired windows are swept once a minute.
 */
function memoryCounters(): Record<WindowName, Counter> {
  const counts = new Map<string, { count: number; expiresAt: number }>();
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, entry] of counts) if (entry.expiresAt <= now) counts.delete(key);
  }, 60_000);
  sweep.unref?.();
  const counter = (name: WindowName): Counter => ({
    increment(key) {
      const entry = counts.get(key);
      if (entry) return ++entry.count;
      counts.set(key, { count: 1, expiresAt: Date.now() + (WINDOW_SECONDS[name] + 5) * 1000 });
      return 1;
    },
    decrement(key) {
      const entry = counts.get(key);
      if (entry && entry.count > 0) entry.count -= 1;
    },
    read: (key) => counts.get(key)?.count ?? 0,
  });
  return { minute: counter('minute'), day: counter('day') };
}

function perWindow(make: (name: WindowName) => RateLimiterAbstract): Record<WindowName, Counter> {
  return { minute: counterOver(make('minute')), day: counterOver(make('day')) };
}

export function memoryRateLimiter(): RateLimiter {
  return createRateLimiter('memory', memoryCounters());
}

/** RateLimiterPostgres speaks node-postgres' `query({name, text, values})`; postgres.js answers it
 * through this adapter (prepared statements, so each upsert is one round trip). */
function pgQueryAdapter(sql: Sql) {
  return {
    query: async ({ text, values }: { text: string; values: unknown[] }) => {
      const rows = await sql.unsafe(text, values as never[], { prepare: true });
      return { rows, rowCount: rows.length };
    },
  };
}

export function postgresRateLimiter(sql: Sql): RateLimiter {
  return createRateLimiter(
    'postgres',
    perWindow(
      (name) =>
        new RateLimiterPostgres({
          storeClient: pgQueryAdapter(sql),
          storeType: 'pool',
          tableName: 'rate_limit_counters',
          tableCreated: true, // created by our migrations
          clearExpiredByTimeout: true,
          keyPrefix: `rl${name}`,
          points: UNLIMITED,
          duration: WINDOW_SECONDS[name] + 5,
        }),
    ),
  );
}

export function redisRateLimiter(client: Redis): RateLimiter {
  return createRateLimiter(
    'redis',
    perWindow(
      (name) =>
        new RateLimiterRedis({
          storeClient: client,
          keyPrefix: `revintel:rl${name}`,
          points: UNLIMITED,
          duration: WINDOW_SECONDS[name] + 5,
        }),
    ),
  );
}

/** The three headers of interface spec §8 (the window in force), plus both windows spelled out. */
export function rateLimitHeaders(decision: Decision): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(decision.inForce.limit),
    'x-ratelimit-remaining': String(decision.inForce.remaining),
    'x-ratelimit-reset': String(decision.inForce.reset),
    'x-ratelimit-limit-minute': String(decision.minute.limit),
    'x-ratelimit-remaining-minute': String(decision.minute.remaining),
    'x-ratelimit-reset-minute': String(decision.minute.reset),
    'x-ratelimit-limit-day': String(decision.day.limit),
    'x-ratelimit-remaining-day': String(decision.day.remaining),
    'x-ratelimit-reset-day': String(decision.day.reset),
  };
  if (!decision.allowed) headers['retry-after'] = String(decision.retryAfter);
  return headers;
}
