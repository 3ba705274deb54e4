// The ARR history's month sums stored per organisation (migration 0037), so that a read costs a few
// hundred stored rows instead of the query over every contract revision (100,000 demo customers:
// 1.7 s of CPU per read; docs/cfo.md). Exact by construction:
// - cfo_customer_month_sums holds each customer's share and cfo_month_sums their total, both as of
//   one day (cfo_sums_state.as_of: the month under way closes on it).
// - A trigger marks every customer whose contract revisions change (cfo_sums_changes), in the
//   change's transaction, whoever writes it. A read lists the marked customers, then takes the
//   stored total, less their stored shares, plus their shares computed now: one statement, so
//   one snapshot of the total, the shares and the revisions (storedSumsSql).
// - A job (jobs/month-sums.ts), asked for by the reads that found marks (sums-reader.ts) and by the
//   sweep, folds the marked customers into the stored rows, or rebuilds them after a day change.
// A day other than the stored one, or a change to more customers than a read recomputes quickly,
// is answered by the live query (`fallback`) while the job catches up.
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, queryText, type Db } from '../../db/client.ts';
import { monthSumsSql, SUM_FIELDS } from './history.ts';
import { refreshInParts, type RefreshPart } from './refresh-parts.ts';

const FIELDS = SUM_FIELDS;

const columns = sql.raw(FIELDS.map((f) => `"${f}"`).join(', '));
const negated = sql.raw(FIELDS.map((f) => `-"${f}"`).join(', '));
const summed = sql.raw(FIELDS.map((f) => `sum("${f}")::bigint as "${f}"`).join(', '));
const added = sql.raw(FIELDS.map((f) => `"${f}" = cfo_month_sums."${f}" + excluded."${f}"`).join(', '));
const allZero = sql.raw(FIELDS.map((f) => `"${f}" = 0`).join(' and '));
const anyNonZero = sql.raw(FIELDS.map((f) => `sum("${f}") <> 0`).join(' or '));

/**
 * The stored total with the customers `marked` (read just before) recomputed: the same rows
 * monthSums gives. Marks made after that list was read leave their customers' stored shares in:
 * the answer is then the one of the moment the list was read for them, never a mix of a customer's
 * two states (the stored share taken off and the fresh one added are the same customers').
 */
export function storedSumsSql(input: { orgId: string; today: string; currency?: string }, marked: string[]): SQL {
  const { orgId, currency } = input;
  const inCurrency = currency === undefined ? sql`` : sql` and currency = ${currency}`;
  if (marked.length === 0)
    return sql`select kind, currency, k, ${columns} from cfo_month_sums where org_id = ${orgId}${inCurrency} order by currency, k`;
  const ids = sql`select unnest(${sql.param(marked)}::text[])`;
  return sql`with fresh as (${monthSumsSql(input, { customers: ids })})
    select kind, currency, k, ${summed} from (
      select kind, currency, k, ${columns} from cfo_month_sums where org_id = ${orgId}${inCurrency}
      union all
      select kind, currency, k, ${negated} from cfo_customer_month_sums
      where org_id = ${orgId} and customer_id in (${ids})${inCurrency}
      union all
      select kind, currency, k, ${columns} from fresh
    ) d
    group by kind, currency, k having ${anyNonZero}
    order by currency, k`;
}

/** At most this many marked customers a part folds in: at 10,000 demo customers on the embedded
 * database a part of 50 took 42 ms, of 100 65 ms, of 200 122 ms (medians, bench:cfo-parts, load
 * average 5 on 2 cores), so parts of 60 stay near 50 ms, the house's bound for a unit. */
export const SUMS_PART_MAX = 60;

/** At most this many customers a marking part marks: at 100,000 demo customers marking them all in
 * one statement took 3.2 s on PostgreSQL (200 ms at 10,000 on the embedded database). */
export const MARK_PART_MAX = 2_500;

export type SumsPart = RefreshPart;

export interface SumsPartArgs {
  orgId: string;
  today: string;
  /** Marked customers a fold takes at most. */
  limit: number;
  /** Customers a marking part takes at most (from `after`). */
  markLimit: number;
  after: string | null;
}

/**
 * One part of bringing an organisation's stored sums up to `today`, in the caller's transaction
 * (one unit). When they are as of another day (or were never built), it marks the customers (with
 * revisions or a stored share) in the next range of ids, and with the last range moves the stored
 * day to today: the reads answer live until then. Else it folds up to `limit` marked customers in.
 * Either way it keeps what makes a read exact: every customer not marked has its share as of the
 * stored day, and the totals are the sum of the shares (the marked customers' stored shares are
 * taken off by the reads, their shares computed now added).
 */
