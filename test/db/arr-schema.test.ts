// The ARR tables keep each organisation's data consistent by construction: a contract or invoice
// can only point at a customer (and contract) of its own organisation and is in that customer's
// currency, external ids are unique per organisation, money and dates obey their rules.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
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
      database.db
        .insert(customers)
        .values({ id: newId('cus'), orgId, name: 'Acme', currency: 'EUR', ...extra })
        .returning()
        .then((r) => r[0]!);

    test("a contract cannot point at another organisation's customer", async () => {
      const mine = await createOrgWithKey(database);
      const theirs = await createOrgWithKey(database);
      const theirCustomer = await customer(theirs.org.id);
      const error = await database.db
        .insert(contracts)
        .values({
          id: newId('ctr'),
          orgId: mine.org.id,
          customerId: theirCustomer.id,
          name: 'Pro',
          startDate: '2026-01-01',
          billingInterval: 'month',
          amount: 1000,
          currency: 'EUR',
        })
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
        .values({
          id: newId('ctr'),
          orgId: theirs.org.id,
          customerId: theirCustomer.id,
          name: 'Pro',
          startDate: '2026-01-01',
          billingInterval: 'year',
          amount: 1,
          currency: 'EUR',
        })
        .returning();
      const error = await database.db
        .insert(invoices)
        .values({
          id: newId('inv'),
          orgId: mine.org.id,
          customerId: myCustomer.id,
          contractId: theirContract!.id,
          currency: 'EUR',
          amountDue: 100,
          issuedAt: new Date(),
        })
        .then(() => null, refusal);
      expect(error).toContain('invoices_customer_contract_fk');
    });

    test("an invoice's contract is one of its own customer's", async () => {
      const { org } = await createOrgWithKey(database);
      const [alice, bob] = [await customer(org.id), await customer(org.id)];
      const contract = {
        id: newId('ctr'),
        orgId: org.id,
        customerId: bob.id,
        name: 'Pro',
        startDate: '2026-01-01',
        billingInterval: 'year' as const,
        amount: 1,
        currency: 'EUR',
      };
      await database.db.insert(contracts).values(contract);
      const invoice = (customerId: string) =>
        database.db
          .insert(invoices)
          .values({
            id: newId('inv'),
            orgId: org.id,
            customerId,
            contractId: contract.id,
            currency: 'EUR',
            amountDue: 100,
            issuedAt: new Date(),
          })
          .then(() => null, refusal);
      expect(await invoice(alice.id)).toContain('invoices_customer_contract_fk');
      expect(await invoice(bob.id)).toBeNull();
    });

    test("contracts and invoices are in their customer's currency, which cannot change under them", async () => {
      const { org } = await createOrgWithKey(database);
      const c = await customer(org.id, { currency: 'EUR' });
      const contract = (currency: string) =>
        database.db
          .insert(contracts)
          .values({
            id: newId('ctr'),
            orgId: org.id,
            customerId: c.id,
            name: 'Pro',
            startDate: '2026-01-01',
            billingInterval: 'month',
            amount: 1000,
            currency,
          })
          .then(() => null, refusal);
      const invoice = (currency: string) =>
        database.db
          .insert(invoices)
          .values({ id: newId('inv'), orgId: org.id, customerId: c.id, currency, amountDue: 100, issuedAt: new Date() })
          .then(() => null, refusal);
      expect(await contract('USD')).toContain('contracts_customer_currency_fk');
      expect(await invoice('USD')).toContain('invoices_customer_currency_fk');
      expect(await contract('EUR')).toBeNull();
      const change = await database.db
        .update(customers)
        .set({ currency: 'USD' })
        .where(eq(customers.id, c.id))
        .then(() => null, refusal);
      expect(change).toContain('contracts_customer_currency_fk');
      // Without contracts or invoices a customer may change currency.
      const other = await customer(org.id, { currency: 'EUR' });
      await database.db.update(customers).set({ currency: 'USD' }).where(eq(customers.id, other.id));
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
          .values({
            id: newId('ctr'),
            orgId: org.id,
            customerId: c.id,
            name: 'Pro',
            startDate: '2026-01-01',
            billingInterval: 'month',
            amount: 1000,
            currency: 'EUR',
            ...extra,
          })
          .then(() => null, refusal);
      expect(await contract({ amount: -1 })).toContain('contracts_amount_check');
      expect(await contract({ endDate: '2025-12-31' })).toContain('contracts_dates_check');
      expect(await contract({ billingInterval: 'week' as never })).toContain('contracts_interval_check');
      expect(await contract({ endDate: '2026-01-01' })).toBeNull(); // a one-day contract is fine
    });
  });
}
