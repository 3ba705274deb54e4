import { integer, jsonb, text, timestamp } from 'drizzle-orm/pg-core';

/** Every timestamp is stored with its zone and handed to the code as a Date. Generic in its name so
 * the column's type keeps it (rows typed by SQL name: db/rows.ts). */
export const timestamptz = <Name extends string>(name: Name) => timestamp(name, { withTimezone: true, mode: 'date' });

export const timestamps = {
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
};

/** The attempts of an outbox row (an event delivery, a chat send), written by one function
 * (queue/outbox-attempts.ts). */
export const outboxAttempts = {
  attempts: integer('attempts').notNull().default(0),
  nextAttemptAt: timestamptz('next_attempt_at'),
  /** The last attempt's HTTP status (null: no answer — refused, timed out, unreachable). */
  lastStatus: integer('last_status'),
  lastError: text('last_error'),
  /** Every attempt: at, status, error, ms. */
  history: jsonb('history').$type<{ at: string; status: number | null; error: string | null; ms: number }[]>().notNull().default([]),
  deliveredAt: timestamptz('delivered_at'),
};
