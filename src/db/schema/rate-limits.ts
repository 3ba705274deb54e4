import { bigint, integer, pgTable, text } from 'drizzle-orm/pg-core';

/** Shared rate-limit counters (RATE_LIMIT_STORE=postgres), in the shape rate-limiter-flexible's
 * RateLimiterPostgres reads and writes: one row per (subject, window), `expire` in epoch ms. */
export const rateLimitCounters = pgTable('rate_limit_counters', {
  key: text('key').primaryKey(),
  points: integer('points').notNull().default(0),
  expire: bigint('expire', { mode: 'number' }),
});
