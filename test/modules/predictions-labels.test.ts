// Churn days and labelled snapshots on both backends: a contract that ends without renewal is a
// churn the day after, a renewal within the grace period is not, an explicit mark and its period
// end are one churn, a churn whose grace period has not passed is not known yet; a snapshot is
// positive when the churn falls within the horizon after it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { localRunner } from '../../src/db/units-of-work.ts';
import { gatherHistory, historyUnits } from '../../src/modules/predictions/history.ts';
import { churnDays, snapshotDays } from '../../src/modules/predictions/labels.ts';
import { countEvents } from '../../src/modules/predictions/training.ts';
import { insertRow, BACKENDS, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

const TODAY = '2026-11-26';
const QUERY = { today: TODAY, horizonDays: 90, graceDays: 30, lookbackDays: 730 };

test('snapshot days run back every 30 days from the last day whose label is known', () => {
  const days = snapshotDays(QUERY);
  expect(days[0]).toBe('2026-07-29'); // today − 90 − 30
  expect(days[1]).toBe('2026-06-29');
  expect(days.at(-1)! >= '2024-11-26').toBe(true);
  expect(days).toHaveLength(21); // 610 days back to the lookback's start
});

for (const backend of BACKENDS) {
  describe(`churn labels (${backend})`, () => {
    let database: TestDatabase;
    let orgId: string;
    const id = (name: string) => `${name}_${orgId.slice(4, 14)}`;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      orgId = (await createOrgWithKey(database)).org.id;
      const db = database.db;
      const customer = (name: string, extra: Record<string, unknown> = {}) =>
        insertRow(db, 'customers', { id: id(name), org_id: orgId, name, currency: 'EUR', ...extra });
      const contract = (name: string, customer: string, terms: Record<string, unknown>) =>
        insertRow(db, 'contracts', {
          id: id(name),
          org_id: orgId,
          customer_id: id(customer),
          name,
          currency: 'EUR',
          billing_interval: 'year',
          amount: 100_000,
          ...terms,
        });
      for (const name of ['left', 'renewed', 'recent', 'evergreen', 'noticed']) await customer(name);
      await customer('marked', { status: 'churned', churned_at: '2026-03-15' });
      await contract('left1', 'left', { status: 'ended', start_date: '2025-01-01', end_date: '2025-12-31' });
      await contract('renewed1', 'renewed', { status: 'ended', start_date: '2025-01-01', end_date: '2025-12-31' });
      await contract('renewed2', 'renewed', { status: 'active', start_date: '2026-01-10', end_date: '2026-12-31' });
      await contract('marked1', 'marked', { status: 'ended', start_date: '2025-03-01', end_date: '2026-03-14' });
      await contract('recent1', 'recent', { status: 'ended', start_date: '2025-11-11', end_date: '2026-11-10' });
      await contract('evergreen1', 'evergreen', { status: 'active', start_date: '2025-02-01' });
      await contract('noticed1', 'noticed', { status: 'cancelled', start_date: '2025-01-01', cancelled_at: '2025-09-30' });
    });
    afterAll(() => database?.dispose());

    test('churn days: period ends without renewal, explicit marks once, nothing not yet known', async () => {
      const days = await churnDays(database.db, { orgId, today: TODAY, graceDays: 30 });
      expect(Object.fromEntries(days)).toEqual({
        [id('left')]: ['2026-01-01'],
        [id('marked')]: ['2026-03-15'],
        [id('noticed')]: ['2025-10-01'],
      });
    });

    test('a snapshot is positive when the churn falls within the horizon after it', async () => {
      const { rows: snapshots } = await gatherHistory(localRunner(database.db, historyUnits, DEFAULT_SETTINGS), {
        orgId,
        ...QUERY,
        days: snapshotDays(QUERY),
        maxCustomers: 25_000,
      });
      const of = (name: string) => snapshots.filter((s) => s.customerId === id(name));
      expect(
        of('left')
          .filter((s) => s.outcome === 1)
          .map((s) => [s.t, s.churnDay]),
      ).toEqual([
        ['2025-11-01', '2026-01-01'],
        ['2025-12-01', '2026-01-01'],
        ['2025-12-31', '2026-01-01'],
      ]);
      // Active on every snapshot day of 2025 (from 2025-01-01) and no later.
      expect(of('left').every((s) => s.t >= '2025-01-01' && s.t <= '2025-12-31')).toBe(true);
      expect(of('left').find((s) => s.t === '2025-10-02')!.outcome).toBe(0);
      expect(of('renewed').every((s) => s.outcome === 0)).toBe(true);
      expect(of('renewed').some((s) => s.t === '2026-01-30')).toBe(true);
      expect(of('recent').every((s) => s.outcome === 0)).toBe(true);
      // Not a customer any more after its churn: no snapshots after the mark.
      expect(of('marked').every((s) => s.t < '2026-03-15')).toBe(true);
      expect(
        of('marked')
          .filter((s) => s.outcome === 1)
          .map((s) => s.t),
      ).toEqual(['2025-12-31', '2026-01-30', '2026-03-01']);
      // Cancelled at 2025-09-30 without an end date: it counted until then, churned the day after;
      // no snapshot before that day knew of the cancellation.
      expect(
        of('noticed')
          .filter((s) => s.outcome === 1)
          .map((s) => [s.t, s.noticeKnown]),
      ).toEqual([
        ['2025-07-04', false],
        ['2025-08-03', false],
        ['2025-09-02', false],
      ]);
      expect(countEvents(snapshots)).toBe(3);
    });
  });
}
