// Two Stripe events about one subscription in the same second, saying different things: with the
// connector's API key the subscription as Stripe has it now decides which came last (the fake Stripe
// serves it); without one, the lifecycle order and then the event id decide.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText, type Db } from '../../../src/db/client.ts';
import type { BillingConnector } from '../../../src/db/schema/index.ts';
import { applyPendingEvents } from '../../../src/modules/billing/apply.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../../helpers/harness.ts';
import { billingFixture, makeBillingConnector, storeEvent } from '../../helpers/billing.ts';
import { TEST_SECRET_KEY } from '../../helpers/tickets.ts';
import { type FakeBillingApi, startFakeStripe } from '../../fakes/billing.ts';

const API_KEY = 'rk_test_revintel_tie_break_0001';
const created = billingFixture('stripe/customer.subscription.created.json');
const subscription = created.data.object;
const TIE = created.created + 10 * 86400;

/** The subscription with its one item at `quantity` seats. */
function withSeats(quantity: number) {
  const object = structuredClone(subscription);
  object.items.data[0].quantity = quantity;
  return object;
}
const updated = (id: string, quantity: number) => ({
  ...created,
  id,
  type: 'customer.subscription.updated',
  created: TIE,
  data: { object: withSeats(quantity) },
});

for (const backend of BACKENDS) {
  describe(`Stripe ties within a second (${backend})`, () => {
    let database: TestDatabase;
    let stripe: FakeBillingApi;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
      // Stripe has the subscription at 3 seats: the event saying 3 came last.
      stripe = startFakeStripe({ apiKey: API_KEY, customers: [], subscriptions: [withSeats(3)], invoices: [] });
    });
    afterAll(async () => {
      stripe?.stop();
      await database?.dispose();
    });

    /** The subscription created, then updated twice in one second (3 seats in evt_A, 7 in evt_B). */
    async function deliverTie(connector: BillingConnector, options: { reread: boolean }) {
      for (const event of [created, updated('evt_tieA', 3), updated('evt_tieB', 7)]) await storeEvent(database.db, connector, event);
      await database.db.transaction((tx) =>
        applyPendingEvents(
          tx as unknown as Db,
          connector.id,
          options.reread ? { stripeApiBase: stripe.url, secretKey: TEST_SECRET_KEY } : {},
        ),
      );
      const [contract] = await queryText<{ seats: number }>(database.db, 'select seats from contracts where org_id = $1', [
        connector.orgId,
      ]);
      return contract?.seats;
    }

    test('with an API key, the subscription re-read from Stripe decides: the 3-seat event came last', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe', apiKey: API_KEY });
      const before = stripe.requests();
      expect(await deliverTie(connector, { reread: true })).toBe(3);
      expect(stripe.requests()).toBeGreaterThan(before);
    });

    test('without an API key, the lifecycle order then the event id decide: evt_tieB (7 seats) came last', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      expect(await deliverTie(connector, { reread: true })).toBe(7);
    });
  });
}
