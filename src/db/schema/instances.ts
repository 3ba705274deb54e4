import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import { timestamptz } from './columns.ts';

/** One row per running `serve` process, kept fresh by its supervisor (jobs/supervisor.ts): which
 * instances share the database, and whether each one is alive to hold its leases. */
export const instances = pgTable('instances', {
  id: text('id').primaryKey(),
  hostname: text('hostname').notNull(),
  pid: integer('pid').notNull(),
  version: text('version').notNull(),
  startedAt: timestamptz('started_at').notNull(),
  workerHeartbeatAt: timestamptz('worker_heartbeat_at').notNull(),
  stoppedAt: timestamptz('stopped_at'),
});

export type Instance = typeof instances.$inferSelect;
