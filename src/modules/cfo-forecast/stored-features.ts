// The forecast's book read from stored features (migration 0038) rather than computed per request:
// the features of every customer at a year's horizon aggregate all of the organisation's invoices
// and tickets (100,000 demo customers: 756,000 and 620,000 rows, about 2 s per request).
// - cfo_stored_features holds each counting customer's features as of one day (cfo_features_state).
// - Triggers mark every customer whose row, contract revisions, invoices or tickets change
//   (cfo_feature_changes), in the change's transaction, whoever writes it. A read takes the stored
//   rows of the unmarked customers and computes the marked ones' now, both in one snapshot, so the
//   book is the one featuresAt gives.
// - The job (jobs/forecast-features.ts), asked for by the reads that found marks and by the sweep,
//   stores the marked customers' features, or every customer's when the day (or the grace) changed.
// A day or grace other than the stored one, or more marked customers than a read recomputes
// quickly, is answered by featuresAt over the whole organisation while the job catches up.
import { sql } from 'drizzle-orm';
import { queryRows, queryText, type Db } from '../../db/client.ts';
import { featuresAt, type FeatureRow } from '../predictions/features.ts';
import type { AdditiveModel } from '../predictions/logistic.ts';
import { bookOf, FORECAST_HORIZON_DAYS, type BookCustomer } from './forecast.ts';
import { refreshInParts, type RefreshPart } from '../cfo-history/refresh-parts.ts';

/** Beyond this many marked customers a read computes every customer's features at once. */
export const MAX_MARKED_FEATURES = 5_000;

/** What a book needs of a customer's features; the rest (labels, groups) the forecast never reads. */
type StoredRow = Pick<FeatureRow, 'customerId' | 'currency' | 'arr' | 'renewalDate' | 'values'>;

function fromStored(row: { customer_id: string; currency: string; arr: number; renewal_date: string | null; values: string }): StoredRow {
  return {
    customerId: row.customer_id,
    currency: row.currency,
    arr: Number(row.arr),
    renewalDate: row.renewal_date,
    values: JSON.parse(row.values) as number[],
  };
}

const featureQuery = (input: { orgId: string; today: string; graceDays: number }, customerIds?: string[]) => ({
  orgId: input.orgId,
  day: input.today,
  horizonDays: FORECAST_HORIZON_DAYS,
  population: 'active' as const,
  graceDays: input.graceDays,
  labels: false,
  ...(customerIds ? { customerIds } : {}),
});

/** Where the stored features stand for `today` and `graceDays`: usable (with this many marks) or not. */
export async function featuresStanding(
  db: Db,
  input: { orgId: string; today: string; graceDays: number },
): Promise<{ current: boolean; marks: number }> {
  const [state] = await queryRows<{ as_of: string; grace_days: number; marks: number }>(
    db,
    sql`select as_of::text as as_of, grace_days,
               (select count(*) from (select 1 from cfo_feature_changes where org_id = ${input.orgId} limit ${MAX_MARKED_FEATURES + 1}) m)::int as marks
        from cfo_features_state where org_id = ${input.orgId}`,
  );
  if (!state) return { current: false, marks: 0 };
  return { current: state.as_of === input.today && state.grace_days === input.graceDays, marks: state.marks };
}

/**
 * The book from the stored features with the marked customers' computed now, in one snapshot
 * (a repeatable-read transaction: the stored rows, the marks and the marked customers' sources).
 * The caller has checked that the stored features are current (featuresStanding).
 */
