// Billing events to records on each backend: the fixtures' story (Stripe and Chargebee) ends in
// one customer, one contract with its history at the billing system's dates, one invoice; the same
// events in order, reversed, shuffled and each twice end in the very same records and history;
// other-mode and unknown events are stored as ignored; a redelivery stores nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../../src/db/client.ts';
import { BACKENDS, insertRow, openTestDatabase, type TestDatabase } from '../../helpers/harness.ts';
import {
  applyAll,
  billingFixture,
  CHARGEBEE_STORY,
  makeBillingConnector,
  recordsOf,
  STRIPE_STORY,
  storeEvent,
} from '../../helpers/billing.ts';

const DAYS = { from: '2026-01-10', to: '2026-06-20' };

/** A seeded shuffle (mulberry32), so a failure can be run again. */
function shuffled<T>(items: T[], seed: number): T[] {
  let state = seed;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

for (const backend of BACKENDS) {
  describe(`billing events applied (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database?.dispose());

    /** Delivers `files` one by one (the apply job run after each), and answers the org's records. */
    async function deliver(platform: 'stripe' | 'chargebee', files: string[]) {
      const connector = await makeBillingConnector(database.db, { platform });
      for (const file of files) {
        await storeEvent(database.db, connector, billingFixture(file));
        await applyAll(database.db);
      }
      return { connector, records: await recordsOf(database.db, connector.orgId, DAYS) };
    }

    test('Stripe: the story in order gives the contract its revisions at the business dates', async () => {
      const { connector } = await deliver('stripe', STRIPE_STORY);
      const at = async (day: string) =>
        (
          await queryText<{ status: string; amount: string; seats: number; counted: boolean; cancelled_at: string | null }>(
            database.db,
            `select status, amount::text, seats, counted, cancelled_at::text from revintel_contracts_at($1, $2::date)`,
            [connector.orgId, day],
          )
        )[0];
      // Nothing of it before its start; on its last day an ended contract still counts (and reads active).
      expect(await at('2026-01-14')).toBeUndefined();
      expect(await at('2026-01-15')).toMatchObject({ status: 'active', amount: '10000', seats: 5, counted: true });
      expect(await at('2026-03-09')).toMatchObject({ amount: '10000', seats: 5 });
      expect(await at('2026-03-10')).toMatchObject({ amount: '16000', seats: 8 });
      expect(await at('2026-04-15')).toMatchObject({ status: 'active', amount: '16000', counted: true });
      expect(await at('2026-05-02')).toMatchObject({ amount: '28000', seats: 8 });
      expect(await at('2026-06-03')).toMatchObject({ status: 'cancelled', amount: '28000', cancelled_at: '2026-06-03', counted: true });
      expect(await at('2026-06-15')).toMatchObject({ counted: true });
      expect(await at('2026-06-16')).toMatchObject({ status: 'ended', counted: false });

      const [contract] = await queryText<Record<string, unknown>>(
        database.db,
        `select external_id, name, status, start_date::text, end_date::text, cancelled_at::text, amount::text, seats, billing_interval, auto_renew, currency,
                metadata->'billing'->>'status' as billing_status
         from contracts where org_id = $1`,
        [connector.orgId],
      );
      expect(contract).toEqual({
        external_id: 'sub_1SmYhG2eZvKYlo2CkT0q3Nn7',
        name: 'Business seat (monthly)',
        status: 'ended',
        start_date: '2026-01-15',
        end_date: '2026-06-15',
        cancelled_at: '2026-06-03',
        amount: '28000',
        seats: 8,
        billing_interval: 'month',
        auto_renew: false,
        currency: 'USD',
        billing_status: 'canceled',
      });
      const [customer] = await queryText<Record<string, unknown>>(
        database.db,
        `select external_id, name, email, currency, status from customers where org_id = $1`,
        [connector.orgId],
      );
      expect(customer).toEqual({
        external_id: 'cus_TqR8vBLm2KdX1a',
        name: 'Acme Analytics GmbH',
        email: 'billing@acme-analytics.example',
        currency: 'USD',
        status: 'active',
      });
      const [invoice] = await queryText<Record<string, unknown>>(
        database.db,
        `select i.number, i.status, i.amount_due::text, i.amount_paid::text, i.issued_at = to_timestamp(1773568931) as issued, k.external_id as contract
         from invoices i left join contracts k on k.id = i.contract_id where i.org_id = $1`,
        [connector.orgId],
      );
      expect(invoice).toEqual({
        number: '7FE1103-0003',
        status: 'paid',
        amount_due: '17023',
        amount_paid: '17023',
        issued: true,
        contract: 'sub_1SmYhG2eZvKYlo2CkT0q3Nn7',
      });
      // Every write was booked as a change of the customer's prediction inputs, like any other write.
      const [stale] = await queryText<{ n: number }>(database.db, `select count(*)::int as n from risk_input_changes where org_id = $1`, [
        connector.orgId,
      ]);
      expect(stale!.n).toBe(1);
    }, 120_000);

    for (const platform of ['stripe', 'chargebee'] as const) {
      test(`${platform}: in order, reversed, shuffled and each event twice end in the same records and history`, async () => {
        const story = platform === 'stripe' ? STRIPE_STORY : CHARGEBEE_STORY;
        const inOrder = (await deliver(platform, story)).records;
        expect(inOrder).toContain('"counted": true');
        const orders = [[...story].reverse(), shuffled(story, 7), shuffled(story, 42), story.flatMap((file) => [file, file])];
        for (const order of orders) {
          const { records } = await deliver(platform, order);
          expect({ order, records }).toEqual({ order, records: inOrder });
        }
      }, 240_000);
    }

    test('Chargebee: the notice is the day the cancellation was scheduled, the end its cancelled_at', async () => {
      const { connector } = await deliver('chargebee', CHARGEBEE_STORY);
      const rows = await queryText<{ day: string; status: string; amount: string; counted: boolean }>(
        database.db,
        `select d::date::text as day, r.status, r.amount::text, r.counted
         from unnest(array['2026-01-15', '2026-03-10', '2026-06-03', '2026-06-15', '2026-06-16']::date[]) d
         cross join lateral revintel_contracts_at($1, d) r order by 1`,
        [connector.orgId],
      );
      expect(rows).toEqual([
        { day: '2026-01-15', status: 'active', amount: '10000', counted: true },
        { day: '2026-03-10', status: 'active', amount: '16000', counted: true },
        { day: '2026-06-03', status: 'cancelled', amount: '28000', counted: true },
        { day: '2026-06-15', status: 'active', amount: '28000', counted: true },
        { day: '2026-06-16', status: 'ended', amount: '28000', counted: false },
      ]);
    }, 120_000);

    test("a subscription in another currency than its customer's is refused with the reason, never stored in the customer's", async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe' });
      // The customer came in earlier (an import) in EUR; Stripe bills its subscription in USD.
      await insertRow(database.db, 'customers', {
        id: `cus_${connector.id.slice(-12)}`,
        org_id: connector.orgId,
        external_id: 'cus_TqR8vBLm2KdX1a',
        name: 'Imported in euros',
        currency: 'EUR',
      });
      await storeEvent(database.db, connector, billingFixture('stripe/customer.subscription.created.json'));
      await applyAll(database.db);
      expect(await queryText(database.db, `select id from contracts where org_id = $1`, [connector.orgId])).toEqual([]);
      const [event] = await queryText<{ state: string; detail: string | null }>(
        database.db,
        `select state, detail from billing_events where connector_id = $1`,
        [connector.id],
      );
      expect(event!.state).not.toBe('applied');
      expect(event!.detail).toContain("currency USD is not the customer's currency EUR");
    }, 60_000);

    test('a redelivery stores nothing; an event of the other mode or of an unmapped type is stored as ignored', async () => {
      const connector = await makeBillingConnector(database.db, { platform: 'stripe', mode: 'live' });
      const created = billingFixture('stripe/customer.created.json');
      expect(await storeEvent(database.db, connector, created)).toMatchObject({ created: true, state: 'ignored' });
      expect(await storeEvent(database.db, connector, created)).toMatchObject({ created: false, state: 'ignored' });
      const live = { ...created, id: 'evt_live_1', livemode: true };
      expect(await storeEvent(database.db, connector, live)).toMatchObject({ created: true, state: 'pending' });
      const unknown = { ...live, id: 'evt_live_2', type: 'charge.refunded' };
      expect(await storeEvent(database.db, connector, unknown)).toMatchObject({ created: true, state: 'ignored' });
      await applyAll(database.db);
      const states = await queryText<{ event_id: string; state: string; detail: string | null }>(
        database.db,
        `select event_id, state, detail from billing_events where connector_id = $1 order by event_id`,
        [connector.id],
      );
      expect(states).toEqual([
        { event_id: created.id, state: 'ignored', detail: 'a test-mode event; this connector takes live mode' },
        { event_id: 'evt_live_1', state: 'applied', detail: null },
        { event_id: 'evt_live_2', state: 'ignored', detail: 'type charge.refunded is not synced' },
      ]);
    }, 60_000);
  });
}
