// Idempotency-Key on POST, as Stripe does it: the first answer to a key is kept for 24 hours and
// replayed to every retry carrying it; the same key with a different request is a 409.
//
// The key is claimed, the change made and the answer stored in one transaction, so a key is never
// stored without its change nor a change without its key. Two requests racing with one key: the
// second one's claim waits on the first's row lock, then finds the stored answer and replays it. A
// request that fails (a 4xx or 5xx) rolls back with its key, and the client may retry it.
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { transaction } from '../../db/transaction.ts';
import { AppError } from '../../lib/errors.ts';

/** How long an answer is replayed. */
const IDEMPOTENCY_WINDOW_HOURS = 24;

interface StoredAnswer {
  status: number;
  body: unknown;
}

/** JSON with object keys sorted: the same request written in another key order is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const requestFingerprint = (method: string, path: string, body: unknown) =>
  createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest('hex');

/** The header's value, checked: 1 to 255 visible ASCII characters (a UUID is the usual choice). */
export function idempotencyKeyOf(request: Request): string | null {
  const key = request.headers.get('idempotency-key');
  if (key === null) return null;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new AppError('validation_failed', 'Invalid header "Idempotency-Key": must be 1 to 255 visible ASCII characters, e.g. a UUID');
  }
  return key;
}

/**
 * Runs `change` in a transaction and answers with what it returns — or, when `key` has answered
 * within the window, with that answer again (`replayed`). Without a key it is just the transaction.
 */
export async function answerOnce(
  db: Db,
  input: { orgId: string; key: string | null; fingerprint: string },
  change: (tx: Db) => Promise<StoredAnswer>,
): Promise<StoredAnswer & { replayed: boolean }> {
  return transaction(db, async (tx) => {
    if (input.key === null) return { ...(await change(tx)), replayed: false };
    // Claim the key (an expired answer is replaced); a row that is someone else's comes back empty.
    const claimed = rowsOf(
      await tx.execute(sql`
        insert into idempotency_keys (org_id, key, fingerprint, response_status, response_body)
        values (${input.orgId}, ${input.key}, ${input.fingerprint}, 0, 'null')
        on conflict (org_id, key) do update
          set fingerprint = excluded.fingerprint, response_status = 0, response_body = 'null', created_at = now()
          where idempotency_keys.created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})
        returning 1`),
    );
    if (claimed.length === 0) {
      const [stored] = rowsOf<{ fingerprint: string; response_status: number; response_body: string }>(
        await tx.execute(
          sql`select fingerprint, response_status, response_body from idempotency_keys where org_id = ${input.orgId} and key = ${input.key}`,
        ),
      );
      if (!stored || stored.fingerprint !== input.fingerprint) {
        throw new AppError('conflict', 'Idempotency-Key was already used with a different request; use a new key for a new request');
      }
      return { status: stored.response_status, body: JSON.parse(stored.response_body), replayed: true };
    }
    const answer = await change(tx);
    await tx.execute(sql`
      update idempotency_keys set response_status = ${answer.status}, response_body = ${JSON.stringify(answer.body)}
      where org_id = ${input.orgId} and key = ${input.key}`);
    return { ...answer, replayed: false };
  });
}

/** Forgets up to `limit` answers older than the window (run now and then, a batch at a time;
 * expired keys are also reclaimed on use). */
export async function purgeExpiredIdempotencyKeys(db: Db, limit: number): Promise<number> {
  const deleted = rowsOf(
    await db.execute(sql`
      delete from idempotency_keys where (org_id, key) in (
        select org_id, key from idempotency_keys where created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS}) limit ${limit})
      returning 1`),
  );
  return deleted.length;
}
