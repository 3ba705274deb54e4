// History rebuilt from invoices: a backfill reads a subscription as it is today (ended, at its last
// amount); its invoices' regular lines say what each past period billed. Upgraded in March and
// cancelled in June, it gets revisions at those dates, and a prediction's features at a day in April
// read the upgraded amount.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../../src/db/client.ts';
import { featuresAt } from '../../../src/modules/predictions/features.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../../helpers/harness.ts';
import { applyAll, billingFixture, makeBillingConnector, storeEvent } from '../../helpers/billing.ts';

const at = (day: string) => Date.parse(`${day}T09:00:00Z`) / 1000;
const READ_AT = at('2026-07-05');
const SUBSCRIPTION = 'sub_history0001';
const CUSTOMER = 'cus_history0001';

/** The subscription as a backfill reads it in July: 8 seats of $20, notice on June 10, ended June 30. */
function endedSubscription() {
  const object = structuredClone(billingFixture('stripe/customer.subscription.created.json').data.object);
  Object.assign(object, {
    id: SUBSCRIPTION,
    customer: CUSTOMER,
    status: 'canceled',
    start_date: at('2026-01-15'),
    created: at('2026-01-15'),
    canceled_at: at('2026-06-10'),
    ended_at: at('2026-06-30'),
  });
  object.items.data[0].quantity = 8;
  object.items.data[0].subscription = SUBSCRIPTION;
  return object;
}

/** An invoice of the period starting `day`: its regular line, and optionally a proration beside it. */
function invoice(day: string, seats: number, proration?: number) {
  const object = structuredClone(billingFixture('stripe/invoice.paid.json').data.object);
  const [prorationLine, , regular] = object.lines.data;
  const start = at(day);
  const details = (line: typeof regular, isProration: boolean) => ({
    ...line,
    parent: {
      ...line.parent,
      subscription_item_details: { ...line.parent.subscription_item_details, subscription: SUBSCRIPTION, proration: isProration },
    },
  });
  const lines = [{ ...details(regular, false), amount: 2000 * seats, quantity: seats, period: { start, end: start + 30 * 86400 } }];
  if (proration) lines.push({ ...details(prorationLine, true), amount: proration, period: { start: start - 5 * 86400, end: start } });
  Object.assign(object, {
    id: `in_history_${day}`,
    customer: CUSTOMER,
    status: 'paid',
    created: start,
    status_transitions: { ...object.status_transitions, finalized_at: start, paid_at: start },
    parent: { ...object.parent, subscription_details: { metadata: {}, subscription: SUBSCRIPTION } },
    lines: { object: 'list', data: lines, has_more: false },
  });
  return object;
}

const snapshot = (id: string, type: string, object: unknown) => ({
  id,
  object: 'event',
  type,
  created: READ_AT,
  livemode: false,
  data: { object },
});

for (const backend of BACKENDS) {
  describe(`history rebuilt from invoices (${backend})`, () => {
    let database: TestDatabase;
    let orgId: string;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      orgId = connector.orgId;
      // As a backfill stores them: the subscription, then its invoices, all read on July 5.
      await storeEvent(database.db, connector, snapshot('sync:sub', 'customer.subscription.updated', endedSubscription()));
      const invoices = [
        invoice('2026-01-15', 5),
        invoice('2026-02-15', 5),
        invoice('2026-03-15', 8, 2729),
        invoice('2026-04-15', 8),
        invoice('2026-05-15', 8),
        invoice('2026-06-15', 8),
      ];
      for (const object of invoices) await storeEvent(database.db, connector, snapshot(`sync:${object.id}`, 'invoice.updated', object));
      await applyAll(database.db);
    });
    afterAll(() => database?.dispose());

    const contractAt = async (day: string) =>
      (
        await queryText<{ status: string; amount: string; seats: number; counted: boolean }>(
          database.db,
          'select status, amount::text, seats, counted from revintel_contracts_at($1, $2::date)',
          [orgId, day],
        )
      )[0];

    test('the contract has revisions at the start, the upgrade, the notice and the end', async () => {
      const days = await queryText<{ valid_from: string }>(
        database.db,
        `select distinct r.valid_from::text as valid_from from contract_revisions r join contracts c on c.id = r.contract_id
         where c.org_id = $1 and c.external_id = $2 order by 1`,
        [orgId, SUBSCRIPTION],
      );
      expect(days.map((row) => row.valid_from)).toEqual(['2026-01-15', '2026-03-15', '2026-06-10', '2026-06-30']);
    });

    test('each day reads the amount billed for it: 5 seats until the upgrade, 8 after, the proration left out', async () => {
      expect(await contractAt('2026-02-20')).toMatchObject({ status: 'active', amount: '10000', seats: 5, counted: true });
      expect(await contractAt('2026-03-15')).toMatchObject({ status: 'active', amount: '16000', seats: 8 });
      expect(await contractAt('2026-06-12')).toMatchObject({ status: 'cancelled', amount: '16000', counted: true });
      expect(await contractAt('2026-07-01')).toMatchObject({ status: 'ended', counted: false });
    });

    test("a prediction's features at a day in April read the upgraded amount", async () => {
      const features = (day: string) =>
        featuresAt(database.db, { orgId, day, horizonDays: 90, population: 'active', graceDays: 0, labels: false });
      const [february] = await features('2026-02-20');
      const [april] = await features('2026-04-20');
      expect(april!.arr).toBe(february!.arr * 1.6);
      expect(april!.arr).toBeGreaterThan(0);
    });
  });
}
