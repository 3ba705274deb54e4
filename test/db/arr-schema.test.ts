// The ARR tables keep each organisation's data consistent by construction: a contract or invoice
// can only point at a customer (and contract) of its own organisation, external ids are unique per
// organisation, money and dates obey their rules.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { contracts, customers, invoices } from '../../src/db/schema/index.ts';
import { newId } from '../../src/lib/ids.ts';
import { BACKENDS, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

/** drizzle wraps the database's error; the constraint's name is in its cause. */
const refusal = (error: { message: string; cause?: { message: string } }) => `${error.message} ${error.cause?.message ?? ''}`;

for (const backend of BACKENDS) {
  describe(`ARR schema (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database.dispose());

    const customer = (orgId: string, extra: Partial<typeof customers.$inferInsert> = {}) =>
      database.db.insert(customers).values({ id: newId('cus'), orgId, name: 'Acme', currency: 'EUR', ...extra }).returning().then((r) => r[0]!);

    test("a contract cannot point at another organisation's customer", async () => {
      const mine = await createOrgWithKey(database);
      const theirs = await createOrgWithKey(database);
      const theirCustomer = await customer(theirs.org.id);
      const error = await database.db
        .insert(contracts)
        .values({ id: newId('ctr'), orgId: mine.org.id, customerId: theirCustomer.id, name: 'Pro', startDate: '2026-01-01', billingInterval: 'month', amount: 1000, currency: 'EUR' })
        .then(() => null, refusal);
      expect(error).toContain('contracts_org_id_customer_id_customers_org_id_id_fk');
    });

    test("an invoice cannot point at another organisation's contract", async () => {
      const mine = await createOrgWithKey(database);
      const theirs = await createOrgWithKey(database);
      const myCustomer = await customer(mine.org.id);
      const theirCustomer = await customer(theirs.org.id);
      const [theirContract] = await database.db
        .insert(contracts)
        .values({ id: newId('ctr'), orgId: theirs.org.id, customerId: theirCustomer.id, name: 'Pro', startDate: '2026-01-01', billingInterval: 'year', amount: 1, currency: 'EUR' })
        .returning();
      const error = await database.db
        .insert(invoices)
        .values({ id: newId('inv'), orgId: mine.org.id, customerId: myCustomer.id, contractId: theirContract!.id, currency: 'EUR', amountDue: 100, issuedAt: new Date() })
        .then(() => null, refusal);
      expect(error).toContain('invoices_org_id_contract_id_contracts_org_id_id_fk');
    });

    test('external ids are unique within an organisation, free across organisations, optional', async () => {
      const a = await createOrgWithKey(database);
      const b = await createOrgWithKey(database);
      await customer(a.org.id, { externalId: 'crm-1' });
      await customer(b.org.id, { externalId: 'crm-1' });
      await customer(a.org.id, { externalId: null });
      await customer(a.org.id, { externalId: null });
      const error = await customer(a.org.id, { externalId: 'crm-1' }).then(() => null, refusal);
      expect(error).toContain('customers_org_external_id_unique');
    });

    test('currency is ISO 4217, amounts are not negative, a contract does not end before it starts', async () => {
      const { org } = await createOrgWithKey(database);
      expect(await customer(org.id, { currency: 'eur' }).then(() => null, refusal)).toContain('customers_currency_check');
      const c = await customer(org.id);
      const contract = (extra: Partial<typeof contracts.$inferInsert>) =>
        database.db
          .insert(contracts)
          .values({ id: newId('ctr'), orgId: org.id, customerId: c.id, name: 'Pro', startDate: '2026-01-01', billingInterval: 'month', amount: 1000, currency: 'EUR', ...extra })
          .then(() => null, refusal);
      expect(await contract({ amount: -1 })).toContain('contracts_amount_check');
      expect(await contract({ endDate: '2025-12-31' })).toContain('contracts_dates_check');
      expect(await contract({ billingInterval: 'week' as never })).toContain('contracts_interval_check');
      expect(await contract({ endDate: '2026-01-01' })).toBeNull(); // a one-day contract is fine
    });
  });
}
