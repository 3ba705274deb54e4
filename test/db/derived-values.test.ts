// The derived values of the ARR data are SQL functions (migrations 0005 and 0030): one rule each, the same
// on PostgreSQL and PGlite. Their edge cases, on both.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/db/client.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`ARR derived values (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database.dispose());

    const one = async <T>(query: ReturnType<typeof sql>): Promise<T> =>
      Object.values(rowsOf<Record<string, T>>(await database.db.execute(query))[0]!)[0]!;

    test('contract ARR annualises the charge per interval', async () => {
      expect(Number(await one(sql`select revintel_contract_arr('month', 1000)`))).toBe(12_000);
      expect(Number(await one(sql`select revintel_contract_arr('quarter', 2500)`))).toBe(10_000);
      expect(Number(await one(sql`select revintel_contract_arr('year', 120000)`))).toBe(120_000);
      expect(Number(await one(sql`select revintel_contract_arr('year', 0)`))).toBe(0); // a free plan is a contract with no ARR
      // money is bigint minor units: a large annual contract does not overflow
      expect(String(await one(sql`select revintel_contract_arr('month', 900000000000)`))).toBe('10800000000000');
    });

    test('a contract counts from its start day through its end day, evergreen for ever, a notice until the end of its term', async () => {
      const counts = (status: string, start: string, end: string | null, day: string, cancelledAt: string | null = null) =>
        one<boolean>(sql`select revintel_contract_counted_on(${status}, ${start}::date, ${end}::date, ${cancelledAt}::date, ${day}::date)`);
      expect(await counts('active', '2026-01-01', '2026-12-31', '2026-12-31')).toBe(true); // ending today: still counts
      expect(await counts('active', '2026-01-01', '2026-12-31', '2027-01-01')).toBe(false);
      expect(await counts('active', '2026-06-01', null, '2026-05-31')).toBe(false); // not started yet
      expect(await counts('active', '2026-06-01', null, '2026-06-01')).toBe(true);
      expect(await counts('active', '2020-01-01', null, '2099-01-01')).toBe(true); // evergreen
      expect(await counts('cancelled', '2026-01-01', '2026-12-31', '2026-06-01', '2026-05-01')).toBe(true); // notice given: the term runs
      expect(await counts('cancelled', '2026-01-01', '2026-12-31', '2027-01-01', '2026-05-01')).toBe(false);
      expect(await counts('cancelled', '2026-01-01', '2026-05-01', '2026-05-02', '2026-05-01')).toBe(false); // immediate effect
      expect(await counts('cancelled', '2026-01-01', null, '2026-05-01', '2026-05-01')).toBe(true); // evergreen: through its notice day
      expect(await counts('cancelled', '2026-01-01', null, '2026-05-02', '2026-05-01')).toBe(false);
      expect(await counts('draft', '2026-01-01', null, '2026-06-01')).toBe(false);
      expect(await counts('active', '2024-02-29', '2024-02-29', '2024-02-29')).toBe(true); // leap day
    });

    test('MRR is a twelfth of ARR, rounded to the minor unit', async () => {
      expect(Number(await one(sql`select revintel_mrr(12000)`))).toBe(1000);
      expect(Number(await one(sql`select revintel_mrr(1000)`))).toBe(83); // 83.33…
      expect(Number(await one(sql`select revintel_mrr(1002)`))).toBe(84); // 83.5 -> 84
      expect(Number(await one(sql`select revintel_mrr(0)`))).toBe(0);
    });

    test('days past due: open invoices with something to pay, counted in calendar days across leap years', async () => {
      const days = (status: string, due: string | null, day: string, amountDue = 100, amountPaid = 0) =>
        one<number>(sql`select revintel_days_past_due(${status}, ${due}::date, ${amountDue}::bigint, ${amountPaid}::bigint, ${day}::date)`);
      expect(await days('open', '2024-02-28', '2024-03-01')).toBe(2); // 2024 has a 29 February
      expect(await days('open', '2025-02-28', '2025-03-01')).toBe(1);
      expect(await days('open', '2026-11-25', '2026-11-25')).toBe(0); // due today is not late
      expect(await days('uncollectible', '2026-01-01', '2026-01-31')).toBe(30);
      expect(await days('paid', '2026-01-01', '2026-01-31')).toBe(0);
      expect(await days('void', '2026-01-01', '2026-01-31')).toBe(0);
      expect(await days('open', null, '2026-01-31')).toBe(0); // no due date, never late
      expect(await days('open', '2026-01-01', '2026-01-31', 0)).toBe(0); // zero-amount: nothing to pay
      expect(await days('open', '2026-01-01', '2026-01-31', 100, 100)).toBe(0); // paid in full, status lagging
      expect(await days('open', '2026-01-01', '2026-01-31', 100, 40)).toBe(30); // partly paid: still late
    });
  });
}
