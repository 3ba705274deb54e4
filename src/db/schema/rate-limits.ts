import { bigint, integer, pgTable, text } from 'drizzle-orm/pg-core';

/** Shared rate-limit counters (RATE_LIMIT_STORE=postgres): one row per (subject, window), `expire`
 * in epoch ms after which the row is swept. Unlogged (migration 0002): worthless after a crash. */
export const rateLimitCounters = pgTable('rate_limit_counters', {
  key: text('key').primaryKey(),
  points: integer('points').notNull().default(0),
  expire: bigint('expire', { mode: 'number' }),
});
