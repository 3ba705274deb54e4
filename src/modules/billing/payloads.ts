// The billing platforms' payloads as TypeBox schemas, per platform and per kind of object: what the
// webhook validates before storing (a 400 naming the first wrong field), what a backfill's pages are
// checked against, and what the mapping reads typed. Schemas name only the fields we read and leave
// the rest open (platforms add fields without notice); nullable wherever the platform sends null.
// Stripe's expandable references (`customer`, `subscription`, a price's `product`, `discounts[]`)
// arrive as an id or as the object.
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Type as t } from '@sinclair/typebox';
import type { BillingObjectType, BillingPlatform } from '../../db/schema/index.ts';
import { isJsonObject, payloadCheck } from '../signed-webhooks/payload.ts';

const open = { additionalProperties: true } as const;
/** A field the platform may leave out or send as null. */
const maybe = <T extends TSchema>(schema: T) => t.Optional(t.Union([schema, t.Null()]));
const text = t.String();
const count = t.Number();
const flag = t.Boolean();
const objectId = t.String({ minLength: 1, maxLength: 255 });
/** An expandable reference: the id, or the object with its id. */
const reference = t.Union([t.String(), t.Object({ id: t.String() }, open)]);

// ---------------------------------------------------------------------------------------------- Stripe

const StripeRecurring = t.Object({ interval: maybe(text), interval_count: maybe(count), usage_type: maybe(text) }, open);
const StripeProduct = t.Union([t.String(), t.Object({ name: maybe(text) }, open)]);
const StripePrice = t.Object(
  {
    id: maybe(text),
    nickname: maybe(text),
    unit_amount: maybe(count),
    currency: maybe(text),
    recurring: maybe(StripeRecurring),
    product: maybe(StripeProduct),
  },
  open,
);
/** The legacy `plan` beside (or instead of) `price`. */
const StripePlan = t.Object(
  {
    id: maybe(text),
    nickname: maybe(text),
    amount: maybe(count),
    currency: maybe(text),
    interval: maybe(text),
    interval_count: maybe(count),
    usage_type: maybe(text),
    product: maybe(StripeProduct),
  },
  open,
);
const StripeItem = t.Object(
  {
    id: maybe(text),
    quantity: maybe(count),
    price: maybe(StripePrice),
    plan: maybe(StripePlan),
    current_period_start: maybe(count),
    current_period_end: maybe(count),
  },
  open,
);
const StripeCoupon = t.Object({ duration: maybe(text), percent_off: maybe(count), amount_off: maybe(count) }, open);
const StripeDiscount = t.Object(
  {
    coupon: maybe(t.Union([t.String(), StripeCoupon])),
    source: maybe(t.Object({ coupon: maybe(t.Union([t.String(), StripeCoupon])) }, open)),
  },
  open,
);

export const StripeCustomer = t.Object(
  { id: objectId, name: maybe(text), email: maybe(text), currency: maybe(text), deleted: maybe(flag) },
  open,
);
export type StripeCustomer = Static<typeof StripeCustomer>;

export const StripeSubscription = t.Object(
  {
    id: objectId,
    customer: reference,
    status: maybe(text),
    currency: maybe(text),
    items: maybe(t.Object({ data: t.Array(StripeItem) }, open)),
    plan: maybe(StripePlan),
    discount: maybe(StripeDiscount),
    discounts: maybe(t.Array(t.Union([t.String(), StripeDiscount]))),
    cancel_at_period_end: maybe(flag),
    cancel_at: maybe(count),
    canceled_at: maybe(count),
    ended_at: maybe(count),
    start_date: maybe(count),
    created: maybe(count),
    current_period_end: maybe(count),
  },
  open,
);
export type StripeSubscription = Static<typeof StripeSubscription>;
export type StripeItem = Static<typeof StripeItem>;
export type StripeDiscount = Static<typeof StripeDiscount>;

/** An invoice line: a subscription's (`parent.subscription_item_details`, or `subscription` and
 * `type: subscription` before 2025-03-31), a proration, or an invoice item. */
const StripeLine = t.Object(
  {
    amount: maybe(count),
    quantity: maybe(count),
    type: maybe(text),
    proration: maybe(flag),
    subscription: maybe(reference),
    period: maybe(t.Object({ start: count, end: count }, open)),
    parent: maybe(
      t.Object({ subscription_item_details: maybe(t.Object({ subscription: maybe(reference), proration: maybe(flag) }, open)) }, open),
    ),
  },
  open,
);
export type StripeLine = Static<typeof StripeLine>;

