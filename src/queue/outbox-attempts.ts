// One attempt of one outbox row — an outbound event's delivery (`event_deliveries`) or a call to a chat
// platform (`chat_sends`), which keep the same attempt columns — and its fate: delivered, tried
// again after an exponential back-off with full jitter (never sooner than the receiver's
// Retry-After) until the 8th attempt, or dead. Below the features: both outboxes and every chat
// platform's transport use it, none of them another's.
import type { Static, TSchema } from '@sinclair/typebox';
import { sql, type SQL } from 'drizzle-orm';
import { type Db, rowsOf } from '../db/client.ts';
import type { DeliveryStatus } from '../db/schema/index.ts';
import { messageOf } from '../lib/errors.ts';
import { backoffSeconds, type RetryPolicy } from './job-kind.ts';
import { type EnqueuedKind, enqueueJob } from './job-queue.ts';

export const OUTBOX_MAX_ATTEMPTS = 8;
export const OUTBOX_TIMEOUT_MS = 10_000;

/** Back-off after the n-th failed attempt: a random point up to min(1 h, 5 s · 2^(n-1)). */
export const OUTBOX_BACKOFF: RetryPolicy = { maxAttempts: OUTBOX_MAX_ATTEMPTS, baseSeconds: 5, maxSeconds: 3600 };

export type AttemptResult = {
  status: number | null;
  error: string | null;
  ms: number;
  retryAfterSeconds: number | null;
  final: boolean;
  /** What went wrong in the network's own words: for the server's log, never stored. */
  detail?: string;
};

/** Why an outbound call got no answer: our timeout, or the network's error. */
export function unanswered(error: unknown): string {
  const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
  return timedOut ? `no answer within ${OUTBOX_TIMEOUT_MS / 1000} s` : messageOf(error);
}

/** Retry-After as seconds (a number, or an HTTP date), at most a day: every outbound caller's. */
export function retryAfterOf(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  const seconds = /^\d+$/.test(value.trim()) ? Number(value) : (Date.parse(value) - now) / 1000;
  return Number.isFinite(seconds) ? Math.min(86_400, Math.max(0, seconds)) : null;
}

/** What an attempt's outcome means: delivered, tried again at a time, or dead. */
export function attemptOutcome(
  result: AttemptResult,
  attempts: number,
  now: number,
  random: () => number = Math.random,
): { status: DeliveryStatus; nextAt: string | null } {
  if (result.status !== null && result.status >= 200 && result.status < 300) return { status: 'delivered', nextAt: null };
  if (result.final || attempts >= OUTBOX_MAX_ATTEMPTS) return { status: 'dead', nextAt: null };
  const seconds = Math.max(backoffSeconds(OUTBOX_BACKOFF, attempts, random), result.retryAfterSeconds ?? 0);
  return { status: 'pending', nextAt: new Date(now + seconds * 1000).toISOString() };
}

type OutboxTable = 'event_deliveries' | 'chat_sends';

/** One attempt written on its outbox row: the outcome, the attempt in the history, when the next one
 * is due. `extra` sets more columns in the same statement. */
async function writeAttempt(
  db: Db,
  input: { table: OutboxTable; id: string; attempts: number; result: AttemptResult; now: string; extra?: SQL },
): Promise<{ status: DeliveryStatus; nextAt: string | null }> {
  const { result, now } = input;
  // Slack and Meta answer some errors with a 2xx (`ok: false`, an error code): an attempt with an
  // error is never delivered, whatever its status (kept as it was, in the row and the history).
  const settled = attemptOutcome(result.error ? { ...result, status: null } : result, input.attempts, Date.parse(now));
  const entry = { at: now, status: result.status, error: result.error, ms: result.ms };
  await db.execute(sql`
    update ${sql.identifier(input.table)} set status = ${settled.status}, attempts = ${input.attempts}, last_status = ${result.status}, last_error = ${result.error},
      next_attempt_at = ${settled.nextAt}::timestamptz, delivered_at = ${settled.status === 'delivered' ? now : null}::timestamptz,
      history = history || ${JSON.stringify([entry])}::jsonb, updated_at = ${now}::timestamptz ${input.extra ?? sql``}
    where id = ${input.id}`);
  return settled;
}

/** What settling an attempt read of its row (the caller's `columns` too) and what came of it. */
export type SettledAttempt<Row> = Row & { org_id: string; attempts: number; status: DeliveryStatus; nextAt: string | null };

/** Settles one attempt of a pending outbox row, in `db`'s transaction: the row locked and read
 * (with the caller's `columns`), the attempt written, and a retry queued as `job` with `payload` at
 * the back-off's time (keyed by the row, so a redelivered job cannot queue two). Null when the row is
 * no longer pending (another attempt settled it). */
export async function settleAttempt<P extends TSchema, Row extends object = object>(
  db: Db,
  input: {
    table: OutboxTable;
    id: string;
    job: EnqueuedKind<P>;
    payload: Static<P>;
    result: AttemptResult;
    now: string;
    /** Scopes the row to its organisation when the caller knows it. */
    orgId?: string;
    /** More of the row the caller needs afterwards (`, kind, notification_id`). */
    columns?: SQL;
    extra?: SQL;
  },
): Promise<SettledAttempt<Row> | null> {
  const scope = input.orgId === undefined ? sql`` : sql` and org_id = ${input.orgId}`;
  const [row] = rowsOf<Row & { org_id: string; attempts: number }>(
    await db.execute(sql`
      select attempts + 1 as attempts, org_id ${input.columns ?? sql``} from ${sql.identifier(input.table)}
      where id = ${input.id}${scope} and status = 'pending' for update`),
  );
  if (!row) return null;
  const settled = await writeAttempt(db, { ...input, attempts: row.attempts });
  if (settled.nextAt)
    await enqueueJob(db, input.job, input.payload, { orgId: row.org_id, dedupeKey: input.id, runAt: new Date(settled.nextAt) });
  return { ...row, ...settled };
}
