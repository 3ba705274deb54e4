// The queue's retry policy, in one place: whether a failed event is tried again after a back-off or
// dead-lettered now. Retrying cannot help an event whose body holds no usable ticket, nor one whose
// data the database refuses: the same bytes fail the same way on every attempt. Anything else (a lost
// connection, a serialization failure or deadlock, a lock timeout, an unavailable database, an error
// we do not know) may pass next time, so it is retried up to MAX_ATTEMPTS.
import { isRefusedData, sqlStateOf } from '../../../db/sqlstate.ts';

/** Attempts before an event is dead-lettered. */
export const MAX_ATTEMPTS = 8;

/** An event that failed: `permanent` when no retry can fix it (isPermanent decides). */
export interface FailedOutcome {
  eventId: string;
  ok: false;
  error: string;
  permanent: boolean;
}

/** Why an event can never be made into tickets: its body is not JSON, holds no ticket, or an
 * adapter fails on it. */
export class UnusableEvent extends Error {
  override readonly name = 'UnusableEvent';
}

/** Whether no retry can fix the failure. */
export function isPermanent(error: unknown): boolean {
  return error instanceof UnusableEvent || isRefusedData(error);
}

/** The outcome of an event that failed with `error` while `doing` (e.g. "could not be stored"). */
export function failedOutcome(eventId: string, error: unknown, doing?: string): FailedOutcome {
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
