import { text } from 'drizzle-orm/pg-core';
import { timestamptz } from './columns.ts';
import { organisations } from './organisations.ts';

export const BACKTEST_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type BacktestStatus = (typeof BACKTEST_STATUSES)[number];

/** The columns of a run an organisation asks for and a job carries out (the churn model's and the
 * CFO forecast's backtests): its id and organisation, where it stands, why it failed, who asked
 * (`api`, `cli`, `nightly`) and when it was asked, started and finished. Each table takes its own
 * (a function: a column belongs to one table). */
export const runColumns = () => ({
  id: text('id').primaryKey(),
  orgId: text('org_id')
    .notNull()
    .references(() => organisations.id, { onDelete: 'cascade' }),
  status: text('status').$type<BacktestStatus>().notNull().default('queued'),
  error: text('error'),
  requestedBy: text('requested_by').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  startedAt: timestamptz('started_at'),
  finishedAt: timestamptz('finished_at'),
});
