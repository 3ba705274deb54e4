// GET /api/customers and /api/customers/:id: derived values, every filter and sort, pagination that
// sees every row once while rows are inserted, 400s naming the parameter, and org isolation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { contracts, customers } from '../../src/db/schema/index.ts';
import { newId } from '../../src/lib/ids.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

const today = () => new Date().toISOString().slice(0, 10);
const daysFromToday = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

for (const backend of BACKENDS) {
  describe(`customers API (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    const ids: Record<string, string> = {};

    const addCustomer = async (name: string, extra: Partial<typeof customers.$inferInsert> = {}) => {
      const [row] = await database.db
        .insert(customers)
        .values({ id: newId('cus'), orgId, name, currency: 'EUR', ...extra })
        .returning();
      ids[name] = row!.id;
      return row!;
    };
    const addContract = (customerId: string, extra: Partial<typeof contracts.$inferInsert>) =>
      database.db.insert(contracts).values({
        id: newId('ctr'),
        orgId,
        customerId,
        name: 'Pro',
        startDate: daysFromToday(-100),
        billingInterval: 'month',
        amount: 1000,
        currency: 'EUR',
        ...extra,
      });

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      key = made.secret;
      orgId = made.org.id;
      const acme = await addCustomer('Acme', {
        externalId: 'crm-acme',
        segment: 'enterprise',
        domain: 'acme.test',
        csm: { name: 'Dana', email: 'Dana@Vendor.test', phone: null, slack_user_id: null },
      });
      await addContract(acme.id, { billingInterval: 'year', amount: 120_000, endDate: daysFromToday(30) });
      await addContract(acme.id, { billingInterval: 'month', amount: 500, endDate: today() }); // ends today: still counts
      await addContract(acme.id, { billingInterval: 'quarter', amount: 9_999, status: 'cancelled', cancelledAt: daysFromToday(-10) }); // evergreen, stopped 10 days ago: does not count
      const beta = await addCustomer('Beta 100%', { segment: 'smb', status: 'trial', email: 'ops@beta.test' });
      await addContract(beta.id, { billingInterval: 'quarter', amount: 2_500 }); // evergreen
      await addCustomer('Gamma', { status: 'churned', segment: 'smb' });
    });
    afterAll(() => database.dispose());

    const list = (query = '') => call(app, 'GET', `/api/customers${query}`, { key });

    test('a customer with its derived values; by id and by external id', async () => {
      const result = await call(app, 'GET', `/api/customers/${ids.Acme}`, { key });
      expect(result.status).toBe(200);
      expect(result.body.data).toMatchObject({
        id: ids.Acme,
        external_id: 'crm-acme',
        name: 'Acme',
        currency: 'EUR',
        arr: 120_000 + 500 * 12,
        mrr: 10_500,
        renewal_date: today(),
        renewing: true,
        churn_risk: null,
        csm: { name: 'Dana', email: 'Dana@Vendor.test' },
      });
      expect((await call(app, 'GET', '/api/customers/ext:crm-acme', { key })).body.data.id).toBe(ids.Acme);
      const beta = await call(app, 'GET', `/api/customers/${ids['Beta 100%']}`, { key });
      expect(beta.body.data).toMatchObject({ arr: 10_000, mrr: 833, renewal_date: null }); // evergreen: no renewal
    });

    test("unknown or another organisation's customer: 404 in the envelope", async () => {
      const other = await createOrgWithKey(database);
      const missing = await call(app, 'GET', '/api/customers/cus_doesnotexist', { key });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ success: false, data: null, error: 'Customer cus_doesnotexist not found', code: 'not_found' });
      const foreign = await call(app, 'GET', `/api/customers/${ids.Acme}`, { key: other.secret });
      expect(foreign.status).toBe(404);
      expect((await call(app, 'GET', '/api/customers', { key: other.secret })).body.data).toEqual([]);
    });

    test('default order: newest first; meta and no Link on the last page', async () => {
      const result = await list();
      expect(result.status).toBe(200);
      expect(result.body.data.map((c: { name: string }) => c.name)).toEqual(['Gamma', 'Beta 100%', 'Acme']);
      expect(result.body.meta).toEqual({ has_more: false, next_cursor: null, limit: 50 });
      expect(result.headers.get('link')).toBeNull();
    });

    test('filters: status, segment, csm_email, q (wildcards are letters), renewing_before', async () => {
      const names = async (query: string) => (await list(query)).body.data.map((c: { name: string }) => c.name);
      expect(await names('?status=trial')).toEqual(['Beta 100%']);
      expect(await names('?segment=smb')).toEqual(['Gamma', 'Beta 100%']);
      expect(await names('?csm_email=dana@vendor.test')).toEqual(['Acme']);
      expect(await names('?q=ACME.TEST')).toEqual(['Acme']);
      expect(await names('?q=100%25')).toEqual(['Beta 100%']);
      expect(await names('?q=%25')).toEqual(['Beta 100%']); // a literal %, not "everything"
      expect(await names(`?renewing_before=${daysFromToday(1)}`)).toEqual(['Acme']);
      expect(await names(`?renewing_before=${today()}`)).toEqual([]);
    });

    test('sorts: name A to Z, ARR largest first', async () => {
      expect((await list('?sort=name')).body.data.map((c: { name: string }) => c.name)).toEqual(['Acme', 'Beta 100%', 'Gamma']);
      expect((await list('?sort=arr')).body.data.map((c: { arr: number }) => c.arr)).toEqual([126_000, 10_000, 0]);
    });

    test('a bad value, an unknown parameter or a foreign cursor: 400 naming the parameter', async () => {
      const bad = async (query: string, name: string) => {
        const result = await list(query);
        expect(result.status).toBe(400);
        expect(result.body.error).toContain(`"${name}"`);
      };
      await bad('?status=happy', 'status');
      expect((await list('?status=happy')).body.error).toBe('Invalid query parameter "status": must be one of active, churned, trial');
      await bad('?limit=0', 'limit');
      await bad('?limit=201', 'limit');
      await bad('?updated_since=yesterday', 'updated_since');
      await bad('?renewing_before=2026-13-45', 'renewing_before');
      await bad('?stauts=active', 'stauts');
      await bad('?cursor=bm9wZQ', 'cursor');
      const cursor = (await list('?limit=1')).body.meta.next_cursor;
      await bad(`?sort=name&cursor=${cursor}`, 'cursor');
    });

    test('soft-deleted customers leave lists and reads, and come back as tombstones for syncs', async () => {
      const gone = await addCustomer('Deleted Co');
      await database.db.update(customers).set({ deletedAt: new Date(), updatedAt: new Date() }).where(eq(customers.id, gone.id));
      expect((await list()).body.data.map((c: { id: string }) => c.id)).not.toContain(gone.id);
      expect((await call(app, 'GET', `/api/customers/${gone.id}`, { key })).status).toBe(404);
      const since = new Date(Date.now() - 60_000).toISOString();
      const sync = await list(`?updated_since=${since}&include_deleted=true`);
      expect(sync.body.data.find((c: { id: string }) => c.id === gone.id)).toMatchObject({ deleted_at: expect.any(String) });
    });

    for (const sort of ['created_at', 'name', 'arr'] as const) {
      test(`walking pages (sort=${sort}) sees every row exactly once while rows are inserted`, async () => {
        const walker = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
        const seed = Array.from({ length: 23 }, (_, i) => ({
          id: newId('cus'),
          orgId: walker.org.id,
          name: `Co ${String(i).padStart(2, '0')}`,
          currency: 'USD',
        }));
        await database.db.insert(customers).values(seed);
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const result: Awaited<ReturnType<typeof call>> = await call(
            app,
            'GET',
            `/api/customers?sort=${sort}&limit=5${cursor ? `&cursor=${cursor}` : ''}`,
            { key: walker.secret },
          );
          expect(result.status).toBe(200);
          seen.push(...result.body.data.map((c: { id: string }) => c.id));
          cursor = result.body.meta.next_cursor;
          if (cursor) expect(result.headers.get('link')).toContain(`cursor=${cursor}`);
          // meanwhile someone adds a customer (it may or may not be seen, never twice)
          await database.db.insert(customers).values({ id: newId('cus'), orgId: walker.org.id, name: `Late ${pages}`, currency: 'USD' });
          pages += 1;
        } while (cursor && pages < 20);
        expect(new Set(seen).size).toBe(seen.length);
        for (const row of seed) expect(seen).toContain(row.id);
      });
    }
  });
}
