// The mapping table as implemented (docs/billing.md "Mapping"), on the fixtures' subscription with
// one thing changed at a time: intervals, quantities, coupons, metered items, statuses, notice and
// immediate cancellation, and Stripe's shapes before and after 2025-03-31.
import { describe, expect, test } from 'bun:test';
import { earlierDaysOf, timelineOf } from '../../../src/modules/billing/apply.ts';
import { chargebeeSubscription, stripeCustomer, stripeInvoice, stripeSubscription } from '../../../src/modules/billing/mapping.ts';
import { billingFixture } from '../../helpers/billing.ts';

const base = () => structuredClone(billingFixture('stripe/customer.subscription.created.json').data.object);
const withPrice = (interval: string, count: number, unitAmount: number, quantity = 5) => {
  const sub = base();
  const item = sub.items.data[0];
  item.price.recurring = { ...item.price.recurring, interval, interval_count: count };
  item.price.unit_amount = unitAmount;
  item.quantity = quantity;
  return sub;
};

describe('Stripe subscription → contract', () => {
  test('monthly, quarterly, annual and weekly prices', () => {
    expect(stripeSubscription(withPrice('month', 1, 2000))).toMatchObject({ billingInterval: 'month', amount: 10000, seats: 5 });
    expect(stripeSubscription(withPrice('month', 3, 6000))).toMatchObject({ billingInterval: 'quarter', amount: 30000 });
    expect(stripeSubscription(withPrice('year', 1, 24000))).toMatchObject({ billingInterval: 'year', amount: 120000 });
    // 5 × 500 a week is 2,500 × 52 / 12 a month.
    expect(stripeSubscription(withPrice('week', 1, 500))).toMatchObject({ billingInterval: 'month', amount: 10833 });
  });

  test('metered items are left out of the amount and the seats', () => {
    const sub = base();
    const metered = structuredClone(sub.items.data[0]);
    metered.price.recurring.usage_type = 'metered';
    metered.price.unit_amount = 7;
    metered.quantity = undefined;
    sub.items.data.push(metered);
    expect(stripeSubscription(sub)).toMatchObject({ amount: 10000, seats: 5 });
  });

  test('a forever coupon lowers the amount; a once coupon does not; both shapes of the coupon', () => {
    const forever = base();
    forever.discounts = [{ source: { coupon: { duration: 'forever', percent_off: 20 } } }];
    expect(stripeSubscription(forever).amount).toBe(8000);
    const old = base();
    old.discount = { coupon: { duration: 'forever', amount_off: 1500 } };
    expect(stripeSubscription(old).amount).toBe(8500);
    const once = base();
    once.discounts = [{ source: { coupon: { duration: 'once', percent_off: 50 } } }];
    expect(stripeSubscription(once).amount).toBe(10000);
  });

  test('statuses: trial, incomplete, paused and unpaid are drafts; past_due still counts', () => {
    for (const status of ['trialing', 'incomplete', 'paused', 'unpaid', 'incomplete_expired']) {
      expect(stripeSubscription({ ...base(), status })).toMatchObject({ status: 'draft', billingStatus: status });
    }
    expect(stripeSubscription({ ...base(), status: 'past_due' })).toMatchObject({ status: 'active' });
  });

  test('notice at period end, a cancel_at date, and an immediate cancellation', () => {
    const notice = billingFixture('stripe/customer.subscription.updated.cancel-at-period-end.json').data.object;
    expect(stripeSubscription(notice)).toMatchObject({
      status: 'cancelled',
      cancelledAt: '2026-06-03',
      endDate: '2026-06-15',
      autoRenew: false,
    });
    expect(stripeSubscription({ ...base(), cancel_at: 1773565142 })).toMatchObject({ status: 'cancelled', endDate: '2026-03-15' });
    const immediate = { ...base(), status: 'canceled', canceled_at: 1770000000, ended_at: 1770000000 };
    const ended = stripeSubscription(immediate);
    expect(ended).toMatchObject({ status: 'ended', endDate: '2026-02-02', cancelledAt: '2026-02-02' });
    // Ended on the day notice was given: it stops at once.
    expect(ended.endDate! <= ended.cancelledAt!).toBe(true);
  });

  test('the shapes before 2025-03-31 give the same contract and invoice', () => {
    const legacy = billingFixture('stripe/legacy-2024-06-20/customer.subscription.updated.quantity.json').data.object;
    const current = billingFixture('stripe/customer.subscription.updated.quantity.json').data.object;
    expect(stripeSubscription(legacy)).toEqual(stripeSubscription(current));
    const oldInvoice = stripeInvoice(billingFixture('stripe/legacy-2024-06-20/invoice.paid.json').data.object);
    expect(oldInvoice).toEqual(stripeInvoice(billingFixture('stripe/invoice.paid.json').data.object));
    expect(oldInvoice).toMatchObject({ subscriptionExternalId: 'sub_1SmYhG2eZvKYlo2CkT0q3Nn7', status: 'paid', amountDue: 17023 });
  });

  test('a customer with no currency yet, and a deleted one', () => {
    const customer = billingFixture('stripe/customer.created.json').data.object;
    expect(stripeCustomer(customer, 1768467511)).toEqual({
      externalId: 'cus_TqR8vBLm2KdX1a',
      name: 'Acme Analytics GmbH',
      email: 'billing@acme-analytics.example',
      currency: null,
      deleted: false,
      deletedOn: null,
    });
    expect(stripeCustomer({ id: 'cus_x', deleted: true }, 1780000000)).toMatchObject({
      name: 'cus_x',
      deleted: true,
      deletedOn: '2026-05-28',
    });
  });
});

