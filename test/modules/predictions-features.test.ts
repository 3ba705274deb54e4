// Churn features at a past day on both backends: golden values for a hand-built customer, neutral
// values and named missing sources for a customer with no invoices or tickets, who is in the
// population, and — the honesty rule — rows dated after the day (a ticket, an invoice, a payment, a
// cancellation, a contract amendment) change no feature at that day.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { FEATURE_KEYS, featuresAt, type FeatureRow } from '../../src/modules/predictions/features.ts';
import { insertRow, BACKENDS, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { makeConnector } from '../helpers/tickets.ts';

const DAY = '2026-06-30';
const QUERY = { day: DAY, horizonDays: 90, graceDays: 30 };

const featureValue = (row: FeatureRow, key: string) => row.values[FEATURE_KEYS.indexOf(key)]!;
const labelOf = (row: FeatureRow, key: string) => row.labels[FEATURE_KEYS.indexOf(key)]!;

for (const backend of BACKENDS) {
  describe(`churn features at a past day (${backend})`, () => {
    let database: TestDatabase;
    let orgId: string;
    let connectorId: string;
    const id = (name: string) => `${name}_${orgId.slice(4, 14)}`;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      const { org } = await createOrgWithKey(database);
      orgId = org.id;
      connectorId = (await makeConnector(database, orgId)).id;
      const db = database.db;
      const customer = (name: string, extra: Record<string, unknown> = {}) =>
        insertRow(db, 'customers', { id: id(name), org_id: orgId, name, currency: 'USD', ...extra });
      const contract = (name: string, customer: string, terms: Record<string, unknown>) =>
        insertRow(db, 'contracts', { id: id(name), org_id: orgId, customer_id: id(customer), name, currency: 'USD', ...terms });
      await customer('acme', { segment: 'mid-market' });
      await customer('quiet', { segment: 'enterprise' });
      await customer('gone', { status: 'churned', churned_at: '2026-05-01' });
      await customer('lapsed', { segment: 'SMB' });
      // acme: a first year, its renewal (no auto-renew, ending 46 days after the day) and a
      // monthly add-on since March.
      await contract('c0', 'acme', {
        status: 'ended',
        start_date: '2024-01-01',
        end_date: '2024-12-31',
        billing_interval: 'year',
        amount: 1_000_000,
        seats: 8,
      });
      await contract('c1', 'acme', {
        status: 'active',
        start_date: '2025-01-01',
        end_date: '2026-08-15',
        auto_renew: false,
        billing_interval: 'year',
        amount: 1_200_000,
        seats: 10,
      });
      await contract('c2', 'acme', { status: 'active', start_date: '2026-03-01', billing_interval: 'month', amount: 10_000, seats: 2 });
      await contract('q1', 'quiet', {
        status: 'active',
        start_date: '2025-06-30',
        end_date: '2027-06-29',
        auto_renew: true,
        billing_interval: 'year',
        amount: 500_000,
      });
      await contract('g1', 'gone', {
        status: 'ended',
        start_date: '2025-01-01',
        end_date: '2026-04-30',
        billing_interval: 'year',
        amount: 300_000,
      });
      await contract('l1', 'lapsed', {
        status: 'ended',
        start_date: '2025-06-01',
        end_date: '2026-06-20',
        billing_interval: 'year',
        amount: 200_000,
      });
      const invoice = (name: string, row: Record<string, unknown>) =>
        insertRow(db, 'invoices', { id: id(name), org_id: orgId, customer_id: id('acme'), currency: 'USD', amount_due: 10_000, ...row });
      await invoice('i1', {
        status: 'paid',
        amount_due: 1_200_000,
        amount_paid: 1_200_000,
        issued_at: '2026-01-05T09:00:00Z',
        due_date: '2026-02-04',
        paid_at: '2026-02-01T10:00:00Z',
      });
      await invoice('i2', { status: 'open', issued_at: '2026-05-01T09:00:00Z', due_date: '2026-05-31' });
      await invoice('i3', { status: 'open', issued_at: '2026-06-01T09:00:00Z', due_date: '2026-07-01' });
      await invoice('i4', { status: 'void', issued_at: '2026-04-01T09:00:00Z', due_date: '2026-04-15' });
      // Paid after the day: unpaid, 91 days past due, at the day.
      await invoice('i6', {
        status: 'paid',
        amount_paid: 10_000,
        issued_at: '2026-03-01T09:00:00Z',
        due_date: '2026-03-31',
        paid_at: '2026-07-15T12:00:00Z',
      });
      const ticket = (
        name: string,
        created: string,
        first: { urgency: string; sentiment: number; signals: string[] },
        now: { sentiment: number; signals: string[] },
      ) =>
        insertRow(db, 'tickets', {
          id: id(name),
          org_id: orgId,
          connector_id: connectorId,
          external_id: name,
          customer_id: id('acme'),
          source_created_at: created,
          first_urgency: first.urgency,
          first_sentiment: first.sentiment,
          first_churn_signals: JSON.stringify(first.signals),
          urgency: 'low',
          sentiment: now.sentiment,
          churn_signals: JSON.stringify(now.signals),
        });
      // What a ticket said when it came in counts, not what later events made of it.
      await ticket(
        't1',
        '2026-06-20T08:00:00Z',
        { urgency: 'high', sentiment: -0.5, signals: ['competitor'] },
        { sentiment: 0.8, signals: [] },
      );
      await ticket(
        't2',
        '2026-05-01T08:00:00Z',
        { urgency: 'normal', sentiment: 0.3, signals: [] },
        { sentiment: -0.9, signals: ['cancellation'] },
      );
      await ticket('t3', '2026-02-15T08:00:00Z', { urgency: 'normal', sentiment: 0, signals: [] }, { sentiment: 0, signals: [] });
    });
    afterAll(() => database?.dispose());

    const features = (population: 'active' | 'scored' = 'scored') => featuresAt(database.db, { orgId, population, ...QUERY });

    test('golden values for a hand-built customer', async () => {
      const acme = (await features()).find((r) => r.customerId === id('acme'))!;
      const expected: Record<string, number> = {
        tenure_years: 911 / 365,
        commitment_months_left: 46 / 30,
        renewal_due_no_autorenew: 1,
        renewal_due_autorenew: 0,
        monthly_billing_share: 120_000 / 1_320_000,
        arr_log: Math.log1p(13_200),
        arr_change_180d: 0.1,
        seats_change_180d: 0.2,
        cancellation_notice: 0,
        overdue_months_of_revenue: 20_000 / 110_000,
        worst_months_past_due: 91 / 30,
        late_paid_share_365d: 2 / 3,
        tickets_90d: Math.log1p(2),
        ticket_trend: Math.log1p(2) - Math.log1p(1),
        urgent_tickets_90d: Math.log1p(1),
        negative_ticket_share_90d: 0.5,
        churn_signal_tickets_90d: Math.log1p(1),
        // mid-market: the segments' reference, both zero.
        segment_enterprise: 0,
        segment_smb: 0,
        tenure_log_years: Math.log1p(911 / 365),
        // Its term ends in 46 days: neither within 30 nor 91–180 days out.
        term_end_within_30d: 0,
        term_end_in_91_180d: 0,
      };
      expect(Object.keys(expected)).toEqual([...FEATURE_KEYS]);
      for (const key of FEATURE_KEYS) expect([key, featureValue(acme, key)]).toEqual([key, expect.closeTo(expected[key]!, 12)]);
      expect(acme).toMatchObject({
        currency: 'USD',
        segment: 'mid-market',
        arr: 1_320_000,
        renewalDate: '2026-08-15',
        missing: [],
        noticeKnown: false,
      });
      expect(labelOf(acme, 'renewal_due_no_autorenew')).toBe('Renewal in 46 days, no auto-renew');
      expect(labelOf(acme, 'worst_months_past_due')).toBe('Oldest unpaid invoice 91 days past due');
      expect(labelOf(acme, 'arr_change_180d')).toBe('ARR +10% over 180 days');
      expect(labelOf(acme, 'late_paid_share_365d')).toBe('2 of 3 invoices due in a year paid late');
      expect(labelOf(acme, 'segment_smb')).toBe('Segment: mid-market');
    });

    test('the segment, one-hot against mid-market; none is neutral', async () => {
      const rows = await features();
      const segments = Object.fromEntries(
        rows.map((r) => [
          r.customerId,
          [featureValue(r, 'segment_enterprise'), featureValue(r, 'segment_smb'), labelOf(r, 'segment_enterprise')],
        ]),
      );
      expect(segments[id('lapsed')]).toEqual([0, 1, 'Segment: SMB']);
      expect(segments[id('quiet')]).toEqual([1, 0, 'Segment: enterprise']);
      expect(segments[id('acme')]).toEqual([0, 0, 'Segment: mid-market']);
      await queryText(database.db, `update customers set segment = null where id = $1`, [id('quiet')]);
      const quiet = (await features()).find((r) => r.customerId === id('quiet'))!;
      expect([
        featureValue(quiet, 'segment_enterprise'),
        featureValue(quiet, 'segment_smb'),
        labelOf(quiet, 'segment_smb'),
        quiet.groupLabels.segment,
      ]).toEqual([0, 0, 'No segment', 'Segment not set']);
      await queryText(database.db, `update customers set segment = 'enterprise' where id = $1`, [id('quiet')]);
    });

    test("one customer's features are the same whether asked alone or with the whole organisation", async () => {
      const all = await features();
      for (const row of all)
        expect(await featuresAt(database.db, { orgId, population: 'scored', ...QUERY, customerIds: [row.customerId] })).toEqual([row]);
      const two = [id('acme'), id('quiet'), 'cus_unknown'];
      expect(await featuresAt(database.db, { orgId, population: 'scored', ...QUERY, customerIds: two })).toEqual(
        all.filter((r) => two.includes(r.customerId)),
      );
    });

    test("the next term's end: within 30 days (with or without notice), 91–180 days out, or neither; a notice is never called auto-renewing", async () => {
      const { org } = await createOrgWithKey(database);
      const db = database.db;
      const ends = { soon: '2026-07-20', noticed: '2026-07-10', later: '2026-10-28', monthly: null } as const;
      for (const [name, end] of Object.entries(ends)) {
        await insertRow(db, 'customers', { id: `${name}_${org.id.slice(4, 14)}`, org_id: org.id, name, currency: 'USD' });
        await insertRow(db, 'contracts', {
          id: `k${name}_${org.id.slice(4, 14)}`,
          org_id: org.id,
          customer_id: `${name}_${org.id.slice(4, 14)}`,
          name,
          currency: 'USD',
          amount: 100_000,
          start_date: '2025-07-01',
          status: name === 'noticed' ? 'cancelled' : 'active',
          cancelled_at: name === 'noticed' ? '2026-05-01' : null,
          billing_interval: end ? 'year' : 'month',
          end_date: end,
          auto_renew: true,
        });
      }
      const rows = await featuresAt(db, { orgId: org.id, population: 'scored', ...QUERY });
      const of = (name: string) => {
        const row = rows.find((r) => r.customerId === `${name}_${org.id.slice(4, 14)}`)!;
        return [
          featureValue(row, 'term_end_within_30d'),
          featureValue(row, 'term_end_in_91_180d'),
          labelOf(row, 'term_end_within_30d'),
          labelOf(row, 'term_end_in_91_180d'),
          row.groupLabels.renewal,
        ];
      };
      expect(of('soon')).toEqual([
        1,
        0,
        'Term ends in 20 days; no notice given',
        'Next term ends in 20 days',
        'Renews automatically in 20 days',
      ]);
      // Notice given on an auto-renewing contract: it runs to its end and stops.
      expect(of('noticed')).toEqual([
        1,
        0,
        'Term ends in 10 days; notice given',
        'Next term ends in 10 days',
        'Term ends in 10 days; notice given',
      ]);
      const noticed = rows.find((r) => r.customerId === `noticed_${org.id.slice(4, 14)}`)!;
      expect(noticed.labels.filter((l) => /auto-renewing|Renews automatically/.test(l))).toEqual([]);
      expect(noticed.groupLabels.cancellation_notice).toBe('Cancellation notice given');
      expect(of('later')).toEqual([0, 1, 'Next term ends in 120 days', 'Next term ends in 120 days', 'Term ends in 120 days']);
      expect(of('monthly')).toEqual([
        0,
        0,
        'Month-to-month or evergreen, no fixed term',
        'Month-to-month or evergreen, no fixed term',
        'Month-to-month or evergreen, no fixed term',
      ]);
    });

    test('no invoices and no tickets: neutral values, the sources named', async () => {
      const quiet = (await features()).find((r) => r.customerId === id('quiet'))!;
      expect(quiet.missing).toEqual(['invoices', 'tickets']);
      for (const key of [
        'overdue_months_of_revenue',
        'worst_months_past_due',
        'late_paid_share_365d',
        'tickets_90d',
        'ticket_trend',
        'negative_ticket_share_90d',
        'churn_signal_tickets_90d',
      ]) {
        expect([key, featureValue(quiet, key)]).toEqual([key, 0]);
      }
      expect(featureValue(quiet, 'renewal_due_no_autorenew')).toBe(0);
      expect(featureValue(quiet, 'commitment_months_left')).toBeCloseTo(364 / 30, 12);
    });

    test('who is in: the churned never; a contract ended within the grace period only when scoring', async () => {
      const scored = (await features('scored')).map((r) => r.customerId);
      const active = (await features('active')).map((r) => r.customerId);
      expect(scored).toEqual([id('acme'), id('lapsed'), id('quiet')].sort());
      expect(active).toEqual([id('acme'), id('quiet')].sort());
    });

    test('rows dated after the day change no feature at the day', async () => {
      const before = await features();
      const db = database.db;
      // An amendment and a cancellation notice, recorded today (long after the day).
      await queryText(db, `update contracts set amount = 2400000, seats = 20 where id = $1`, [id('c1')]);
      await queryText(db, `update contracts set status = 'cancelled', cancelled_at = '2026-07-10' where id = $1`, [id('c2')]);
      // An invoice issued after the day, a payment after the day, a ticket after the day.
      await insertRow(db, 'invoices', {
        id: id('i5'),
        org_id: orgId,
        customer_id: id('acme'),
        currency: 'USD',
        amount_due: 99_000,
        status: 'open',
        issued_at: '2026-07-05T09:00:00Z',
        due_date: '2026-07-20',
      });
      await queryText(db, `update invoices set status = 'paid', amount_paid = amount_due, paid_at = '2026-07-02T00:00:00Z' where id = $1`, [
        id('i2'),
      ]);
      await insertRow(db, 'tickets', {
        id: id('t4'),
        org_id: orgId,
        connector_id: connectorId,
        external_id: 't4',
        customer_id: id('acme'),
        source_created_at: '2026-07-02T08:00:00Z',
        first_urgency: 'critical',
        first_sentiment: -0.9,
        first_churn_signals: JSON.stringify(['cancellation']),
      });
      await insertRow(db, 'tickets', {
        id: id('t5'),
        org_id: orgId,
        connector_id: connectorId,
        external_id: 't5',
        customer_id: id('quiet'),
        source_created_at: '2026-08-01T08:00:00Z',
        first_urgency: 'high',
      });
      expect(await features()).toEqual(before);
      // The same rows do show at a later day: the test can fail.
      const later = await featuresAt(db, { orgId, population: 'scored', ...QUERY, day: '2026-07-31' });
      const acme = later.find((r) => r.customerId === id('acme'))!;
      expect(featureValue(acme, 'churn_signal_tickets_90d')).toBeCloseTo(Math.log1p(2), 12);
      // i5 (issued after the day) and i3 (due the day after it) are overdue by then.
      expect(featureValue(acme, 'overdue_months_of_revenue')).toBeCloseTo((99_000 + 10_000) / 110_000, 12);
      // A change of a live contract counts from the day it was recorded (today), whatever date it
      // names: a notice recorded in November was not known in July.
      expect(acme.noticeKnown).toBe(false);
    });
  });
}
