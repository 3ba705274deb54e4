// `revintel demo`: deterministic, realistic, consistent, refreshable — and visible through the API.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generateDemoData, HISTORY_DAYS } from '../../src/modules/demo/generate.ts';
import { EXAMPLE_TICKET, NEGATIVE_MOODS, templatesOf, type Mood } from '../../src/modules/demo/tickets.ts';
import { analyseTicket, INTELLIGENCE_METHOD } from '../../src/modules/tickets/intelligence.ts';
import { queryText } from '../../src/db/client.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { adminUnits } from '../../src/admin/cli-units.ts';
import { BACKENDS, buildApp, call, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

const TODAY = '2026-11-25';
const addDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

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

  test("tickets follow the customer's health: in its last 90 days a churner writes about leaving, and angrier, far more than active customers", () => {
    const data = make(42);
    const customerOf = new Map(data.customers.map((c) => [c.id, c]));
    const beforeChurn = data.tickets.filter((t) => {
      const customer = customerOf.get(t.customerId!)!;
      if (customer.status !== 'churned') return false;
      const ahead = Date.parse(`${customer.churnedAt}T00:00:00Z`) - t.sourceCreatedAt!.getTime();
      return ahead >= 0 && ahead <= 90 * 86_400_000;
    });
    const active = data.tickets.filter((t) => customerOf.get(t.customerId!)!.status === 'active');
    const leaving = ['cancellation', 'non_renewal', 'competitor', 'downgrade'];
    const share = (rows: typeof data.tickets) => rows.filter((t) => t.churnSignals!.some((s) => leaving.includes(s))).length / rows.length;
    expect(beforeChurn.length).toBeGreaterThan(50);
    expect(share(beforeChurn)).toBeGreaterThan(0.3);
    expect(share(active)).toBeLessThan(share(beforeChurn) / 2);
    const mean = (rows: typeof data.tickets) => rows.reduce((sum, t) => sum + t.sentiment!, 0) / rows.length;
    expect(mean(beforeChurn)).toBeLessThan(mean(active) - 0.1);
    // Every ticket is scored, linked to its customer by its requester's domain, and comes before
    // today (a load in the morning shows no ticket from later that day).
    const domainOf = new Map(data.customers.map((c) => [c.id, c.domain]));
    for (const ticket of data.tickets) {
      expect(ticket.intelligenceMethod).toBe(INTELLIGENCE_METHOD);
      expect(ticket.requesterEmail!.endsWith(`@${domainOf.get(ticket.customerId!)}`)).toBe(true);
      expect(ticket.sourceCreatedAt! < new Date(`${TODAY}T00:00:00Z`)).toBe(true);
      expect(ticket.sourceUpdatedAt! <= new Date(`${TODAY}T00:00:00Z`)).toBe(true);
    }
    expect(new Set(data.tickets.map((t) => t.statusNormalised))).toEqual(new Set(['open', 'pending', 'solved', 'closed']));
  });

  test('every complaint a demo customer can write scores negative', () => {
    for (const mood of NEGATIVE_MOODS) {
      for (const template of templatesOf(mood)) expect(analyseTicket(template, { recentContacts: 0 }).sentiment).toBeLessThan(-0.2);
    }
  });

  test('a customer who writes about leaving carries the signal of its mood, and the example ticket fires one', () => {
    const signalOf: Partial<Record<Mood, string>> = {
      cancellation: 'cancellation',
      competitor: 'competitor',
      downgrade: 'downgrade',
      refund: 'refund',
    };
    for (const [mood, signal] of Object.entries(signalOf)) {
      for (const template of templatesOf(mood as Mood))
        expect({ subject: template.subject, signals: analyseTicket(template, { recentContacts: 0 }).churnSignals }).toEqual({
          subject: template.subject,
          signals: expect.arrayContaining([signal]),
        });
    }
    for (const template of templatesOf('howto')) expect(analyseTicket(template, { recentContacts: 0 }).churnSignals).toEqual([]);
    expect(
      analyseTicket({ subject: EXAMPLE_TICKET.subject, description: null, priority: null }, { recentContacts: 0 }).churnSignals,
    ).toEqual(['cancellation']);
  });

  test('36 months of history, and a truth for every active customer every 30 days that matches what happened', () => {
    const data = generateDemoData({ orgId: 'org_x', connectorId: 'con_x', customers: 1_000, seed: 42, today: TODAY });
    const day = (d: Date) => d.toISOString().slice(0, 10);
    const historyStart = addDays(TODAY, -HISTORY_DAYS);
    expect(data.tickets.map((t) => day(t.sourceCreatedAt!)).sort()[0]! < addDays(historyStart, 30)).toBe(true);
    expect(data.invoices.map((i) => day(i.issuedAt!)).sort()[0]! < addDays(historyStart, 30)).toBe(true);
    const days = new Set(Array.from({ length: 37 }, (_, k) => addDays(TODAY, -30 * k)));
    expect(data.truth.every((r) => days.has(r.asOf) && r.pTrue >= 0 && r.pTrue <= 1 && r.horizonDays === 90)).toBe(true);
    expect(new Set(data.truth.map((r) => r.asOf))).toEqual(days);
    // Its mean is the churn rate that came true within 90 days (over the days whose 90 days are past).
    const churnedAt = new Map(data.customers.map((c) => [c.id, c.churnedAt]));
    const known = data.truth.filter((r) => r.asOf <= addDays(TODAY, -90));
    const happened = known.filter((r) => {
      const churn = churnedAt.get(r.customerId);
      return churn != null && churn > r.asOf && churn <= addDays(r.asOf, 90);
    }).length;
    const expected = known.reduce((sum, r) => sum + r.pTrue, 0);
    expect(Math.abs(happened - expected) / known.length).toBeLessThan(0.005);
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
      const admin = localRunner(database.db, adminUnits, DEFAULT_SETTINGS);
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
      expect(again.counts.tickets).toBeGreaterThan(0);
      expect(tickets.body.data).toHaveLength(Math.min(200, again.counts.tickets));
      expect(
        tickets.body.data.every(
          (t: { customer_id: string | null; connector: { name: string } }) => t.customer_id && t.connector.name === 'Demo help desk',
        ),
      ).toBe(true);
      expect(again.connector.id).toBe(first.connector.id);
      // its console admin stays the same user; every load gives a fresh one-time link
      expect(again.admin).toEqual(first.admin);
      expect(again.signInToken).not.toBe(first.signInToken);
      const accepted = await call(app, 'POST', '/api/auth/accept', { body: { token: again.signInToken, password: 'demo password 123' } });
      expect(accepted.body.data).toMatchObject({
        user: { id: first.admin.id, email: 'admin@example.com', role: 'admin' },
        organisation: { id: first.org.id },
      });
      // Its churn predictions are asked for once, whatever the number of loads while none ran.
      const asked = await queryText<{ state: string }>(
        database.db,
        `select state from jobs where org_id = $1 and kind = 'predictions.recompute'`,
        [first.org.id],
      );
      expect(asked).toEqual([{ state: 'queued' }]);
      // The inbox is not empty: its churn-signal rules acted on the latest tickets.
      expect(again.pendingActions).toBeGreaterThan(0);
      const inbox = await call(app, 'GET', '/api/agent-actions?limit=50', { key: again.secret });
      expect(inbox.status).toBe(200);
      expect(inbox.body.data.length).toBe(again.pendingActions);
      expect(
        inbox.body.data.every(
          (a: { status: string; reason: string }) => a.reason === 'churn_signal' && ['proposed', 'pending_approval'].includes(a.status),
        ),
      ).toBe(true);
      // a second demo organisation with the same seed lives beside the first
      const other = await admin.run('demo.load', { orgName: uniqueName('demo'), customers: 40, seed: 5, today: TODAY, actor: 'test' });
      expect(other.org.id).not.toBe(first.org.id);
      expect((await call(app, 'GET', '/api/customers?limit=200', { key: other.secret })).body.data).toHaveLength(40);
    });
  });
}
