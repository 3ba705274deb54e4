// cancelled_at and churned_at through the API: written and shown, set by the status when left out,
// and a 400 naming the field for a value that is not a day or a date on a live record.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { utcToday } from '../../src/lib/today.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`stop dates through the API (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      key = (await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 })).secret;
    });
    afterAll(() => database.dispose());

    const send = (method: string, path: string, body?: unknown) => call(app, method, path, { key, body });
    const customer = async (extra: Record<string, unknown> = {}) => {
      const res = await send('POST', '/api/customers', { name: 'Acme', currency: 'EUR', ...extra });
      expect(res.status).toBe(201);
      return res.body.data;
    };
    const contract = async (customerId: string, extra: Record<string, unknown> = {}) => {
      const res = await send('POST', '/api/contracts', {
        customer_id: customerId,
        name: 'Pro',
        start_date: '2025-01-01',
        end_date: '2026-12-31',
        billing_interval: 'year',
        amount: 1000,
        ...extra,
      });
      expect(res.status).toBe(201);
      return res.body.data;
    };

    test('a contract is created with its cancelled_at and answered with it, by POST and GET', async () => {
      const created = await contract((await customer()).id, { status: 'cancelled', cancelled_at: '2025-09-15' });
      expect(created).toMatchObject({ status: 'cancelled', cancelled_at: '2025-09-15' });
      expect((await send('GET', `/api/contracts/${created.id}`)).body.data.cancelled_at).toBe('2025-09-15');
      const live = await contract(created.customer_id);
      expect(live.cancelled_at).toBeNull();
    });

    test('PATCH to cancelled without a date sets today; back to active clears it', async () => {
      const { id } = await contract((await customer()).id);
      const cancelled = await send('PATCH', `/api/contracts/${id}`, { status: 'cancelled' });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.data.cancelled_at).toBe(utcToday());
      const back = await send('PATCH', `/api/contracts/${id}`, { status: 'active' });
      expect(back.body.data).toMatchObject({ status: 'active', cancelled_at: null });
    });

    test('a cancelled_at on a live contract, or one that is not a day, is a 400 naming the field', async () => {
      const { id, customer_id } = await contract((await customer()).id);
      const onLive = await send('PATCH', `/api/contracts/${id}`, { cancelled_at: '2025-06-01' });
      expect(onLive.status).toBe(400);
      expect(onLive.body).toMatchObject({
        success: false,
        code: 'validation_failed',
        error: expect.stringContaining('Invalid field "cancelled_at"'),
      });
      const created = await send('POST', '/api/contracts', {
        customer_id,
        name: 'X',
        start_date: '2025-01-01',
        billing_interval: 'month',
        amount: 1,
        cancelled_at: '2025-06-01',
      });
      expect(created.status).toBe(400);
      expect(created.body.error).toContain('"cancelled_at"');
      const notADay = await send('PATCH', `/api/contracts/${id}`, { status: 'cancelled', cancelled_at: '2025-02-30' });
      expect(notADay.status).toBe(400);
      expect(notADay.body.error).toContain('"cancelled_at"');
      expect((await send('GET', `/api/contracts/${id}`)).body.data).toMatchObject({ status: 'active', cancelled_at: null });
    });

    test("a customer's churned_at: given, set by the status, cleared on return, refused on a live customer", async () => {
      const imported = await customer({ status: 'churned', churned_at: '2024-03-31' });
      expect(imported).toMatchObject({ status: 'churned', churned_at: '2024-03-31' });
      const live = await customer();
      expect(live.churned_at).toBeNull();
      const churned = await send('PATCH', `/api/customers/${live.id}`, { status: 'churned' });
      expect(churned.body.data.churned_at).toBe(utcToday());
      const back = await send('PATCH', `/api/customers/${live.id}`, { status: 'active' });
      expect(back.body.data).toMatchObject({ status: 'active', churned_at: null });
      const refused = await send('PATCH', `/api/customers/${live.id}`, { churned_at: '2024-01-01' });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'validation_failed', error: expect.stringContaining('Invalid field "churned_at"') });
      const notADay = await send('PATCH', `/api/customers/${imported.id}`, { churned_at: 'yesterday' });
      expect(notADay.status).toBe(400);
      expect(notADay.body.error).toContain('"churned_at"');
    });
  });
}
