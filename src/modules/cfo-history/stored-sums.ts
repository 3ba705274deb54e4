// The ARR history's month sums stored per organisation (migration 0036), so that a read costs a few
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
import { queryRows, type Db } from '../../db/client.ts';
import { monthSumsSql } from './history.ts';

const FIELDS = [
  'new',
  'reactivation',
  'expansion',
  'contraction',
  'churn',
  'new_customers',
  'reactivated_customers',
  'churned_customers',
  'customers_net',
  'retained',
  'retained_capped',
] as const;

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

/**
 * Brings an organisation's stored sums up to `today`, in the caller's transaction: folds the marked
 * customers in when the stored sums are as of today, else rebuilds them all. Either way the marks it
 * took off are exactly those it read before computing: a customer changed since keeps its (newer)
 * mark, and the next read recomputes it.
 */
export function refreshStoredSums(db: Db, input: { orgId: string; today: string }): Promise<'folded' | 'rebuilt'> {
  // Its own transaction (a savepoint in the job's): the temporary tables live on one connection.
  return db.transaction((tx) => refreshIn(tx, input));
}

async function refreshIn(db: Db, input: { orgId: string; today: string }): Promise<'folded' | 'rebuilt'> {
  const { orgId, today } = input;
  // One refresh of an organisation at a time: each reads the shares the one before stored.
  await db.execute(sql`select pg_advisory_xact_lock(hashtext(${`cfo.month-sums:${orgId}`}))`);
  await db.execute(sql`select set_config('jit', 'off', true)`);
  const [state] = await queryRows<{ as_of: string }>(db, sql`select as_of::text as as_of from cfo_sums_state where org_id = ${orgId}`);
  await db.execute(sql`create temp table cfo_seen on commit drop as select customer_id, seq from cfo_sums_changes where org_id = ${orgId}`);
  const seen = sql`select customer_id from cfo_seen`;
  let done: 'folded' | 'rebuilt';
  if (state?.as_of === today) {
    await db.execute(sql`create temp table cfo_fresh on commit drop as
      select * from (${monthSumsSql({ orgId, today }, { byCustomer: true, customers: seen })}) s`);
    await db.execute(sql`insert into cfo_month_sums (org_id, kind, currency, k, ${columns})
      select ${orgId}, kind, currency, k, ${summed} from (
        select kind, currency, k, ${columns} from cfo_fresh
        union all
        select kind, currency, k, ${negated} from cfo_customer_month_sums where org_id = ${orgId} and customer_id in (${seen})
      ) d group by kind, currency, k
      on conflict (org_id, kind, currency, k) do update set ${added}`);
    await db.execute(sql`delete from cfo_month_sums where org_id = ${orgId} and ${allZero}`);
    await db.execute(sql`delete from cfo_customer_month_sums where org_id = ${orgId} and customer_id in (${seen})`);
    await db.execute(sql`insert into cfo_customer_month_sums (org_id, kind, customer_id, currency, k, ${columns})
      select ${orgId}, kind, customer_id, currency, k, ${columns} from cfo_fresh`);
    done = 'folded';
  } else {
    await db.execute(sql`delete from cfo_customer_month_sums where org_id = ${orgId}`);
    await db.execute(sql`insert into cfo_customer_month_sums (org_id, kind, customer_id, currency, k, ${columns})
      select ${orgId}, s.* from (${monthSumsSql({ orgId, today }, { byCustomer: true })}) s`);
    await db.execute(sql`delete from cfo_month_sums where org_id = ${orgId}`);
    await db.execute(sql`insert into cfo_month_sums (org_id, kind, currency, k, ${columns})
      select org_id, kind, currency, k, ${summed} from cfo_customer_month_sums where org_id = ${orgId}
      group by org_id, kind, currency, k having ${anyNonZero}`);
    await db.execute(sql`insert into cfo_sums_state (org_id, as_of) values (${orgId}, ${today})
      on conflict (org_id) do update set as_of = excluded.as_of, built_at = now()`);
    done = 'rebuilt';
  }
  await db.execute(sql`delete from cfo_sums_changes m using cfo_seen s
    where m.org_id = ${orgId} and m.customer_id = s.customer_id and m.seq = s.seq`);
  await db.execute(sql`drop table cfo_seen`);
  if (done === 'folded') await db.execute(sql`drop table cfo_fresh`);
  return done;
}
