import { sql } from 'drizzle-orm';
import { check, date, numeric, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { currencyCheck } from './customers.ts';
import { organisations } from './organisations.ts';
import { timestamps } from './columns.ts';

/**
 * An organisation's monthly exchange rates, entered by its people (API, `revintel fx`), never
 * fetched: one unit of `currency` is worth `rate` units of `quote_currency` for the whole month.
 * The quote currency is kept with the rate, so changing the organisation's reporting currency
 * leaves the old rates true (and unused) rather than silently wrong.
 */
export const fxRates = pgTable(
  'fx_rates',
  {
    orgId: text('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    /** The first day of the calendar month the rate holds for. */
    month: date('month', { mode: 'string' }).notNull(),
    currency: text('currency').notNull(),
    quoteCurrency: text('quote_currency').notNull(),
    /** Major units of quote_currency per major unit of currency (exact decimal, as entered). */
    rate: numeric('rate', { precision: 24, scale: 12 }).notNull(),
    ...timestamps,
  },
  (table) => [
    primaryKey({ columns: [table.orgId, table.quoteCurrency, table.currency, table.month] }),
    check('fx_rates_currency_check', currencyCheck(table.currency)),
    check('fx_rates_quote_currency_check', currencyCheck(table.quoteCurrency)),
    check('fx_rates_distinct_check', sql`${table.currency} <> ${table.quoteCurrency}`),
    check('fx_rates_rate_check', sql`${table.rate} > 0`),
    check('fx_rates_month_check', sql`extract(day from ${table.month}) = 1`),
  ],
);

export type FxRate = typeof fxRates.$inferSelect;