export async function storedBook(
  db: Db,
  input: { orgId: string; today: string; graceDays: number; model: AdditiveModel },
): Promise<BookCustomer[]> {
  const rows = await db.transaction(
    async (tx) => {
      // Every stored row in the primary key's order (by customer id in the database's collation,
      // the order featuresAt answers in: the bands' sums run in it, so the book keeps it); and each
      // marked customer with the first stored customer after it in that order (one index probe),
      // so its features computed now go where featuresAt would put them. Sorting the stored rows
      // with the marks in SQL spilled 64,000 rows to disk (100,000 customers); counting the rows
      // before each mark cost a scan of the index per mark.
      const stored = await queryRows<{ customer_id: string; currency: string; arr: number; renewal_date: string | null; values: string }>(
        tx,
        sql`select customer_id, currency, arr, renewal_date::text as renewal_date, "values" from cfo_stored_features
            where org_id = ${input.orgId} order by org_id, customer_id`,
      );
      const marked = await queryRows<{ customer_id: string; next: string | null }>(
        tx,
        sql`select m.customer_id,
                   (select min(f.customer_id) from cfo_stored_features f where f.org_id = m.org_id and f.customer_id > m.customer_id) as next
            from cfo_feature_changes m where m.org_id = ${input.orgId} order by m.customer_id`,
      );
      const fresh = new Map(
        (marked.length > 0
          ? await featuresAt(
              tx,
              featureQuery(
                input,
                marked.map((m) => m.customer_id),
              ),
            )
          : []
        ).map((r) => [r.customerId, r]),
      );
      // The marked customers before each stored one (in order), and after the last.
      const before = new Map<string | null, FeatureRow[]>();
      for (const m of marked) {
        const now = fresh.get(m.customer_id);
        if (!now) continue;
        const list = before.get(m.next);
        if (list) list.push(now);
        else before.set(m.next, [now]);
      }
      const isMarked = new Set(marked.map((m) => m.customer_id));
      const out: StoredRow[] = [];
      for (const row of stored) {
        for (const now of before.get(row.customer_id) ?? []) out.push(now);
        if (!isMarked.has(row.customer_id)) out.push(fromStored(row));
      }
      for (const now of before.get(null) ?? []) out.push(now);
      return out;
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
  return bookOf(rows, input.model);
}

const INSERT = `
  insert into cfo_stored_features (org_id, customer_id, currency, arr, renewal_date, "values")
  select $1, customer_id, currency, arr, renewal_date::date, v
  from unnest($2::text[], $3::text[], $4::float8[], $5::text[], $6::text[]) as u(customer_id, currency, arr, renewal_date, v)`;

async function store(db: Db, orgId: string, rows: FeatureRow[]): Promise<void> {
  // In batches: one statement's arrays stay a few megabytes.
  for (let i = 0; i < rows.length; i += 20_000) {
    const batch = rows.slice(i, i + 20_000);
    await queryText(db, INSERT, [
      orgId,
      batch.map((r) => r.customerId),
      batch.map((r) => r.currency),
      batch.map((r) => r.arr),
      batch.map((r) => r.renewalDate),
      batch.map((r) => JSON.stringify(r.values)),
    ]);
  }
}

/** At most this many marked customers a part stores the features of: at 10,000 demo customers on
 * the embedded database a part of 50 took 50 ms, of 100 40 ms, of 200 114 ms (medians,
 * bench:cfo-parts, load average 5 on 2 cores), so parts of 100 stay near 50 ms, the house's bound. */
export const FEATURES_PART_MAX = 100;

/** At most this many customers a marking part marks: at 100,000 demo customers marking them all in
 * one statement took 1.6 s on PostgreSQL (240 ms at 10,000 on the embedded database). */
export const MARK_FEATURES_PART_MAX = 2_500;

export type FeaturesPart = RefreshPart;

export interface FeaturesPartArgs {
  orgId: string;
  today: string;
  graceDays: number;
  /** Marked customers a part stores at most. */
  limit: number;
  /** Customers a marking part takes at most (from `after`). */
  markLimit: number;
  after: string | null;
}

/**
 * One part of bringing an organisation's stored features up to `today` and `graceDays`, in the
 * caller's transaction (one unit): when they are as of another day or grace (or were never built),
 * marks the customers (and those with a stored row) in the next range of ids, and with the last
 * range moves the stored day (the reads compute every customer's features until then); else stores
 * the features of up to `limit` marked customers. Either way every customer not marked keeps its
 * features as of the stored day, which is what the reads rely on (storedBook). The marks it takes
 * off are exactly those it read before computing: a customer changed since keeps its newer mark.
 */
export async function refreshFeaturesPart(db: Db, input: FeaturesPartArgs): Promise<FeaturesPart> {
  const { orgId, after } = input;
  await db.execute(sql`select pg_advisory_xact_lock(hashtext(${`cfo.forecast-features:${orgId}`}))`);
  const [state] = await queryRows<{ as_of: string; grace_days: number }>(
    db,
    sql`select as_of::text as as_of, grace_days from cfo_features_state where org_id = ${orgId}`,
  );
  // A run of the day before (still going at midnight) leaves them to the new day's (as refreshSumsPart).
  if (state && state.as_of > input.today) return { step: 'folded', customers: 0, more: false, after: null };
  if (!state || state.as_of !== input.today || state.grace_days !== input.graceDays) {
    const [edge] = await queryRows<{ id: string }>(
      db,
      sql`select id from customers where org_id = ${orgId}${after === null ? sql`` : sql` and id > ${after}`}
          order by id offset ${input.markLimit - 1} limit 1`,
    );
    const upTo = edge?.id ?? null;
    const from = (column: string) =>
      sql`${after === null ? sql`true` : sql`${sql.identifier(column)} > ${after}`}${upTo === null ? sql`` : sql` and ${sql.identifier(column)} <= ${upTo}`}`;
    const [marked] = await queryRows<{ n: number }>(
      db,
      sql`with added as (
            insert into cfo_feature_changes (org_id, customer_id)
            select ${orgId}, id from customers where org_id = ${orgId} and ${from('id')}
            union select ${orgId}, customer_id from cfo_stored_features where org_id = ${orgId} and ${from('customer_id')}
            on conflict (org_id, customer_id) do nothing returning 1)
          select count(*)::int as n from added`,
    );
    if (upTo !== null) return { step: 'marking', customers: marked?.n ?? 0, more: true, after: upTo };
    await db.execute(sql`insert into cfo_features_state (org_id, as_of, grace_days) values (${orgId}, ${input.today}, ${input.graceDays})
      on conflict (org_id) do update set as_of = excluded.as_of, grace_days = excluded.grace_days, built_at = now()`);
    return { step: 'marked', customers: marked?.n ?? 0, more: true, after: null };
  }
  const seen = await queryRows<{ customer_id: string; seq: string }>(
    db,
    sql`select customer_id, seq::text as seq from cfo_feature_changes where org_id = ${orgId} order by customer_id limit ${input.limit}`,
  );
  const ids = seen.map((s) => s.customer_id);
  if (ids.length > 0) {
    const fresh = await featuresAt(db, featureQuery(input, ids));
    await queryText(db, 'delete from cfo_stored_features where org_id = $1 and customer_id = any($2::text[])', [orgId, ids]);
    await store(db, orgId, fresh);
    await queryText(
      db,
      `delete from cfo_feature_changes m using unnest($2::text[], $3::bigint[]) as s(customer_id, seq)
       where m.org_id = $1 and m.customer_id = s.customer_id and m.seq = s.seq`,
      [orgId, ids, seen.map((s) => s.seq)],
    );
  }
  const [left] = await queryRows<{ more: boolean }>(
    db,
    sql`select exists (select 1 from cfo_feature_changes where org_id = ${orgId}) as more`,
  );
  return { step: 'folded', customers: ids.length, more: left?.more ?? false, after: null };
}

/** Runs parts (`part`: one unit, its own transaction, from the last one's `after`) until none is
 * due: 'rebuilt' when one moved the stored day. The job runs them as units sized by time
 * (jobs/forecast-features.ts). */
/** The whole refresh on `db`, each part a transaction of its own (a savepoint in a caller's): tests, benches. */
export const refreshStoredFeatures = (
  db: Db,
  input: { orgId: string; today: string; graceDays: number; limit?: number; markLimit?: number },
): Promise<'folded' | 'rebuilt'> =>
  refreshInParts((after) =>
    db.transaction((tx) =>
      refreshFeaturesPart(tx, {
        orgId: input.orgId,
        today: input.today,
        graceDays: input.graceDays,
        limit: input.limit ?? FEATURES_PART_MAX,
        markLimit: input.markLimit ?? MARK_FEATURES_PART_MAX,
        after,
      }),
    ),
  );