export const StripeInvoice = t.Object(
  {
    id: objectId,
    customer: maybe(reference),
    subscription: maybe(reference),
    parent: maybe(t.Object({ subscription_details: maybe(t.Object({ subscription: maybe(reference) }, open)) }, open)),
    number: maybe(text),
    status: maybe(text),
    currency: maybe(text),
    amount_due: maybe(count),
    amount_paid: maybe(count),
    created: maybe(count),
    effective_at: maybe(count),
    due_date: maybe(count),
    status_transitions: maybe(t.Object({ finalized_at: maybe(count), paid_at: maybe(count) }, open)),
    lines: maybe(t.Object({ data: t.Array(StripeLine), has_more: maybe(flag) }, open)),
  },
  open,
);
export type StripeInvoice = Static<typeof StripeInvoice>;

/** Every Stripe event: what it is, when, which mode, and its object (checked per kind after). */
export const StripeEvent = t.Object(
  {
    id: objectId,
    type: t.String({ maxLength: 200 }),
    created: count,
    object: t.Optional(text),
    livemode: maybe(flag),
    data: t.Object({ object: t.Record(t.String(), t.Unknown()) }, open),
  },
  open,
);
export type StripeEvent = Static<typeof StripeEvent>;

// ------------------------------------------------------------------------------------------- Chargebee

export const ChargebeeCustomer = t.Object(
  {
    id: objectId,
    company: maybe(text),
    first_name: maybe(text),
    last_name: maybe(text),
    email: maybe(text),
    preferred_currency_code: maybe(text),
    deleted: maybe(flag),
    resource_version: maybe(count),
  },
  open,
);
export type ChargebeeCustomer = Static<typeof ChargebeeCustomer>;

const ChargebeeItem = t.Object(
  {
    item_price_id: maybe(text),
    item_type: maybe(text),
    quantity: maybe(count),
    amount: maybe(count),
    unit_price: maybe(count),
    // Chargebee documents it as a string of a decimal; older sites send a number.
    metered_quantity: maybe(t.Union([text, count])),
  },
  open,
);

export const ChargebeeSubscription = t.Object(
  {
    id: objectId,
    customer_id: objectId,
    status: maybe(text),
    plan_id: maybe(text),
    currency_code: maybe(text),
    billing_period: maybe(count),
    billing_period_unit: maybe(text),
    subscription_items: maybe(t.Array(ChargebeeItem)),
    mrr: maybe(count),
    started_at: maybe(count),
    activated_at: maybe(count),
    start_date: maybe(count),
    created_at: maybe(count),
    current_term_end: maybe(count),
    contract_term: maybe(t.Object({ contract_end: maybe(count), action_at_term_end: maybe(text) }, open)),
    cancelled_at: maybe(count),
    cancel_schedule_created_at: maybe(count),
    resource_version: maybe(count),
  },
  open,
);
export type ChargebeeSubscription = Static<typeof ChargebeeSubscription>;

const ChargebeeLine = t.Object(
  {
    subscription_id: maybe(text),
    entity_type: maybe(text),
    date_from: maybe(count),
    date_to: maybe(count),
    amount: maybe(count),
    quantity: maybe(count),
  },
  open,
);
export type ChargebeeLine = Static<typeof ChargebeeLine>;

export const ChargebeeInvoice = t.Object(
  {
    id: objectId,
    customer_id: objectId,
    subscription_id: maybe(text),
    line_items: maybe(t.Array(ChargebeeLine)),
    status: maybe(text),
    currency_code: maybe(text),
    total: maybe(count),
    amount_paid: maybe(count),
    date: maybe(count),
    generated_at: maybe(count),
    due_date: maybe(count),
    paid_at: maybe(count),
    resource_version: maybe(count),
  },
  open,
);
export type ChargebeeInvoice = Static<typeof ChargebeeInvoice>;

export const ChargebeeEvent = t.Object(
  {
    id: objectId,
    object: t.Optional(text),
    event_type: t.String({ maxLength: 200 }),
    occurred_at: count,
    content: t.Record(t.String(), t.Unknown()),
  },
  open,
);
export type ChargebeeEvent = Static<typeof ChargebeeEvent>;

// --------------------------------------------------------------------------------------------- Checks

