// The organisation's reporting currency and monthly exchange rates (docs/cfo.md "Reporting
// currency"): set through the API or `revintel fx`, never fetched from the network.
import { and, asc, eq, gte, lte, sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';
import { fxRates, organisations } from '../../db/schema/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { isIsoCurrency, RATE_PATTERN, rateUnits } from './currencies.ts';
import type { Month } from './months.ts';

export interface MissingRate {
  currency: string;
  month: Month;
}

export interface FxRateView {
  month: Month;
  currency: string;
  quote_currency: string;
  rate: string;
}

export interface FxRateInput {
  month: Month;
  currency: string;
  /** Absent: the organisation's reporting currency. */
  quote_currency?: string;
  rate: string;
}

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
const RATE = new RegExp(RATE_PATTERN);

export async function reportingCurrencyOf(db: Db, orgId: string): Promise<string | null> {
  const [row] = await db.select({ currency: organisations.reportingCurrency }).from(organisations).where(eq(organisations.id, orgId));
  if (!row) throw notFound(`Organisation ${orgId}`);
  return row.currency;
}

export async function setReportingCurrency(db: Db, input: { orgId: string; currency: string | null }): Promise<string | null> {
  if (input.currency !== null && !isIsoCurrency(input.currency))
    throw new AppError('validation_failed', `Invalid field "reporting_currency": must be an ISO 4217 currency code such as USD`);
  await db.update(organisations).set({ reportingCurrency: input.currency, updatedAt: new Date() }).where(eq(organisations.id, input.orgId));
  return input.currency;
}

/** A rate written as text keeps its decimals; trailing zeros of numeric(24, 12) are dropped. */
const plainRate = (rate: string) => (rate.includes('.') ? rate.replace(/0+$/, '').replace(/\.$/, '') : rate);

/** Checks and writes rates (one statement; a rate already there for the month is replaced). Each
 * problem names the row (1 = the first) and the field. */
export async function setRates(db: Db, input: { orgId: string; rates: FxRateInput[] }): Promise<FxRateView[]> {
  const reporting = await reportingCurrencyOf(db, input.orgId);
  const rows = input.rates.map((r, i) => {
    const where = input.rates.length > 1 ? `rates[${i}].` : '';
    if (typeof r.month !== 'string' || !MONTH.test(r.month) || r.month < '1900-01')
      throw new AppError('validation_failed', `Invalid field "${where}month": must be a month YYYY-MM (from 1900-01)`);
    if (typeof r.currency !== 'string' || !isIsoCurrency(r.currency))
      throw new AppError('validation_failed', `Invalid field "${where}currency": must be an ISO 4217 currency code such as USD`);
    const quote = r.quote_currency ?? reporting;
    if (quote === null)
      throw new AppError(
        'unprocessable',
        `Invalid field "${where}quote_currency": the organisation has no reporting currency; set one first or name the quote currency`,
      );
    if (!isIsoCurrency(quote))
      throw new AppError('validation_failed', `Invalid field "${where}quote_currency": must be an ISO 4217 currency code such as USD`);
    if (quote === r.currency)
      throw new AppError('validation_failed', `Invalid field "${where}currency": a rate converts to another currency than ${quote}`);
    const rate = String(r.rate);
    if (!RATE.test(rate) || rateUnits(rate) === 0n)
      throw new AppError(
        'validation_failed',
        `Invalid field "${where}rate": must be a positive decimal such as 1.0842 (at most 12 decimals)`,
      );
    return { orgId: input.orgId, month: `${r.month}-01`, currency: r.currency, quoteCurrency: quote, rate };
  });
  // One statement cannot write a row twice (ON CONFLICT would refuse it): a repeat is the sender's mistake.
  const seen = new Map<string, number>();
  rows.forEach((row, i) => {
    const key = `${row.quoteCurrency} ${row.currency} ${row.month}`;
    const earlier = seen.get(key);
    if (earlier !== undefined)
      throw new AppError('validation_failed', `Invalid field "rates[${i}]": the same month and currencies as rates[${earlier}]`);
    seen.set(key, i);
  });
  if (rows.length === 0) return [];
  const written = await db
    .insert(fxRates)
    .values(rows)
    .onConflictDoUpdate({
      target: [fxRates.orgId, fxRates.quoteCurrency, fxRates.currency, fxRates.month],
      set: { rate: sql`excluded.rate`, updatedAt: new Date() },
    })
    .returning();
  return written.map(present);
}

const present = (row: typeof fxRates.$inferSelect): FxRateView => ({
  month: row.month.slice(0, 7),
  currency: row.currency,
  quote_currency: row.quoteCurrency,
  rate: plainRate(row.rate),
});

export async function listRates(db: Db, input: { orgId: string; from?: Month; to?: Month; currency?: string }): Promise<FxRateView[]> {
  const rows = await db
    .select()
    .from(fxRates)
    .where(
      and(
        eq(fxRates.orgId, input.orgId),
        input.from ? gte(fxRates.month, `${input.from}-01`) : undefined,
        input.to ? lte(fxRates.month, `${input.to}-01`) : undefined,
        input.currency ? eq(fxRates.currency, input.currency) : undefined,
      ),
    )
    .orderBy(asc(fxRates.quoteCurrency), asc(fxRates.currency), asc(fxRates.month));
  return rows.map(present);
}

/** The rates into `quote` for the currency-months `needed` (keyed `CUR YYYY-MM`, as integers of
 * 12 decimals), and those missing, in order. */
export async function ratesFor(
  db: Db,
  input: { orgId: string; quote: string; needed: MissingRate[] },
): Promise<{ rates: Map<string, bigint>; missing: MissingRate[] }> {
  const rates = new Map<string, bigint>();
  if (input.needed.length === 0) return { rates, missing: [] };
  const rows = await queryRows<{ currency: string; month: string; rate: string }>(
    db,
    sql`select currency, to_char(month, 'YYYY-MM') as month, rate::text as rate from fx_rates
        where org_id = ${input.orgId} and quote_currency = ${input.quote}`,
  );
  for (const row of rows) rates.set(`${row.currency} ${row.month}`, rateUnits(row.rate));
  const missing = input.needed
    .filter((n) => !rates.has(`${n.currency} ${n.month}`))
    .sort((a, b) => a.currency.localeCompare(b.currency) || a.month.localeCompare(b.month));
  return { rates, missing };
}