describe('Chargebee subscription → contract', () => {
  const sub = () => structuredClone(billingFixture('chargebee/subscription_changed.json').content.subscription);

  test('items give the amount (mrr only when they price nothing); annual; addons; charges left out', () => {
    expect(chargebeeSubscription(sub(), 0)).toMatchObject({ billingInterval: 'month', amount: 16000, seats: 8 });
    const annual = { ...sub(), billing_period_unit: 'year' };
    expect(chargebeeSubscription(annual, 0)).toMatchObject({ billingInterval: 'year', amount: 16000 });
    const more = sub();
    more.subscription_items.push({ item_type: 'addon', quantity: 1, amount: 500 }, { item_type: 'charge', quantity: 1, amount: 9900 });
    expect(chargebeeSubscription(more, 0)).toMatchObject({ amount: 16500, seats: 9 });
    expect(chargebeeSubscription({ ...sub(), subscription_items: [], mrr: 3000 }, 0)).toMatchObject({ amount: 3000 });
  });

  test('in_trial, future and paused are drafts; non_renewing is notice at cancel_schedule_created_at', () => {
    for (const status of ['in_trial', 'future', 'paused']) expect(chargebeeSubscription({ ...sub(), status }, 0).status).toBe('draft');
    const notice = billingFixture('chargebee/subscription_cancellation_scheduled.json').content.subscription;
    expect(chargebeeSubscription(notice, 0)).toMatchObject({ status: 'cancelled', cancelledAt: '2026-06-03', endDate: '2026-06-15' });
  });
});

describe('history from snapshots', () => {
  test('a subscription first seen ended ran from its start, got notice, then ended', () => {
    const ended = stripeSubscription(billingFixture('stripe/customer.subscription.deleted.json').data.object);
    expect(earlierDaysOf(ended).map((e) => [e.day, e.terms.status])).toEqual([
      ['2026-01-15', 'active'],
      ['2026-06-03', 'cancelled'],
      ['2026-06-15', 'ended'],
    ]);
  });

  test('two snapshots on one day: the later one holds that day', () => {
    const first = stripeSubscription(base());
    const second = { ...first, amount: 99 };
    expect(
      timelineOf([
        { terms: first, occurredAt: 1768467542 },
        { terms: second, occurredAt: 1768467600 },
      ]).map((e) => [e.day, e.terms.amount]),
    ).toEqual([['2026-01-15', 99]]);
  });
});
