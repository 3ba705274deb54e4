import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { runColumns } from './runs.ts';

/** Runs of the CFO forecast's backtest (POST /api/cfo/forecast-backtests, `revintel forecast
 * backtest`): what was asked, and the report the fitting thread recorded. At most one queued or
 * running per organisation and question, so asking again while one is pending answers that one. */
export const forecastBacktests = pgTable(
  'forecast_backtests',
  {
    ...runColumns(),
    origins: integer('origins').notNull(),
    horizon: integer('horizon').notNull(),
    /** Null: every currency apart. */
    currency: text('currency'),
    /** The report (WAPE, bias and band coverage per horizon) once it succeeded. */
    report: jsonb('report').$type<Record<string, unknown>>(),
  },
  (table) => [
    uniqueIndex('forecast_backtests_one_open')
      .on(table.orgId, table.origins, table.horizon, sql`coalesce(${table.currency}, '')`)
      .where(sql`${table.status} in ('queued', 'running')`),
    index('forecast_backtests_org_finished_idx').on(table.orgId, table.finishedAt.desc()),
  ],
);
