import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, smallint, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { timestamps, timestamptz } from './columns.ts';

export const JOB_STATES = ['queued', 'running', 'done', 'dead'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** The durable job queue (src/jobs): background work of every kind but ticket events (which have
 * their own queue, tuned for throughput). `queued` waits for `run_at`; `running` is held by
 * `lease_owner` until `lease_until` (taken back when the lease runs out or its instance stops
 * beating); `done` keeps its result; `dead` gave up and keeps the last error until retried. */
export const jobs = pgTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    /** Null for the service's own housekeeping. */
    orgId: text('org_id').references(() => organisations.id, { onDelete: 'cascade' }),
    payload: jsonb('payload').$type<unknown>().notNull().default({}),
    /** At most one queued job per (kind, organisation, key): a second enqueue finds the first. */
    dedupeKey: text('dedupe_key'),
    state: text('state').$type<JobState>().notNull().default('queued'),
    /** Higher runs first among due jobs. */
    priority: smallint('priority').notNull().default(0),
    runAt: timestamptz('run_at').notNull().defaultNow(),
    attempts: integer('attempts').notNull().default(0),
    /** From the kind's retry policy when enqueued: a lease that runs out on the last attempt is the end. */
    maxAttempts: integer('max_attempts').notNull(),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamptz('lease_until'),
    lastError: text('last_error'),
    result: jsonb('result').$type<unknown>(),
    finishedAt: timestamptz('finished_at'),
    ...timestamps,
  },
  (table) => [
    uniqueIndex('jobs_dedupe_queued_unique')
      .on(table.kind, sql`coalesce(${table.orgId}, '')`, table.dedupeKey)
      .where(sql`${table.state} = 'queued' and ${table.dedupeKey} is not null`),
    // What a worker claims next, organisation by organisation (the claim walks the organisations
    // with queued work by this index's first column, then takes each one's next jobs in order).
    index('jobs_org_due_idx')
      .on(sql`coalesce(${table.orgId}, '')`, table.priority.desc().nullsFirst(), table.runAt, table.id)
      .where(sql`${table.state} = 'queued'`),
    // What is taken back from a worker that died.
    index('jobs_leased_idx').on(table.leaseUntil).where(sql`${table.state} = 'running'`),
    index('jobs_finished_idx').on(table.finishedAt).where(sql`${table.state} in ('done', 'dead')`),
    index('jobs_org_created_idx').on(table.orgId, table.createdAt.desc()),
    check('jobs_state_check', sql`${table.state} in ('queued', 'running', 'done', 'dead')`),
    check('jobs_attempts_check', sql`${table.attempts} >= 0 and ${table.maxAttempts} >= 1`),
  ],
);

export type Job = typeof jobs.$inferSelect;

/** When each scheduled kind fires next. Whoever moves `next_run_at` past now enqueues the run: one
 * row lock, so a schedule fires once however many processes share the database. */
export const jobSchedules = pgTable('job_schedules', {
  kind: text('kind').primaryKey(),
  /** "every 600s" or "daily 03:30": a changed cadence starts over from now. */
  cadence: text('cadence').notNull(),
  nextRunAt: timestamptz('next_run_at').notNull(),
  lastRunAt: timestamptz('last_run_at'),
});
