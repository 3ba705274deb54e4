// Calendar months as the CFO's figures count them: a month is `YYYY-MM`, and in SQL its index
// year × 12 + month − 1, so that month arithmetic is integer arithmetic on both sides.
import { AppError } from '../../lib/errors.ts';

export type Month = string;

export const monthIndex = (month: Month): number => Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1;

export const monthOf = (index: number): Month =>
  `${String(Math.floor(index / 12)).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`;

/** The month of a YYYY-MM-DD day. */
export const monthOfDay = (day: string): Month => day.slice(0, 7);

/** The last day of a month (YYYY-MM-DD). */
export function lastDayOf(month: Month): string {
  const index = monthIndex(month) + 1;
  const firstOfNext = Date.UTC(Math.floor(index / 12), index % 12, 1);
  return new Date(firstOfNext - 86_400_000).toISOString().slice(0, 10);
}

/** The day a month's closing figures are read on: its last day, or today for the month under way. */
export const closingDay = (month: Month, today: string): string => {
  const last = lastDayOf(month);
  return last < today ? last : today;
};

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** A `YYYY-MM` query parameter, or a 400 naming it. */
export function parseMonth(raw: string | undefined, name: string): Month | undefined {
  if (raw === undefined) return undefined;
  if (!MONTH.test(raw) || raw < '1900-01')
    throw new AppError('validation_failed', `Invalid query parameter "${name}": must be a month YYYY-MM, got "${raw}"`);
  return raw;
}

/** The most months one answer covers (ten years). */
export const MAX_MONTHS = 120;

/** `from`..`to` (inclusive), checked: not reversed, at most MAX_MONTHS, not after the month under
 * way; `to` defaults to this month and `from` to the eleven months before it. */
export function monthRange(input: { from?: string; to?: string; today: string }): { from: Month; to: Month } {
  const current = monthOfDay(input.today);
  const to = parseMonth(input.to, 'to') ?? current;
  if (to > current)
    throw new AppError('validation_failed', `Invalid query parameter "to": ${to} has not begun yet (this month is ${current})`);
  const from = parseMonth(input.from, 'from') ?? monthOf(Math.max(0, monthIndex(to) - 11));
  if (from > to) throw new AppError('validation_failed', `Invalid query parameter "from": ${from} is after "to" (${to})`);
  const months = monthIndex(to) - monthIndex(from) + 1;
  if (months > MAX_MONTHS)
    throw new AppError('validation_failed', `Invalid query parameter "from": the range covers ${months} months, at most ${MAX_MONTHS}`);
  return { from, to };
}
