// Strict formats for the dates and times clients send. Elysia's own `date` and `date-time` formats
// accept whatever `new Date()` can read — "2026-02-30" (it rolls into March), "Wed Jan 01 2026" —
// which then fails in PostgreSQL as a 500. These accept RFC 3339 only, on real calendar days.
import { FormatRegistry } from '@sinclair/typebox';

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

/** YYYY-MM-DD on the calendar (years 0001 to 9999). */
export function isCalendarDay(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!);
}

/** An RFC 3339 time with its zone: 2026-01-31T12:00:00Z, 2026-01-31T12:00:00.123+02:00. Offsets
 * stop at ±15:59, where PostgreSQL's do (RFC 3339 allows ±23:59; no zone on Earth is past ±14). */
export function isInstant(value: string): boolean {
  const match = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/.exec(value);
  if (!match || !isCalendarDay(match[1]!)) return false;
  const [hour, minute, second] = [Number(match[2]), Number(match[3]), Number(match[4])];
  const [zoneHour, zoneMinute] = [Number(match[7] ?? 0), Number(match[8] ?? 0)];
  return hour <= 23 && minute <= 59 && second <= 59 && zoneHour <= 15 && zoneMinute <= 59;
}

FormatRegistry.Set('calendar-day', isCalendarDay);
FormatRegistry.Set('instant', isInstant);
