// POST / PATCH / DELETE on customers, contracts and invoices: create and upsert by external_id,
// validation naming the field, the currency rule, references between records, soft delete and
// tombstones, Idempotency-Key replay and conflict, and organisation isolation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/db/client.ts';
import { writeCustomers } from '../../src/modules/customers/service.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

for (const backend of BACKENDS) {
  describe(`record writes (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    let otherKey: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      key = made.secret;
      orgId = made.org.id;
      otherKey = (await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 })).secret;
    });
    afterAll(() => database.dispose());

    const post = (path: string, body: unknown, headers: Record<string, string> = {}, as = key) =>
      call(app, 'POST', path, { key: as, body, headers });
    const patch = (path: string, body: unknown, as = key) => call(app, 'PATCH', path, { key: as, body });
    const remove = (path: string, as = key) => call(app, 'DELETE', path, { key: as });
    const get = (path: string, as = key) => call(app, 'GET', path, { key: as });
    let counter = 0;
    const unique = (label: string) => `${label}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

    async function customer(extra: Record<string, unknown> = {}) {
      const res = await post('/api/customers', { name: unique('Customer'), currency: 'EUR', ...extra });
      expect(res.status).toBe(201);
      return res.body.data;
    }

    test('POST creates a customer (201) and answers it as GET does', async () => {
      const res = await post('/api/customers', {
        external_id: unique('crm'),
        name: 'Acme GmbH',
        domain: 'acme.de',
        email: 'billing@acme.de',
        status: 'trial',
        segment: 'mid-market',
        country: 'DE',
        currency: 'EUR',
        csm: { name: 'Dana', email: 'dana@example.com', phone: null, slack_user_id: 'U1' },
        metadata: { crm_owner: 'x', tier: 2 },
      });
      expect(res.status).toBe(201);
      expect(res.body.success).toBe(true);
      const created = res.body.data;
      expect(created.id).toMatch(/^cus_/);
      expect(created).toMatchObject({
        name: 'Acme GmbH',
        domain: 'acme.de',
        status: 'trial',
        country: 'DE',
        arr: 0,
        mrr: 0,
        renewal_date: null,
        renewing: null,
        churn_risk: null,
        metadata: { crm_owner: 'x', tier: 2 },
        deleted_at: null,
      });
      expect(Object.keys(created)).toEqual([
        'id',
        'external_id',
        'name',
        'domain',
        'email',
        'status',
        'churned_at',
        'segment',
        'country',
        'currency',
        'csm',
        'arr',
        'mrr',
        'renewal_date',
        'renewing',
        'churn_risk',
        'metadata',
        'created_at',
        'updated_at',
        'deleted_at',
      ]);
      expect(created.csm).toEqual({ name: 'Dana', email: 'dana@example.com', phone: null, slack_user_id: 'U1' });
      expect((await get(`/api/customers/${created.id}`)).body.data).toEqual(created);
      expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    });

    test('POST with a known external_id updates (200), unchanged leaves updated_at alone, a missing field keeps its value', async () => {
      const externalId = unique('crm');
      const first = await post('/api/customers', { external_id: externalId, name: 'Beta', currency: 'USD', segment: 'smb' });
      expect(first.status).toBe(201);
      const same = await post('/api/customers', { external_id: externalId, name: 'Beta', currency: 'USD' });
      expect(same.status).toBe(200);
      expect(same.body.data.id).toBe(first.body.data.id);
      expect(same.body.data.updated_at).toBe(first.body.data.updated_at);
      expect(same.body.data.segment).toBe('smb'); // not sent: kept
      const changed = await post('/api/customers', { external_id: externalId, name: 'Beta Inc', currency: 'USD', segment: null });
      expect(changed.status).toBe(200);
      expect(changed.body.data).toMatchObject({ id: first.body.data.id, name: 'Beta Inc', segment: null });
      expect(changed.body.data.updated_at > first.body.data.updated_at).toBe(true);
      const [{ n }] = rowsOf<{ n: number }>(
        await database.db.execute(sql`select count(*)::int as n from customers where org_id = ${orgId} and external_id = ${externalId}`),
      ) as [{ n: number }];
      expect(n).toBe(1);
    });

    test.each([
      [{ currency: 'EUR' }, 'Invalid field "name": is required'],
      [{ name: 'X', currency: 'eur' }, 'Invalid field "currency": must be an ISO 4217 currency code such as USD'],
      [{ name: 'X', currency: 'EUR', colour: 'red' }, 'Invalid field "colour": is not a known field'],
      [{ name: 'X', currency: 'EUR', domain: 'not a domain' }, 'Invalid field "domain": must be a domain name such as acme.com'],
      [{ name: 'X', currency: 'EUR', email: 'nope' }, 'Invalid field "email": must be an e-mail address'],
      [{ name: 'X', currency: 'EUR', status: 'gone' }, 'Invalid field "status": must be one of active, churned, trial'],
      [{ name: 'X', currency: 'EUR', csm: { email: 'bad' } }, 'Invalid field "csm.email": must be an e-mail address'],
      [{ name: 'X', currency: 'EUR', metadata: [1] }, 'Invalid field "metadata": must be a JSON object'],
      [{ name: '', currency: 'EUR' }, 'Invalid field "name"'],
    ])('POST /api/customers %j is a 400 naming the field', async (body, message) => {
      const res = await post('/api/customers', body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, data: null });
      expect(res.body.error).toContain(message);
    });

    test.each([
      [{ start_date: '2026-02-30' }, 'Invalid field "start_date": must be a date, YYYY-MM-DD'],
      [{ start_date: '2026/01/05' }, 'Invalid field "start_date": must be a date, YYYY-MM-DD'],
      [{ amount: -1 }, 'Invalid field "amount": must be a whole, non-negative amount in minor units (cents)'],
      [{ amount: 10.5 }, 'Invalid field "amount"'],
      [{ billing_interval: 'week' }, 'Invalid field "billing_interval": must be one of month, quarter, year'],
      [{ seats: -3 }, 'Invalid field "seats"'],
    ])('POST /api/contracts with %j is a 400 naming the field', async (change, message) => {
      const c = await customer();
      const res = await post('/api/contracts', {
        customer_id: c.id,
        name: 'Pro',
        start_date: '2026-01-01',
        billing_interval: 'month',
        amount: 1000,
        ...change,
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain(message);
    });

    test('an invoice time must carry its zone; 2024-02-29 is a day, 2025-02-29 is not', async () => {
      const c = await customer();
      const noZone = await post('/api/invoices', { customer_id: c.id, amount_due: 100, issued_at: '2026-01-05T10:00:00' });
      expect(noZone.status).toBe(400);
      expect(noZone.body.error).toContain('Invalid field "issued_at"');
      const leap = await post('/api/invoices', {
        customer_id: c.id,
        amount_due: 100,
        issued_at: '2024-02-29T10:00:00+01:00',
        due_date: '2024-02-29',
      });
      expect(leap.status).toBe(201);
      expect(leap.body.data).toMatchObject({ issued_at: '2024-02-29T09:00:00.000Z', due_date: '2024-02-29' });
      const notLeap = await post('/api/invoices', {
        customer_id: c.id,
        amount_due: 100,
        issued_at: '2025-02-28T10:00:00Z',
        due_date: '2025-02-29',
      });
      expect(notLeap.status).toBe(400);
      expect(notLeap.body.error).toContain('Invalid field "due_date"');
    });

    test('wrong content type is a 415, malformed JSON a 400, an oversized body a 413, and nothing is written', async () => {
      const name = unique('Never');
      const asText = await call(app, 'POST', '/api/customers', {
        key,
        rawBody: JSON.stringify({ name, currency: 'EUR' }),
        headers: { 'content-type': 'text/plain' },
      });
      expect(asText.status).toBe(415);
      const broken = await call(app, 'POST', '/api/customers', {
        key,
        rawBody: '{"name": ',
        headers: { 'content-type': 'application/json' },
      });
      expect(broken.status).toBe(400);
      expect(broken.body.error).toContain('Malformed JSON');
      const huge = await post('/api/customers', { name, currency: 'EUR', metadata: { blob: 'x'.repeat(1_100_000) } });
      expect(huge.status).toBe(413);
      const found = rowsOf(await database.db.execute(sql`select 1 from customers where org_id = ${orgId} and name = ${name}`));
      expect(found).toHaveLength(0);
    });

    test("contracts and invoices are in their customer's currency: defaulted when left out, 422 when different", async () => {
      const c = await customer({ currency: 'GBP' });
      const contract = await post('/api/contracts', {
        customer_id: c.id,
        name: 'Pro',
        start_date: day(-10),
        billing_interval: 'quarter',
        amount: 3_000,
      });
      expect(contract.status).toBe(201);
      expect(contract.body.data).toMatchObject({ currency: 'GBP', arr: 12_000, customer_id: c.id });
      const wrong = await post('/api/contracts', {
        customer_id: c.id,
        name: 'Pro',
        start_date: day(-10),
        billing_interval: 'month',
        amount: 1,
        currency: 'USD',
      });
      expect(wrong.status).toBe(422);
      expect(wrong.body.error).toContain("currency USD is not the customer's currency GBP");
      const wrongInvoice = await post('/api/invoices', {
        customer_id: c.id,
        amount_due: 5,
        issued_at: '2026-01-01T00:00:00Z',
        currency: 'EUR',
      });
      expect(wrongInvoice.status).toBe(422);
      // The customer's currency cannot change under its contracts.
      const change = await patch(`/api/customers/${c.id}`, { currency: 'USD' });
      expect(change.status).toBe(422);
      expect(change.body.error).toContain('currency cannot change');
      expect((await get(`/api/customers/${c.id}`)).body.data.currency).toBe('GBP');
      // A contract's currency cannot be patched away from its customer's either.
      const patched = await patch(`/api/contracts/${contract.body.data.id}`, { currency: 'USD' });
      expect(patched.status).toBe(422);
    });

    test('records name their customer and contract by id or external id; an invoice naming only its contract belongs to its customer', async () => {
      const c = await customer({ external_id: unique('crm') });
      const contract = await post('/api/contracts', {
        customer_external_id: c.external_id,
        external_id: unique('sub'),
        name: 'Annual',
        start_date: day(-30),
        end_date: day(335),
        billing_interval: 'year',
        amount: 120_000,
        seats: 10,
        auto_renew: true,
      });
      expect(contract.status).toBe(201);
      expect(contract.body.data).toMatchObject({ customer_id: c.id, seats: 10, auto_renew: true, arr: 120_000 });
      const invoice = await post('/api/invoices', {
        contract_external_id: contract.body.data.external_id,
        number: 'INV-1',
        amount_due: 120_000,
        issued_at: `${day(-30)}T09:00:00Z`,
        due_date: day(-1),
      });
      expect(invoice.status).toBe(201);
      expect(invoice.body.data).toMatchObject({ customer_id: c.id, contract_id: contract.body.data.id, currency: 'EUR', days_past_due: 1 });
      const customerNow = (await get(`/api/customers/${c.id}`)).body.data;
      expect(customerNow).toMatchObject({ arr: 120_000, mrr: 10_000, renewal_date: day(335) });

      const other = await customer();
      const mismatch = await post('/api/invoices', {
        customer_id: other.id,
        contract_id: contract.body.data.id,
        amount_due: 1,
        issued_at: '2026-01-01T00:00:00Z',
      });
      expect(mismatch.status).toBe(422);
      expect(mismatch.body.error).toContain('is not a contract of customer');
      const unknown = await post('/api/contracts', {
        customer_external_id: 'nobody',
        name: 'X',
        start_date: day(0),
        billing_interval: 'month',
        amount: 1,
      });
      expect(unknown.status).toBe(422);
      expect(unknown.body.error).toContain('customer_external_id "nobody" is not a customer of this organisation');
      const none = await post('/api/contracts', { name: 'X', start_date: day(0), billing_interval: 'month', amount: 1 });
      expect(none.status).toBe(422);
      expect(none.body.error).toContain('customer_id or customer_external_id is required');
      // Moving an invoice to a contract of another customer is refused by the database itself.
      const otherContract = await post('/api/contracts', {
        customer_id: other.id,
        name: 'Other',
        start_date: day(0),
        billing_interval: 'month',
        amount: 1,
      });
      const moved = await patch(`/api/invoices/${invoice.body.data.id}`, { contract_id: otherContract.body.data.id });
      expect(moved.status).toBe(422);
    });

    test("mixed currencies: each customer's ARR stays in its own currency, never summed or converted; lists filter by currency", async () => {
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      const as = made.secret;
      const yen = (await post('/api/customers', { name: 'Tokyo KK', currency: 'JPY' }, {}, as)).body.data;
      const dollars = (await post('/api/customers', { name: 'Boston Inc', currency: 'USD' }, {}, as)).body.data;
      const euros = (await post('/api/customers', { name: 'Berlin GmbH', currency: 'EUR' }, {}, as)).body.data;
      await post(
        '/api/contracts',
        { customer_id: yen.id, name: 'Annual', start_date: day(-10), billing_interval: 'year', amount: 1_200_000 },
        {},
        as,
      );
      await post(
        '/api/contracts',
        { customer_id: dollars.id, name: 'Monthly', start_date: day(-10), billing_interval: 'month', amount: 50_000 },
        {},
        as,
      );
      await post(
        '/api/contracts',
        { customer_id: dollars.id, name: 'Add-on', start_date: day(-10), billing_interval: 'quarter', amount: 0 },
        {},
        as,
      );
      await post(
        '/api/contracts',
        { customer_id: euros.id, name: 'Monthly', start_date: day(-10), billing_interval: 'month', amount: 10_000 },
        {},
        as,
      );
      await post(
        '/api/invoices',
        { customer_id: dollars.id, amount_due: 0, issued_at: `${day(-40)}T00:00:00Z`, due_date: day(-10) },
        {},
        as,
      );
      expect((await get(`/api/customers/${yen.id}`, as)).body.data).toMatchObject({ currency: 'JPY', arr: 1_200_000, mrr: 100_000 });
      expect((await get(`/api/customers/${dollars.id}`, as)).body.data).toMatchObject({ currency: 'USD', arr: 600_000, mrr: 50_000 }); // the zero-amount add-on adds nothing
      expect((await get(`/api/customers/${euros.id}`, as)).body.data).toMatchObject({ currency: 'EUR', arr: 120_000, mrr: 10_000 });
      const usd = (await get('/api/customers?currency=USD&sort=arr', as)).body.data;
      expect(usd.map((c: { id: string }) => c.id)).toEqual([dollars.id]);
      expect((await get('/api/contracts?currency=JPY', as)).body.data.map((c: { customer_id: string }) => c.customer_id)).toEqual([yen.id]);
      const invoices = (await get('/api/invoices?currency=USD', as)).body.data;
      expect(invoices).toHaveLength(1);
      expect(invoices[0]).toMatchObject({ amount_due: 0, days_past_due: 0 }); // nothing to pay is never overdue
      expect((await get('/api/invoices?currency=USD&overdue=true', as)).body.data).toHaveLength(0);
      const bad = await get('/api/customers?currency=usd', as);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toContain('Invalid query parameter "currency"');
    });

    test('a contract ending before it starts is a 422, whether created so or patched so', async () => {
      const c = await customer();
      const bad = await post('/api/contracts', {
        customer_id: c.id,
        name: 'X',
        start_date: '2026-03-01',
        end_date: '2026-02-28',
        billing_interval: 'month',
        amount: 1,
      });
      expect(bad.status).toBe(422);
      expect(bad.body.error).toBe('end_date must not be before start_date');
      const good = await post('/api/contracts', {
        customer_id: c.id,
        name: 'X',
        start_date: '2026-03-01',
        end_date: '2026-03-01',
        billing_interval: 'month',
        amount: 1,
      });
      expect(good.status).toBe(201);
      const patched = await patch(`/api/contracts/${good.body.data.id}`, { end_date: '2026-01-01' });
      expect(patched.status).toBe(422);
      expect((await get(`/api/contracts/${good.body.data.id}`)).body.data.end_date).toBe('2026-03-01');
    });

    test('PATCH changes only what it names, null clears, ext: works, an external_id taken is a 409', async () => {
      const c = await customer({ external_id: unique('crm'), segment: 'smb', domain: 'gamma.io' });
      const res = await patch(`/api/customers/ext:${c.external_id}`, { segment: 'enterprise', domain: null });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: c.id, segment: 'enterprise', domain: null, name: c.name, currency: 'EUR' });
      const noop = await patch(`/api/customers/${c.id}`, { segment: 'enterprise' });
      expect(noop.status).toBe(200);
      expect(noop.body.data.updated_at).toBe(res.body.data.updated_at);
      const taken = await customer({ external_id: unique('crm') });
      const clash = await patch(`/api/customers/${c.id}`, { external_id: taken.external_id });
      expect(clash.status).toBe(409);
      expect(clash.body.error).toContain('external_id is already used');
      const invalid = await patch(`/api/customers/${c.id}`, { name: null });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error).toContain('Invalid field "name"');
      const missing = await patch('/api/customers/cus_doesnotexist', { segment: 'x' });
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe('Customer cus_doesnotexist not found');
    });

    test('DELETE is soft: the record leaves lists, reaches updated_since syncs as a tombstone, and an upsert brings it back', async () => {
      const since = new Date(Date.now() - 1_000).toISOString();
      const c = await customer({ external_id: unique('crm') });
      const contract = await post('/api/contracts', {
        customer_id: c.id,
        name: 'Pro',
        start_date: day(-1),
        billing_interval: 'month',
        amount: 100,
      });
      const invoice = await post('/api/invoices', { customer_id: c.id, amount_due: 100, issued_at: '2026-01-01T00:00:00Z' });
      const gone = await remove(`/api/customers/${c.id}`);
      expect(gone.status).toBe(200);
      expect(gone.body.data).toMatchObject({ id: c.id });
      expect(gone.body.data.deleted_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect((await get(`/api/customers/${c.id}`)).status).toBe(404);
      expect((await remove(`/api/customers/${c.id}`)).status).toBe(404);
      // Its contracts and invoices went with it.
      expect((await get(`/api/contracts/${contract.body.data.id}`)).status).toBe(404);
      expect((await get(`/api/invoices/${invoice.body.data.id}`)).status).toBe(404);
      const listed = (await get(`/api/customers?updated_since=${since}&limit=200`)).body.data.map((x: { id: string }) => x.id);
      expect(listed).not.toContain(c.id);
      const synced = (await get(`/api/customers?updated_since=${since}&include_deleted=true&limit=200`)).body.data;
      expect(synced.find((x: { id: string }) => x.id === c.id)?.deleted_at).toBe(gone.body.data.deleted_at);
      const contractsSynced = (await get(`/api/contracts?updated_since=${since}&include_deleted=true&limit=200`)).body.data;
      expect(contractsSynced.find((x: { id: string }) => x.id === contract.body.data.id)?.deleted_at).toBeTruthy();
      // The source system says it exists again: same record, alive.
      const back = await post('/api/customers', { external_id: c.external_id, name: c.name, currency: 'EUR' });
      expect(back.status).toBe(200);
      expect(back.body.data.id).toBe(c.id);
      expect(back.body.data.deleted_at).toBeNull();
      expect((await get(`/api/customers/${c.id}`)).status).toBe(200);
    });

    test("another organisation's records cannot be read, changed, deleted or referenced", async () => {
      const c = await customer();
      const contract = await post('/api/contracts', {
        customer_id: c.id,
        name: 'Pro',
        start_date: day(-1),
        billing_interval: 'month',
        amount: 100,
      });
      for (const path of [`/api/customers/${c.id}`, `/api/contracts/${contract.body.data.id}`]) {
        expect((await patch(path, { name: 'stolen' }, otherKey)).status).toBe(404);
        expect((await remove(path, otherKey)).status).toBe(404);
      }
      const steal = await post(
        '/api/contracts',
        { customer_id: c.id, name: 'X', start_date: day(0), billing_interval: 'month', amount: 1 },
        {},
        otherKey,
      );
      expect(steal.status).toBe(422);
      const stealInvoice = await post(
        '/api/invoices',
        { contract_id: contract.body.data.id, amount_due: 1, issued_at: '2026-01-01T00:00:00Z' },
        {},
        otherKey,
      );
      expect(stealInvoice.status).toBe(422);
      expect((await get(`/api/customers/${c.id}`)).body.data.name).toBe(c.name);
      expect((await call(app, 'POST', '/api/customers', { body: { name: 'X', currency: 'EUR' } })).status).toBe(401);
    });

    test('Idempotency-Key: the first answer is replayed, the same key with another body is a 409, keys are per organisation', async () => {
      const idem = crypto.randomUUID();
      const body = { name: unique('Idem'), currency: 'EUR' };
      const first = await post('/api/customers', body, { 'idempotency-key': idem });
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await post('/api/customers', { currency: 'EUR', name: body.name }, { 'idempotency-key': idem }); // same request, keys reordered
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(first.text);
      const [{ n }] = rowsOf<{ n: number }>(
        await database.db.execute(sql`select count(*)::int as n from customers where org_id = ${orgId} and name = ${body.name}`),
      ) as [{ n: number }];
      expect(n).toBe(1);
      const different = await post('/api/customers', { ...body, segment: 'smb' }, { 'idempotency-key': idem });
      expect(different.status).toBe(409);
      expect(different.body.error).toContain('Idempotency-Key was already used with a different request');
      const elsewhere = await post(
        '/api/contracts',
        { customer_id: first.body.data.id, name: 'X', start_date: day(0), billing_interval: 'month', amount: 1 },
        { 'idempotency-key': idem },
      );
      expect(elsewhere.status).toBe(409);
      const otherOrg = await post('/api/customers', body, { 'idempotency-key': idem }, otherKey);
      expect(otherOrg.status).toBe(201);
      expect(otherOrg.body.data.id).not.toBe(first.body.data.id);
      expect((await post('/api/customers', body, { 'idempotency-key': 'has space' })).status).toBe(400);
    });

    test('Idempotency-Key: a refused request stores nothing, and an answer older than 24 hours is not replayed', async () => {
      const idem = crypto.randomUUID();
      const c = await customer();
      const refused = await post(
        '/api/contracts',
        { customer_id: c.id, name: 'X', start_date: day(0), billing_interval: 'month', amount: 1, currency: 'USD' },
        { 'idempotency-key': idem },
      );
      expect(refused.status).toBe(422);
      const fixed = await post(
        '/api/contracts',
        { customer_id: c.id, name: 'X', start_date: day(0), billing_interval: 'month', amount: 1 },
        { 'idempotency-key': idem },
      );
      expect(fixed.status).toBe(201);
      expect(fixed.headers.get('idempotent-replayed')).toBeNull();
      await database.db.execute(
        sql`update idempotency_keys set created_at = now() - interval '25 hours' where org_id = ${orgId} and key = ${idem}`,
      );
      const later = await post(
        '/api/contracts',
        { customer_id: c.id, name: 'X', start_date: day(0), billing_interval: 'month', amount: 1 },
        { 'idempotency-key': idem },
      );
      expect(later.status).toBe(201);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
      expect(later.body.data.id).not.toBe(fixed.body.data.id);
    });

    test("only a table's own columns ever reach the SQL, whatever a caller passes", async () => {
      const kept = await customer();
      const hostile = { name: 'X', currency: 'EUR', 'name" = null; drop table customers; --': 'x' } as never;
      await expect(database.db.transaction((tx) => writeCustomers(tx as never, orgId, [{ index: 0, input: hostile }]))).rejects.toThrow(
        'has no writable column',
      );
      expect((await get(`/api/customers/${kept.id}`)).status).toBe(200);
    });

    test('Idempotency-Key: concurrent retries of one request create one record', async () => {
      const idem = crypto.randomUUID();
      const body = { name: unique('Race'), currency: 'EUR' };
      const answers = await Promise.all(Array.from({ length: 8 }, () => post('/api/customers', body, { 'idempotency-key': idem })));
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
      expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
      expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(7);
      const [{ n }] = rowsOf<{ n: number }>(
        await database.db.execute(sql`select count(*)::int as n from customers where org_id = ${orgId} and name = ${body.name}`),
      ) as [{ n: number }];
      expect(n).toBe(1);
    });
  });
}
