// The queue's retry policy, in one place: whether a failed event is tried again after a back-off or
// dead-lettered now. Retrying cannot help an event whose body holds no usable ticket, nor one whose
// data the database refuses: the same bytes fail the same way on every attempt. Anything else (a lost
// connection, a serialization failure or deadlock, a lock timeout, an unavailable database, an error
// we do not know) may pass next time, so it is retried up to MAX_ATTEMPTS.
import type { EventOutcome } from './service.ts';

/** Attempts before an event is dead-lettered. */
export const MAX_ATTEMPTS = 8;

/** Why an event can never be made into tickets: its body is not JSON, holds no ticket, or an
 * adapter fails on it. */
export class UnusableEvent extends Error {
  override readonly name = 'UnusableEvent';
}

// SQLSTATE class 22, data exception (22P05 unsupported Unicode escape, 22021 invalid byte sequence,
// 22P02 invalid text, 22003 number out of range, 22007/22008 bad date or time…), and 23514, a check
// constraint refusing a value.
const REFUSED_DATA = /^(?:22[0-9A-Z]{3}|23514)$/;
// What a SQLSTATE looks like (its classes), unlike the drivers' own codes (ECONNREFUSED, EPIPE,
// CONNECTION_CLOSED).
const SQLSTATE = /^(?:\d\d|F0|HV|P0|XX)[0-9A-Z]{3}$/;

/** A database error's SQLSTATE, from either driver, after a thread crossing (RemoteUnitError keeps
 * `code`) or wrapped once (drizzle puts the driver's error in `cause`). */
function sqlStateOf(error: unknown): string | undefined {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } | null };
  const found = typeof code === 'string' ? code : cause?.code;
  return typeof found === 'string' && SQLSTATE.test(found) ? found : undefined;
}

/** Whether no retry can fix the failure. */
export function isPermanent(error: unknown): boolean {
  if (error instanceof UnusableEvent) return true;
  const sqlState = sqlStateOf(error);
  return sqlState !== undefined && REFUSED_DATA.test(sqlState);
}

/** The outcome of an event that failed with `error` while `doing` (e.g. "could not be stored"). */
export function failedOutcome(eventId: string, error: unknown, doing?: string): Extract<EventOutcome, { ok: false }> {
  const permanent = isPermanent(error);
  const sqlState = sqlStateOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const said =
    sqlState === undefined
      ? message
      : `${message} (SQLSTATE ${sqlState}${permanent ? ': the database refuses this data, not retried' : ''})`;
  return { eventId, ok: false, error: doing ? `${doing}: ${said}` : said, permanent };
}

/** Whether the event's failure on its `attempts`-th attempt ends it. */
export const isFinal = (outcome: { permanent: boolean }, attempts: number) => outcome.permanent || attempts >= MAX_ATTEMPTS;

/** Exponential back-off with full jitter: 2 s, 4 s, 8 s … capped at 10 minutes, each a random
 * point up to that, so events that failed together do not all come back together. */
export function retryDelaySeconds(attempts: number, random = Math.random): number {
  const ceiling = Math.min(600, 2 ** attempts);
  return Math.max(1, ceiling * random());
}