export async function refreshSumsPart(db: Db, input: SumsPartArgs): Promise<SumsPart> {
  const { orgId, today, after } = input;
  // One part of an organisation at a time: each reads the shares the one before stored.
  await db.execute(sql`select pg_advisory_xact_lock(hashtext(${`cfo.month-sums:${orgId}`}))`);
  const [state] = await queryRows<{ as_of: string }>(db, sql`select as_of::text as as_of from cfo_sums_state where org_id = ${orgId}`);
  // A run of the day before (still going at midnight) leaves them to the new day's: moving the
  // stored day back, each would start the other's marking again.
  if (state && state.as_of > today) return { step: 'folded', customers: 0, more: false, after: null };
  if (state?.as_of !== today) {
    // The range (after, upTo]: upTo the markLimit-th customer id after `after`; none left, to the end.
    const [edge] = await queryRows<{ id: string }>(
      db,
      sql`select id from customers where org_id = ${orgId}${after === null ? sql`` : sql` and id > ${after}`}
          order by id offset ${input.markLimit - 1} limit 1`,
    );
    const upTo = edge?.id ?? null;
    const inRange = sql`${after === null ? sql`true` : sql`customer_id > ${after}`}${upTo === null ? sql`` : sql` and customer_id <= ${upTo}`}`;
    // A customer already marked keeps its mark (and seq): a fold that read it leaves it.
    const [marked] = await queryRows<{ n: number }>(
      db,
      sql`with added as (
            insert into cfo_sums_changes (org_id, customer_id)
            select ${orgId}, customer_id from (
              select distinct customer_id from contract_revisions where org_id = ${orgId} and ${inRange}
              union select distinct customer_id from cfo_customer_month_sums where org_id = ${orgId} and ${inRange}
            ) c
            on conflict (org_id, customer_id) do nothing returning 1)
          select count(*)::int as n from added`,
    );
    if (upTo !== null) return { step: 'marking', customers: marked?.n ?? 0, more: true, after: upTo };
    await db.execute(sql`insert into cfo_sums_state (org_id, as_of) values (${orgId}, ${today})
      on conflict (org_id) do update set as_of = excluded.as_of, built_at = now()`);
    return { step: 'marked', customers: marked?.n ?? 0, more: true, after: null };
  }
  const seen = await queryRows<{ customer_id: string; seq: string }>(
    db,
    sql`select customer_id, seq::text as seq from cfo_sums_changes where org_id = ${orgId} order by customer_id limit ${input.limit}`,
  );
  if (seen.length > 0) await foldIn(db, orgId, today, seen);
  const [left] = await queryRows<{ more: boolean }>(
    db,
    sql`select exists (select 1 from cfo_sums_changes where org_id = ${orgId}) as more`,
  );
  return { step: 'folded', customers: seen.length, more: left?.more ?? false, after: null };
}

/** Replaces the shares of the customers `seen` (marks read just before) by their shares now, the
 * totals moved by the difference, and takes off exactly those marks: a customer marked again since
 * keeps its newer mark. Their ids go to the planner as an array of known length, where the fold
 * before read them from a temporary table without statistics: a fold of 10 customers took 1.5 s at
 * 100,000 customers on PostgreSQL then, 65 ms so (median of 5; 470 ms and 72 ms at 10,000 on the
 * embedded database; bench:cfo-parts). */
async function foldIn(db: Db, orgId: string, today: string, seen: { customer_id: string; seq: string }[]): Promise<void> {
  const ids = seen.map((s) => s.customer_id);
  const inIds = sql`customer_id = any(${sql.param(ids)}::text[])`;
  await db.execute(sql`select set_config('jit', 'off', true)`);
  await db.execute(sql`create temp table cfo_fresh on commit drop as
    select * from (${monthSumsSql({ orgId, today }, { byCustomer: true, customers: sql`select unnest(${sql.param(ids)}::text[])` })}) s`);
  await db.execute(sql`insert into cfo_month_sums (org_id, kind, currency, k, ${columns})
    select ${orgId}, kind, currency, k, ${summed} from (
      select kind, currency, k, ${columns} from cfo_fresh
      union all
      select kind, currency, k, ${negated} from cfo_customer_month_sums where org_id = ${orgId} and ${inIds}
    ) d group by kind, currency, k
    on conflict (org_id, kind, currency, k) do update set ${added}`);
  await db.execute(sql`delete from cfo_month_sums where org_id = ${orgId} and ${allZero}`);
  await db.execute(sql`delete from cfo_customer_month_sums where org_id = ${orgId} and ${inIds}`);
  await db.execute(sql`insert into cfo_customer_month_sums (org_id, kind, customer_id, currency, k, ${columns})
    select ${orgId}, kind, customer_id, currency, k, ${columns} from cfo_fresh`);
  await db.execute(sql`drop table cfo_fresh`);
  await queryText(
    db,
    `delete from cfo_sums_changes m using unnest($2::text[], $3::bigint[]) as s(customer_id, seq)
     where m.org_id = $1 and m.customer_id = s.customer_id and m.seq = s.seq`,
    [orgId, ids, seen.map((s) => s.seq)],
  );
}

/** Runs parts (`part`: one unit, its own transaction, from the last one's `after`) until none is
 * due: 'rebuilt' when one moved the stored day. The job runs them as units sized by time
 * (jobs/month-sums.ts). */
/** The whole refresh on `db`, each part a transaction of its own (a savepoint in a caller's): tests, benches. */
export const refreshStoredSums = (
  db: Db,
  input: { orgId: string; today: string; limit?: number; markLimit?: number },
): Promise<'folded' | 'rebuilt'> =>
  refreshInParts((after) =>
    db.transaction((tx) =>
      refreshSumsPart(tx, {
        orgId: input.orgId,
        today: input.today,
        limit: input.limit ?? SUMS_PART_MAX,
        markLimit: input.markLimit ?? MARK_PART_MAX,
        after,
      }),
    ),
  );
