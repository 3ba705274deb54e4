// List pages kept until the organisation's ARR data changes: a kept page is served again only while
// nothing changed — through the API, an import, plain SQL, or another instance on the same database
// — and never to another organisation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { queryText } from '../../src/db/client.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

for (const backend of BACKENDS) {
  describe(`list cache (${backend})`, () => {
    let database: TestDatabase;
    let first: ReturnType<typeof buildApp>['app'];
    let second: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      // Two instances of the server on one database.
      first = buildApp(database).app;
      second = buildApp(database).app;
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      key = made.secret;
      orgId = made.org.id;
    });
    afterAll(() => database.dispose());

    const names = async (app: typeof first, path = '/api/customers?sort=name&limit=200') => {
      const res = await call(app, 'GET', path, { key });
      expect(res.status).toBe(200);
      return res.body.data.map((c: { name: string }) => c.name);
    };
    const version = async () => {
      const [row] = await queryText<{ version: string }>(database.db, `select version from org_data_versions where org_id = $1`, [orgId]);
      return Number(row?.version ?? 0);
    };

    test('a kept page is served until something changes: the API, another instance, plain SQL', async () => {
      const created = await call(first, 'POST', '/api/customers', { key, body: { name: 'Alpha', currency: 'EUR' } });
      expect(created.status).toBe(201);
      expect(await names(first)).toEqual(['Alpha']);
      // Written through the other instance: the first one's kept page is not served.
      expect((await call(second, 'POST', '/api/customers', { key, body: { name: 'Beta', currency: 'EUR' } })).status).toBe(201);
      expect(await names(first)).toEqual(['Alpha', 'Beta']);
      // Changed with plain SQL (as an import or an operator would): the trigger moves the version.
      const before = await version();
      await database.db.execute(sql`update customers set name = 'Gamma' where org_id = ${orgId} and name = 'Beta'`);
      expect(await version()).toBe(before + 1);
      expect(await names(first)).toEqual(['Alpha', 'Gamma']);
      expect(await names(second)).toEqual(['Alpha', 'Gamma']);

      // The page really is kept: a change that bypasses the triggers is not seen until the next one.
      await database.db.execute(sql.raw('alter table customers disable trigger user'));
      try {
        await database.db.execute(sql`update customers set name = 'Unversioned' where org_id = ${orgId} and name = 'Gamma'`);
      } finally {
        await database.db.execute(sql.raw('alter table customers enable trigger user'));
      }
      expect(await names(first)).toEqual(['Alpha', 'Gamma']);
      await call(first, 'PATCH', `/api/customers/${created.body.data.id}`, { key, body: { segment: 'smb' } });
      expect(await names(first)).toEqual(['Alpha', 'Unversioned']);
    });

    test("a contract changes the customers' ARR on the next read; a deletion leaves the list", async () => {
      const customer = (await call(first, 'POST', '/api/customers', { key, body: { name: 'Arr Co', currency: 'USD' } })).body.data;
      const arrOf = async () =>
        (await call(first, 'GET', '/api/customers?sort=arr&limit=200', { key })).body.data.find((c: { id: string }) => c.id === customer.id)
          .arr;
      expect(await arrOf()).toBe(0);
      const contract = await call(second, 'POST', '/api/contracts', {
        key,
        body: {
          customer_id: customer.id,
          name: 'Pro',
          status: 'active',
          start_date: day(-10),
          end_date: day(300),
          billing_interval: 'month',
          amount: 10_000,
        },
      });
      expect(contract.status).toBe(201);
      expect(await arrOf()).toBe(120_000);
      const invoices = async () => (await call(first, 'GET', '/api/invoices?limit=200', { key })).body.data.length;
      const count = await invoices();
      await call(second, 'POST', '/api/invoices', {
        key,
        body: { customer_id: customer.id, amount_due: 500, issued_at: new Date().toISOString() },
      });
      expect(await invoices()).toBe(count + 1);
      await call(second, 'DELETE', `/api/customers/${customer.id}`, { key });
      expect(await names(first)).not.toContain('Arr Co');
    });

    test('another organisation with the same URL gets its own page', async () => {
      const other = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      await call(first, 'POST', '/api/customers', { key: other.secret, body: { name: 'Other org only', currency: 'EUR' } });
      const mine = await names(first);
      const theirs = (await call(first, 'GET', '/api/customers?sort=name&limit=200', { key: other.secret })).body.data.map(
        (c: { name: string }) => c.name,
      );
      expect(theirs).toEqual(['Other org only']);
      expect(mine).not.toContain('Other org only');
    });

    test('a kept page answers with the same body and Link header as a fresh one', async () => {
      for (let i = 0; i < 3; i++) await call(first, 'POST', '/api/customers', { key, body: { name: `Paged ${i}`, currency: 'EUR' } });
      const fresh = await call(first, 'GET', '/api/customers?limit=2', { key });
      const kept = await call(first, 'GET', '/api/customers?limit=2', { key });
      expect(kept.text).toBe(fresh.text);
      expect(kept.headers.get('link')).toBe(fresh.headers.get('link'));
      expect(kept.headers.get('link')).toMatch(/^<\/api\/customers\?limit=2&cursor=[^>]+>; rel="next"$/);
      expect(kept.headers.get('content-type')).toContain('application/json');
      expect(kept.headers.get('x-ratelimit-remaining')).not.toBe(fresh.headers.get('x-ratelimit-remaining'));
    });
  });
}
