import { timestamp } from 'drizzle-orm/pg-core';

/** Every timestamp is stored with its zone and handed to the code as a Date. Generic in its name so
 * the column's type keeps it (rows typed by SQL name: db/rows.ts). */
export const timestamptz = <Name extends string>(name: Name) => timestamp(name, { withTimezone: true, mode: 'date' });

export const timestamps = {
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
};
