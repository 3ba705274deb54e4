// `revintel demo`: deterministic, realistic, consistent, refreshable — and visible through the API.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generateDemoData } from '../../src/modules/demo/generate.ts';
import { queryText } from '../../src/db/client.ts';
import { localRunner } from '../../src/db/units.ts';
import { adminUnits } from '../../src/admin/units.ts';
import { BACKENDS, buildApp, call, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';

const TODAY = '2026-11-25';

describe('demo data generator', () => {
  const make = (seed: number) => generateDemoData({ orgId: 'org_x', connectorId: 'con_x', customers: 300, seed, today: TODAY });

  test('the same seed and day give the same data; another seed does not', () => {
    expect(JSON.stringify(make(42))).toBe(JSON.stringify(make(42)));
    expect(JSON.stringify(make(43))).not.toBe(JSON.stringify(make(42)));
  });

  test('realistic spread: segments, currencies, statuses, intervals, renewals, cancellations, expansions', () => {
    const data = make(42);
    const distinct = <T>(values: T[]) => [...new Set(values)].sort();
    expect(distinct(data.customers.map((c) => c.segment))).toEqual(['enterprise', 'mid-market', 'smb']);
    expect(distinct(data.customers.map((c) => c.currency))).toEqual(['EUR', 'GBP', 'USD']);
    expect(distinct(data.customers.map((c) => c.status))).toEqual(['active', 'churned', 'trial']);
    expect(distinct(data.contracts.map((c) => c.billingInterval))).toEqual(['month', 'quarter', 'year']);
    expect(distinct(data.contracts.map((c) => c.status))).toEqual(['active', 'cancelled', 'ended']);
    expect(distinct(data.invoices.map((i) => i.status))).toEqual(['open', 'paid', 'void']);
    expect(data.contracts.some((c) => c.metadata?.expansion)).toBe(true);
    expect(data.invoices.some((i) => i.status === 'open' && i.dueDate! < TODAY)).toBe(true); // overdue
  });

  test('tickets follow the customer: churned customers write about cancelling, the rest mostly ask and thank', () => {
    const data = make(42);
    const statusOf = new Map(data.customers.map((c) => [c.id, c.status]));
    const churned = data.tickets.filter((t) => statusOf.get(t.customerId!) === 'churned');
    const active = data.tickets.filter((t) => statusOf.get(t.customerId!) === 'active');
    const leaving = ['cancellation', 'non_renewal', 'competitor', 'downgrade'];
    const share = (rows: typeof data.tickets) => rows.filter((t) => t.churnSignals!.some((s) => leaving.includes(s))).length / rows.length;
    expect(churned.length).toBeGreaterThan(10);
    expect(share(churned)).toBeGreaterThan(0.4);
    expect(share(active)).toBeLessThan(share(churned) / 2);
    const mean = (rows: typeof data.tickets) => rows.reduce((sum, t) => sum + t.sentiment!, 0) / rows.length;
    expect(mean(churned)).toBeLessThan(mean(active));
    // Every ticket is scored, linked to its customer by its requester's domain, and comes before today.
    const domainOf = new Map(data.customers.map((c) => [c.id, c.domain]));
    for (const ticket of data.tickets) {
      expect(ticket.intelligenceMethod).toBe('afinn-165+rules');
      expect(ticket.requesterEmail!.endsWith(`@${domainOf.get(ticket.customerId!)}`)).toBe(true);
      expect(ticket.sourceCreatedAt! <= new Date(`${TODAY}T12:00:00Z`)).toBe(true);
    }
    expect(new Set(data.tickets.map((t) => t.statusNormalised))).toEqual(new Set(['open', 'pending', 'solved', 'closed']));
  });

  test('consistent: one currency per customer, dates in order, money in minor units', () => {
    const data = make(7);
    const currencyOf = new Map(data.customers.map((c) => [c.id, c.currency]));
    for (const contract of data.contracts) {
      expect(contract.currency).toBe(currencyOf.get(contract.customerId)!);
      if (contract.endDate) expect(contract.endDate >= contract.startDate).toBe(true);
      expect(Number.isInteger(contract.amount)).toBe(true);
    }
    for (const invoice of data.invoices) {
      expect(invoice.currency).toBe(currencyOf.get(invoice.customerId)!);
      expect(invoice.amountPaid! <= invoice.amountDue).toBe(true);
    }
    expect(new Set(data.invoices.map((i) => i.id)).size).toBe(data.invoices.length);
  });
});

for (const backend of BACKENDS) {
  describe(`demo load (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database.dispose());

    test('loads an organisation the API answers for at once; a refresh replaces it row for row', async () => {
      const admin = localRunner(database.db, adminUnits);
      const orgName = uniqueName('demo');
      const first = await admin.run('demo.load', { orgName, customers: 40, seed: 5, today: TODAY, actor: 'test' });
      expect(first.counts.customers).toBe(40);
      expect(first.secret).toMatch(/^rvk_/);
      const { app } = buildApp(database);
      const page = await call(app, 'GET', '/api/customers?sort=arr&limit=200', { key: first.secret });
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(40);
      expect(page.body.data[0].arr).toBeGreaterThan(0);

      const again = await admin.run('demo.load', { orgName, customers: 40, seed: 5, today: TODAY, actor: 'test' });
      expect(again.org.id).toBe(first.org.id);
      expect(again.counts).toEqual(first.counts);
      const after = await call(app, 'GET', '/api/customers?sort=arr&limit=200', { key: again.secret });
      expect(after.body.data.map((c: { id: string }) => c.id)).toEqual(page.body.data.map((c: { id: string }) => c.id));
      const invoices = await call(app, 'GET', '/api/invoices?limit=200', { key: again.secret });
      expect(invoices.body.data.length).toBeGreaterThan(0);
      const tickets = await call(app, 'GET', '/api/tickets?limit=200', { key: again.secret });
      expect(tickets.body.data).toHaveLength(again.counts.tickets);
      expect(tickets.body.data.every((t: { customer_id: string | null; connector: { name: string } }) => t.customer_id && t.connector.name === 'Demo help desk')).toBe(true);
      expect(again.connector.id).toBe(first.connector.id);
      // Its churn predictions are asked for once, whatever the number of loads while none ran.
      const asked = await queryText<{ state: string }>(database.db, `select state from jobs where org_id = $1 and kind = 'predictions.recompute'`, [first.org.id]);
      expect(asked).toEqual([{ state: 'queued' }]);
      // a second demo organisation with the same seed lives beside the first
      const other = await admin.run('demo.load', { orgName: uniqueName('demo'), customers: 40, seed: 5, today: TODAY, actor: 'test' });
      expect(other.org.id).not.toBe(first.org.id);
      expect((await call(app, 'GET', '/api/customers?limit=200', { key: other.secret })).body.data).toHaveLength(40);
    });
  });
}
