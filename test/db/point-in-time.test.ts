// Point-in-time data (migration 0015): the stop dates the database keeps (cancelled_at, churned_at),
// the append-only revision log of contract terms, and the rebuild of an organisation's contracts and
// customers on a past day, on both backends. The rebuild's promise: a change dated after a day
// changes nothing on that day.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../src/db/client.ts';
import { utcToday } from '../../src/lib/today.ts';
import { patchContract, writeContracts } from '../../src/modules/contracts/service.ts';
import { deleteCustomer, patchCustomer, writeCustomers } from '../../src/modules/customers/service.ts';
import { contractsAt, customersAt } from '../../src/modules/predictions/point-in-time.ts';
import type { ContractPatch } from '../../src/modules/contracts/model.ts';
import type { CustomerPatch } from '../../src/modules/customers/model.ts';
import { BACKENDS, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

/** The UTC day `offset` days from today. */
const day = (offset: number) => new Date(Date.parse(`${utcToday()}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);

for (const backend of BACKENDS) {
  describe(`point-in-time data (${backend})`, () => {
    let database: TestDatabase;
    let db: Db;
    let orgId: string;
    let counter = 0;
    const unique = (label: string) => `${label}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      db = database.db;
      orgId = (await createOrgWithKey(database)).org.id;
    });
    afterAll(() => database.dispose());

    const query = async <T>(q: ReturnType<typeof sql>) => rowsOf<T>(await db.execute(q));
    /** The database's own message, under the driver's "Failed query" wrapping. */
    const refusal = (q: ReturnType<typeof sql>) =>
      db.execute(q).then(
        () => 'accepted',
        (error: { message: string; cause?: { message: string } }) => error.cause?.message ?? error.message,
      );
    const inTransaction = <T>(work: (tx: Db) => Promise<T>) => db.transaction((tx) => work(tx as unknown as Db));

    async function customer(input: Partial<CustomerPatch> = {}, org = orgId): Promise<string> {
      const [outcome] = await inTransaction((tx) =>
        writeCustomers(tx, org, [{ index: 0, input: { external_id: unique('c'), name: 'Acme', currency: 'EUR', ...input } }]),
      );
      if (outcome?.outcome === 'rejected') throw outcome.error;
      return outcome!.id;
    }
    async function contract(
      customerId: string,
      input: Partial<ContractPatch> = {},
      org = orgId,
    ): Promise<{ id: string; externalId: string }> {
      const externalId = unique('k');
      const [outcome] = await inTransaction((tx) =>
        writeContracts(tx, org, [
          {
            index: 0,
            input: {
              external_id: externalId,
              customer_id: customerId,
              name: 'Pro',
              start_date: day(-100),
              billing_interval: 'month',
              amount: 1000,
              ...input,
            },
          },
        ]),
      );
      if (outcome?.outcome === 'rejected') throw outcome.error;
      return { id: outcome!.id, externalId };
    }
    const upsertContract = (customerId: string, externalId: string, input: Partial<ContractPatch>) =>
      inTransaction((tx) =>
        writeContracts(tx, orgId, [
          {
            index: 0,
            input: {
              external_id: externalId,
              customer_id: customerId,
              name: 'Pro',
              start_date: day(-100),
              billing_interval: 'month',
              amount: 1000,
              ...input,
            },
          },
        ]),
      );
    const patch = (id: string, input: ContractPatch) => inTransaction((tx) => patchContract(tx, orgId, id, input));
    const stopped = async (id: string) =>
      (
        await query<{ status: string; cancelled_at: string | null }>(
          sql`select status, cancelled_at::text as cancelled_at from contracts where id = ${id}`,
        )
      )[0]!;
    const churn = async (id: string) =>
      (
        await query<{ status: string; churned_at: string | null }>(
          sql`select status, churned_at::text as churned_at from customers where id = ${id}`,
        )
      )[0]!;
    const revisions = (id: string) =>
      query<{
        revision: number;
        valid_from: string;
        status: string;
        amount: string | number;
        seats: number | null;
        cancelled_at: string | null;
        deleted: boolean;
      }>(
        sql`select revision, valid_from::text as valid_from, status, amount, seats, cancelled_at::text as cancelled_at, deleted from contract_revisions where contract_id = ${id} order by revision`,
      );

    describe('stop dates', () => {
      test('a contract whose status becomes cancelled without a date gets today (UTC)', async () => {
        const { id } = await contract(await customer());
        expect(await stopped(id)).toEqual({ status: 'active', cancelled_at: null });
        await patch(id, { status: 'cancelled' });
        expect(await stopped(id)).toEqual({ status: 'cancelled', cancelled_at: day(0) });
      });

      test('a cancelled_at given with the status is kept, and a write that sends none keeps it', async () => {
        const c = await customer();
        const { id, externalId } = await contract(c, { status: 'cancelled', cancelled_at: day(-30), end_date: day(60) });
        expect(await stopped(id)).toEqual({ status: 'cancelled', cancelled_at: day(-30) });
        // A re-imported row with an empty cell: the date known stays, and the row is unchanged.
        const [again] = await upsertContract(c, externalId, { status: 'cancelled', cancelled_at: null, end_date: day(60) });
        expect(again).toMatchObject({ outcome: 'unchanged', id });
        expect(await stopped(id)).toEqual({ status: 'cancelled', cancelled_at: day(-30) });
      });

      test('an evergreen contract marked ended gets today; one with an end date needs none', async () => {
        const c = await customer();
        const evergreen = await contract(c);
        await patch(evergreen.id, { status: 'ended' });
        expect(await stopped(evergreen.id)).toEqual({ status: 'ended', cancelled_at: day(0) });
        const dated = await contract(c, { end_date: day(-1) });
        await patch(dated.id, { status: 'ended' });
        expect(await stopped(dated.id)).toEqual({ status: 'ended', cancelled_at: null });
      });

      test('a cancelled contract made active again loses its cancelled_at (the revision log keeps it)', async () => {
        const { id } = await contract(await customer(), { status: 'cancelled', cancelled_at: day(-5) });
        await patch(id, { status: 'active' });
        expect(await stopped(id)).toEqual({ status: 'active', cancelled_at: null });
        expect((await revisions(id)).map((r) => r.cancelled_at)).toEqual([day(-5), null]);
      });

      test('a cancelled_at on a live contract is refused, naming the field', async () => {
        const c = await customer();
        const { id } = await contract(c);
        await expect(patch(id, { cancelled_at: day(-1) })).rejects.toMatchObject({
          code: 'validation_failed',
          message: expect.stringContaining('Invalid field "cancelled_at"'),
        });
        const [rejected] = await upsertContract(c, unique('k'), { status: 'active', cancelled_at: day(-1) });
        expect(rejected).toMatchObject({
          outcome: 'rejected',
          error: { code: 'validation_failed', message: expect.stringContaining('Invalid field "cancelled_at"') },
        });
      });

      test('a customer whose status becomes churned gets today; one that comes back loses it; a date on a live customer is refused', async () => {
        const id = await customer();
        expect(await churn(id)).toEqual({ status: 'active', churned_at: null });
        await inTransaction((tx) => patchCustomer(tx, orgId, id, { status: 'churned' }));
        expect(await churn(id)).toEqual({ status: 'churned', churned_at: day(0) });
        await inTransaction((tx) => patchCustomer(tx, orgId, id, { status: 'active' }));
        expect(await churn(id)).toEqual({ status: 'active', churned_at: null });
        const imported = await customer({ status: 'churned', churned_at: day(-400) });
        expect(await churn(imported)).toEqual({ status: 'churned', churned_at: day(-400) });
        await expect(inTransaction((tx) => patchCustomer(tx, orgId, id, { churned_at: day(-3) }))).rejects.toMatchObject({
          code: 'validation_failed',
          message: expect.stringContaining('Invalid field "churned_at"'),
        });
      });
    });

    describe('revision log', () => {
      test('a new contract has one revision, holding from its start_date (from today when it starts later)', async () => {
        const c = await customer();
        const past = await contract(c, { start_date: day(-400) });
        expect(await revisions(past.id)).toEqual([
          {
            revision: 1,
            valid_from: day(-400),
            status: 'active',
            amount: expect.anything(),
            seats: null,
            cancelled_at: null,
            deleted: false,
          },
        ]);
        const future = await contract(c, { start_date: day(30) });
        expect((await revisions(future.id)).map((r) => r.valid_from)).toEqual([day(0)]);
      });

      test('a change of terms adds a revision valid from today; a no-op upsert and a change of name or metadata add none', async () => {
        const c = await customer();
        const { id, externalId } = await contract(c, { seats: 10 });
        const [same] = await upsertContract(c, externalId, { seats: 10 });
        expect(same?.outcome).toBe('unchanged');
        await upsertContract(c, externalId, { seats: 10, metadata: { note: 'x' } });
        await patch(id, { name: 'Renamed' });
        expect((await revisions(id)).length).toBe(1);
        await patch(id, { amount: 1500, seats: 15 });
        const log = await revisions(id);
        expect(log.map((r) => [r.revision, r.valid_from, Number(r.amount), r.seats])).toEqual([
          [1, day(-100), 1000, 10],
          [2, day(0), 1500, 15],
        ]);
      });

      test('a soft delete is a revision; the deleted contract leaves the rebuild from that day', async () => {
        const c = await customer();
        const { id } = await contract(c);
        await inTransaction((tx) => deleteCustomer(tx, orgId, c));
        expect((await revisions(id)).map((r) => [r.revision, r.deleted])).toEqual([
          [1, false],
          [2, true],
        ]);
        expect((await contractsAt(db, { orgId, day: day(-1) })).some((k) => k.contract_id === id)).toBe(true);
        expect((await contractsAt(db, { orgId, day: day(0) })).some((k) => k.contract_id === id)).toBe(false);
        expect((await customersAt(db, { orgId, day: day(-1) })).some((k) => k.customer_id === c)).toBe(true);
        expect((await customersAt(db, { orgId, day: day(0) })).some((k) => k.customer_id === c)).toBe(false);
      });

      test('the log refuses UPDATE, DELETE and TRUNCATE', async () => {
        const { id } = await contract(await customer());
        expect(await refusal(sql`update contract_revisions set amount = 1 where contract_id = ${id}`)).toContain('append-only');
        expect(await refusal(sql`delete from contract_revisions where contract_id = ${id}`)).toContain('append-only');
        expect(await refusal(sql`truncate contract_revisions`)).toContain('append-only');
        expect((await revisions(id)).length).toBe(1);
      });

      test('deleting the contract, its customer or its organisation takes its revisions with it', async () => {
        const c = await customer();
        const byContract = await contract(c);
        const byCustomer = await contract(c);
        await db.execute(sql`delete from contracts where id = ${byContract.id}`);
        expect(await revisions(byContract.id)).toEqual([]);
        await db.execute(sql`delete from customers where id = ${c}`);
        expect(await revisions(byCustomer.id)).toEqual([]);
        const other = (await createOrgWithKey(database)).org.id;
        const byOrg = await contract(await customer({}, other), {}, other);
        expect((await revisions(byOrg.id)).length).toBe(1);
        await db.execute(sql`delete from organisations where id = ${other}`);
        expect(await revisions(byOrg.id)).toEqual([]);
      });
    });

    describe('the past rebuilt', () => {
      // One customer's history, imported today: a first year that ended, a renewal that was later
      // amended (more seats, a higher amount) and then cancelled with notice before its end, and an
      // evergreen add-on that stopped. Days are relative to today, as the log records changes today.
      let customerId: string;
      let first: string;
      let renewal: string;
      let addOn: string;
      let before: Awaited<ReturnType<typeof contractsAt>>;
      const mine = async (at: string) => (await contractsAt(db, { orgId, day: at })).filter((k) => k.customer_id === customerId);
      const view = async (at: string) => Object.fromEntries((await mine(at)).map((k) => [k.contract_id, k]));

      beforeAll(async () => {
        customerId = await customer();
        first = (await contract(customerId, { status: 'ended', start_date: day(-730), end_date: day(-366), amount: 1000, seats: 10 })).id;
        renewal = (await contract(customerId, { start_date: day(-365), end_date: day(365), amount: 1000, seats: 10 })).id;
        addOn = (await contract(customerId, { status: 'cancelled', start_date: day(-300), cancelled_at: day(-200), amount: 50 })).id;
        before = await mine(day(-1));
        await patch(renewal, { amount: 1500, seats: 15 });
        await patch(renewal, { status: 'cancelled' });
      });

      test('before anything started nothing counts', async () => {
        expect(Object.values(await view(day(-800))).every((k) => !k.counted)).toBe(true);
      });

      test('the first year counts through its end date, whatever its status is now', async () => {
        expect((await view(day(-366)))[first]).toMatchObject({ counted: true, status: 'active' });
        expect((await view(day(-365)))[first]).toMatchObject({ counted: false, status: 'ended' });
      });

      test('the renewal holds its first terms before the amendment, and no cancellation is known', async () => {
        const renewed = (await view(day(-365)))[renewal]!;
        expect(renewed).toMatchObject({
          counted: true,
          status: 'active',
          amount: 1000,
          seats: 10,
          arr: 12_000,
          cancelled_at: null,
          revision: 1,
        });
      });

      test('a change dated after the day changes nothing on that day', async () => {
        expect(await mine(day(-1))).toEqual(before);
      });

      test('from the day it was recorded, the amendment and the cancellation hold', async () => {
        const renewed = (await view(day(0)))[renewal]!;
        expect(renewed).toMatchObject({ counted: true, status: 'cancelled', amount: 1500, seats: 15, cancelled_at: day(0), revision: 3 });
        expect((await view(day(366)))[renewal]).toMatchObject({ counted: false });
      });

      test('an evergreen contract counts through its cancelled_at, and the cancellation is known only from it', async () => {
        expect((await view(day(-201)))[addOn]).toMatchObject({ counted: true, status: 'active', cancelled_at: null });
        expect((await view(day(-200)))[addOn]).toMatchObject({ counted: true, status: 'cancelled', cancelled_at: day(-200) });
        expect((await view(day(-199)))[addOn]).toMatchObject({ counted: false, status: 'cancelled' });
      });

      test("the customer's counted contracts, ARR and churn on each day", async () => {
        const at = async (d: string) => (await customersAt(db, { orgId, day: d })).find((c) => c.customer_id === customerId);
        expect(await at(day(-400))).toEqual({
          customer_id: customerId,
          churned: false,
          churned_at: null,
          contracts_counted: 1,
          arr: 12_000,
        });
        expect(await at(day(-250))).toMatchObject({ contracts_counted: 2, arr: 12_000 + 600 });
        expect(await at(day(0))).toMatchObject({ contracts_counted: 1, arr: 18_000 });
        await inTransaction((tx) => patchCustomer(tx, orgId, customerId, { status: 'churned', churned_at: day(-10) }));
        expect(await at(day(-11))).toMatchObject({ churned: false, churned_at: null });
        expect(await at(day(-10))).toMatchObject({ churned: true, churned_at: day(-10) });
      });
    });
  });
}
