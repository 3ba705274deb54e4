import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz } from './columns.ts';
import { organisations } from './organisations.ts';
import type { BacktestStatus } from './predictions.ts';

/** Runs of the CFO forecast's backtest (POST /api/cfo/forecast-backtests, `revintel forecast
 * backtest`): what was asked, and the report the fitting thread recorded. At most one queued or
 * running per organisation and question, so asking again while one is pending answers that one. */
export const forecastBacktests = pgTable(
  'forecast_backtests',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    status: text('status').$type<BacktestStatus>().notNull().default('queued'),
    origins: integer('origins').notNull(),
    horizon: integer('horizon').notNull(),
    /** Null: every currency apart. */
    currency: text('currency'),
    /** The report (WAPE, bias and band coverage per horizon) once it succeeded. */
    report: jsonb('report').$type<Record<string, unknown>>(),
    error: text('error'),
    /** Who asked: `api` or `cli`. */
    requestedBy: text('requested_by').notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    startedAt: timestamptz('started_at'),
    finishedAt: timestamptz('finished_at'),
  },
  (table) => [
    uniqueIndex('forecast_backtests_one_open')
      .on(table.orgId, table.origins, table.horizon, sql`coalesce(${table.currency}, '')`)
      .where(sql`${table.status} in ('queued', 'running')`),
    index('forecast_backtests_org_finished_idx').on(table.orgId, table.finishedAt.desc()),
  ],
);
