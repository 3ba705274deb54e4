// GET /api/contracts and /api/invoices (list and by id): derived values, every filter, pagination,
// 404s and org isolation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { contracts, customers, invoices } from '../../src/db/schema/index.ts';
import { newId } from '../../src/lib/ids.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

for (const backend of BACKENDS) {
  describe(`contracts and invoices API (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let other: string;
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      key = made.secret;
      other = (await createOrgWithKey(database)).secret;
      const orgId = made.org.id;
      const [acme] = await database.db
        .insert(customers)
        .values({ id: newId('cus'), orgId, name: 'Acme', currency: 'GBP' })
        .returning();
      const [beta] = await database.db
        .insert(customers)
        .values({ id: newId('cus'), orgId, name: 'Beta', currency: 'GBP' })
        .returning();
      ids.acme = acme!.id;
      ids.beta = beta!.id;
      const contract = async (name: string, extra: Partial<typeof contracts.$inferInsert>) => {
        const [row] = await database.db
          .insert(contracts)
          .values({
            id: newId('ctr'),
            orgId,
            customerId: acme!.id,
            name,
            startDate: day(-200),
            billingInterval: 'month',
            amount: 1_000,
            currency: 'GBP',
            ...extra,
          })
          .returning();
        ids[name] = row!.id;
      };
      await contract('Monthly', { endDate: day(10), externalId: 'sub_1' });
      await contract('Quarterly', { billingInterval: 'quarter', amount: 3_000, endDate: day(100) });
      await contract('Ended', { status: 'ended', endDate: day(-5) });
      await contract('Beta plan', { customerId: beta!.id, billingInterval: 'year', amount: 50_000 });
      const invoice = async (name: string, extra: Partial<typeof invoices.$inferInsert>) => {
        const [row] = await database.db
          .insert(invoices)
          .values({
            id: newId('inv'),
            orgId,
            customerId: acme!.id,
            currency: 'GBP',
            amountDue: 1_000,
            issuedAt: new Date(Date.now() - 40 * 86_400_000),
            ...extra,
          })
          .returning();
        ids[name] = row!.id;
      };
      await invoice('Late', { status: 'open', dueDate: day(-12), contractId: ids.Monthly, number: 'INV-1' });
      await invoice('Paid', { status: 'paid', dueDate: day(-12), amountPaid: 1_000, paidAt: new Date() });
      await invoice('Not yet due', { status: 'open', dueDate: day(3), issuedAt: new Date() });
      await invoice('Beta invoice', { customerId: beta!.id, status: 'void', dueDate: day(-30) });
    });
    afterAll(() => database.dispose());

    const names = async (path: string, field = 'name') => {
      const result = await call(app, 'GET', path, { key });
      expect(result.status).toBe(200);
      return result.body.data.map((row: Record<string, string>) => row[field]);
    };

    test('a contract with its ARR, by id and external id; 404 elsewhere', async () => {
      const monthly = await call(app, 'GET', `/api/contracts/${ids.Monthly}`, { key });
      expect(monthly.body.data).toMatchObject({
        id: ids.Monthly,
        customer_id: ids.acme,
        billing_interval: 'month',
        amount: 1_000,
        arr: 12_000,
        end_date: day(10),
        currency: 'GBP',
      });
      expect((await call(app, 'GET', '/api/contracts/ext:sub_1', { key })).body.data.id).toBe(ids.Monthly);
      expect((await call(app, 'GET', `/api/contracts/${ids.Monthly}`, { key: other })).status).toBe(404);
      expect((await call(app, 'GET', '/api/contracts', { key: other })).body.data).toEqual([]);
    });

    test('contract filters: customer, status, ending before/after', async () => {
      expect(await names(`/api/contracts?customer_id=${ids.beta}`)).toEqual(['Beta plan']);
      expect(await names('/api/contracts?status=ended')).toEqual(['Ended']);
      expect((await names(`/api/contracts?ending_before=${day(50)}`)).sort()).toEqual(['Ended', 'Monthly']);
      expect(await names(`/api/contracts?ending_after=${day(50)}`)).toEqual(['Quarterly']);
      expect((await call(app, 'GET', '/api/contracts?status=paused', { key })).status).toBe(400);
      expect((await call(app, 'GET', '/api/contracts?ends_before=2026-01-01', { key })).body.error).toContain('"ends_before"');
    });

    test('an invoice with days past due; overdue, status, customer, contract and issue-date filters', async () => {
      const late = await call(app, 'GET', `/api/invoices/${ids.Late}`, { key });
      expect(late.body.data).toMatchObject({
        id: ids.Late,
        number: 'INV-1',
        status: 'open',
        amount_due: 1_000,
        amount_paid: 0,
        days_past_due: 12,
        contract_id: ids.Monthly,
      });
      expect((await call(app, 'GET', `/api/invoices/${ids.Paid}`, { key })).body.data.days_past_due).toBe(0);
      expect(await names('/api/invoices?overdue=true', 'id')).toEqual([ids.Late]);
      expect((await names('/api/invoices?overdue=false', 'id')).length).toBe(3);
      expect(await names('/api/invoices?status=void', 'id')).toEqual([ids['Beta invoice']]);
      expect(await names(`/api/invoices?customer_id=${ids.beta}`, 'id')).toEqual([ids['Beta invoice']]);
      expect(await names(`/api/invoices?contract_id=${ids.Monthly}`, 'id')).toEqual([ids.Late]);
      const yesterday = new Date(Date.now() - 86_400_000).toISOString();
      expect(await names(`/api/invoices?issued_after=${yesterday}`, 'id')).toEqual([ids['Not yet due']]);
      expect((await names(`/api/invoices?issued_before=${yesterday}`, 'id')).length).toBe(3);
      expect((await call(app, 'GET', '/api/invoices?overdue=maybe', { key })).status).toBe(400);
      expect((await call(app, 'GET', `/api/invoices/${ids.Late}`, { key: other })).status).toBe(404);
    });

    test('lists page newest first with cursors, every row once', async () => {
      for (const path of ['/api/contracts', '/api/invoices']) {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const result: Awaited<ReturnType<typeof call>> = await call(app, 'GET', `${path}?limit=1${cursor ? `&cursor=${cursor}` : ''}`, {
            key,
          });
          expect(result.status).toBe(200);
          seen.push(...result.body.data.map((row: { id: string }) => row.id));
          cursor = result.body.meta.next_cursor;
        } while (cursor);
        expect(seen.length).toBe(4);
        expect(new Set(seen).size).toBe(4);
      }
    });
  });
}