export const stripeObjects = {
  customer: payloadCheck(StripeCustomer, 'Stripe customer'),
  subscription: payloadCheck(StripeSubscription, 'Stripe subscription'),
  invoice: payloadCheck(StripeInvoice, 'Stripe invoice'),
};
export const chargebeeObjects = {
  customer: payloadCheck(ChargebeeCustomer, 'Chargebee customer'),
  subscription: payloadCheck(ChargebeeSubscription, 'Chargebee subscription'),
  invoice: payloadCheck(ChargebeeInvoice, 'Chargebee invoice'),
};
/** A list page: Stripe's `data` newest first with `has_more`; Chargebee's `list` of wrapped objects with `next_offset`. */
export const stripeList = payloadCheck(t.Object({ data: t.Array(t.Unknown()), has_more: maybe(flag) }, open), 'Stripe list');
export const chargebeeList = payloadCheck(
  t.Object({ list: t.Array(t.Record(t.String(), t.Unknown())), next_offset: maybe(text) }, open),
  'Chargebee list',
);

const compiledChargebeeCustomer = TypeCompiler.Compile(ChargebeeCustomer);
/** Whether a copy of a customer (what Chargebee's subscription events carry) is one. */
export const isChargebeeCustomer = (value: unknown): value is ChargebeeCustomer => compiledChargebeeCustomer.Check(value);
const checkStripeEvent = payloadCheck(StripeEvent, 'Stripe event');
const checkChargebeeEvent = payloadCheck(ChargebeeEvent, 'Chargebee event');

// Stripe's `created` is in seconds and one action often yields several events in the same second:
// within a second, an object's events are ordered by where their type falls in its lifecycle. The
// types listed are the ones the sync maps.
export const STRIPE_LIFECYCLE: Record<string, number> = {
  'customer.created': 1,
  'customer.updated': 2,
  'customer.deleted': 9,
  'customer.subscription.created': 1,
  'customer.subscription.trial_will_end': 2,
  'customer.subscription.updated': 3,
  'customer.subscription.pending_update_applied': 3,
  'customer.subscription.pending_update_expired': 3,
  'customer.subscription.paused': 4,
  'customer.subscription.resumed': 5,
  'customer.subscription.deleted': 9,
  'invoice.created': 1,
  'invoice.updated': 2,
  'invoice.finalized': 3,
  'invoice.payment_failed': 4,
  'invoice.overdue': 4,
  'invoice.marked_uncollectible': 5,
  'invoice.payment_succeeded': 6,
  'invoice.paid': 7,
  'invoice.voided': 8,
  'invoice.deleted': 9,
};

export type BillingEventBody = { platform: 'stripe'; event: StripeEvent } | { platform: 'chargebee'; event: ChargebeeEvent };

/** The kind of object an event type is a snapshot of (null: a type the sync does not map). */
export function objectTypeOf(platform: BillingPlatform, type: string): BillingObjectType | null {
  if (platform === 'stripe') {
    if (STRIPE_LIFECYCLE[type] === undefined) return null;
    return type.startsWith('customer.subscription.') ? 'subscription' : type.startsWith('invoice.') ? 'invoice' : 'customer';
  }
  if (type.startsWith('subscription_')) return 'subscription';
  if (type.startsWith('customer_')) return 'customer';
  if (type.startsWith('invoice_') || type === 'payment_succeeded') return 'invoice';
  return null;
}

/** An expandable reference's id (the id itself, or the expanded object's). */
export const idOf = (value: unknown): string | null =>
  typeof value === 'string' && value !== ''
    ? value
    : isJsonObject(value) && typeof value.id === 'string' && value.id !== ''
      ? value.id
      : null;

/** The object a stored or received event carries, untyped until checked against its kind. */
export function eventObject(body: BillingEventBody, kind: BillingObjectType): unknown {
  return body.platform === 'stripe' ? body.event.data.object : body.event.content[kind];
}

/**
 * A body as its platform's event: the envelope, then the object of the kind its type names (an
 * event of a type we do not map is checked only as an envelope: it is stored as ignored). Throws the
 * 400 naming the first wrong field.
 */
export function checkBillingEvent(platform: BillingPlatform, body: unknown): BillingEventBody {
  if (platform === 'stripe') {
    const event = checkStripeEvent(body);
    const kind = objectTypeOf('stripe', event.type);
    // An event with no object id is stored as ignored (events.ts); any other object is checked.
    if (kind && idOf(event.data.object.id)) stripeObjects[kind](event.data.object);
    return { platform, event };
  }
  const event = checkChargebeeEvent(body);
  const kind = objectTypeOf('chargebee', event.event_type);
  const object = kind ? event.content[kind] : undefined;
  if (kind && isJsonObject(object)) chargebeeObjects[kind](object);
  return { platform, event };
}
