import { check, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { timestamps } from './columns.ts';

export const PLANS = ['growth_agents', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const organisations = pgTable(
  'organisations',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull().unique(),
    plan: text('plan', { enum: PLANS }).notNull(),
    /** Operator overrides of the plan's limits; null keeps the plan's. */
    rateLimitPerMinute: integer('rate_limit_per_minute'),
    rateLimitPerDay: integer('rate_limit_per_day'),
    /** The currency the CFO's figures may be converted to (with the organisation's monthly rates,
     * fx_rates); null: figures stay per currency. */
    reportingCurrency: text('reporting_currency'),
    ...timestamps,
  },
  (table) => [
    check('organisations_plan_check', sql`${table.plan} in ('growth_agents', 'enterprise')`),
    check('organisations_reporting_currency_check', sql`${table.reportingCurrency} is null or ${table.reportingCurrency} ~ '^[A-Z]{3}$'`),
    check('organisations_limits_positive', sql`coalesce(${table.rateLimitPerMinute}, 1) > 0 and coalesce(${table.rateLimitPerDay}, 1) > 0`),
  ],
);

export type Organisation = typeof organisations.$inferSelect;
