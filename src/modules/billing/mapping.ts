// What a billing system's objects are in our records (docs/billing.md "Mapping"): pure functions of
// one snapshot, for Stripe (both the shapes before and after its 2025-03-31 API version, told apart
// by the fields present, never by `api_version`) and Chargebee (Product Catalog 2.0). Amounts are
// integers in minor units; a contract's amount is per its billing interval.
import type { BillingInterval, ContractStatus } from '../../db/schema/index.ts';
import {
  idOf,
  type ChargebeeCustomer,
  type ChargebeeInvoice,
  type ChargebeeSubscription,
  type StripeCustomer,
  type StripeDiscount,
  type StripeInvoice,
  type StripeSubscription,
} from './payloads.ts';

export interface CustomerTerms {
  externalId: string;
  name: string;
  email: string | null;
  /** Null when the platform has none yet (a Stripe customer before its first priced object). */
  currency: string | null;
  deleted: boolean;
  /** The day the billing system deleted it, when it did. */
  deletedOn: string | null;
}

/** A contract's terms: the fields a revision records, and the name and billing status beside them. */
export interface ContractTerms {
  externalId: string;
  customerExternalId: string;
  name: string;
  status: ContractStatus;
  startDate: string;
  endDate: string | null;
  autoRenew: boolean;
  billingInterval: BillingInterval;
  amount: number;
  currency: string;
  seats: number | null;
  cancelledAt: string | null;
  /** The platform's own status, kept in the contract's metadata (a draft says why). */
  billingStatus: string;
}

export interface InvoiceTerms {
  externalId: string;
  customerExternalId: string;
  subscriptionExternalId: string | null;
  number: string | null;
  status: 'draft' | 'open' | 'paid' | 'void' | 'uncollectible';
  currency: string;
  amountDue: number;
  amountPaid: number;
  issuedAt: string;
  dueDate: string | null;
  paidAt: string | null;
}

/** The UTC day of a Unix time in seconds. */
export const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
/** The last day of a period that ends at `seconds` (exclusive: a period ending at midnight ends the day before). */
export const lastDayBefore = (seconds: number) => dayOf(seconds - 1);
const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString();
const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** A price's interval in months (week and day as the average month holds them). */
function monthsOf(unit: string, count: number): number {
  if (unit === 'year') return 12 * count;
  if (unit === 'week') return (count * 12) / 52;
  if (unit === 'day') return (count * 12) / 365;
  return count;
}

/** month×1, month×3 and year×1 are ours; any other interval is booked monthly. */
function contractInterval(unit: string, count: number): BillingInterval {
  if (unit === 'month' && count === 3) return 'quarter';
  if (unit === 'year' && count === 1) return 'year';
  return 'month';
}
const INTERVAL_MONTHS: Record<BillingInterval, number> = { month: 1, quarter: 3, year: 12 };

// ---------------------------------------------------------------------------------------------- Stripe

export function stripeCustomer(object: StripeCustomer, occurredAt: number): CustomerTerms {
  return {
    externalId: object.id,
    name: str(object.name) ?? str(object.email) ?? object.id,
    email: str(object.email),
    currency: str(object.currency)?.toUpperCase() ?? null,
    deleted: object.deleted === true,
    deletedOn: object.deleted === true ? dayOf(occurredAt) : null,
  };
}

/** The coupon of a discount: `source.coupon` from 2025-09-30, `coupon` before. */
const couponOf = (discount: StripeDiscount | string) => {
  if (typeof discount === 'string') return null; // not expanded: its duration is unknown, so not forever
  const coupon = discount.source?.coupon ?? discount.coupon;
  return typeof coupon === 'object' ? coupon : null;
};

/** Stripe's MRR rule: licensed items' unit_amount × quantity, normalised to the contract's interval,
 * less discounts that last forever; metered items, once/repeating coupons and tax left out. */
export function stripeSubscription(object: StripeSubscription): ContractTerms {
  const items = object.items?.data ?? [];
  const licensed = items.filter((item) => {
    const recurring = item.price?.recurring ?? item.plan;
    return (recurring?.usage_type ?? 'licensed') === 'licensed';
  });
  const first = licensed[0] ?? items[0];
  const firstRecurring = first?.price?.recurring ?? first?.plan ?? object.plan ?? {};
  const interval = contractInterval(String(firstRecurring.interval ?? 'month'), num(firstRecurring.interval_count) ?? 1);
  let perMonth = 0;
  let seats = 0;
  for (const item of licensed) {
    const recurring = item.price?.recurring ?? item.plan ?? {};
    const unitAmount = num(item.price?.unit_amount) ?? num(item.plan?.amount);
    const quantity = num(item.quantity) ?? 1;
    seats += quantity;
    if (unitAmount === null) continue; // tiered prices have none: not counted (docs/billing.md)
    perMonth += (unitAmount * quantity) / monthsOf(String(recurring.interval ?? 'month'), num(recurring.interval_count) ?? 1);
  }
  let amount = perMonth * INTERVAL_MONTHS[interval];
  const discounts = [...(object.discounts ?? []), ...(object.discount ? [object.discount] : [])];
  for (const discount of discounts) {
    const coupon = couponOf(discount);
    if (coupon?.duration !== 'forever') continue;
    const percentOff = num(coupon.percent_off);
    const amountOff = num(coupon.amount_off);
    if (percentOff !== null) amount *= 1 - percentOff / 100;
    else if (amountOff !== null) amount -= amountOff;
  }
  const periodEnds = items.map((item) => num(item.current_period_end)).filter((n): n is number => n !== null);
  const periodEnd = periodEnds.length > 0 ? Math.max(...periodEnds) : num(object.current_period_end);
  const price = first?.price ?? first?.plan ?? object.plan ?? {};
  const product = typeof price.product === 'object' && price.product !== null ? str(price.product.name) : null;
  const status = String(object.status ?? 'active');
  const noticeGiven = object.cancel_at_period_end === true || num(object.cancel_at) !== null;
  const startDate = dayOf(num(object.start_date) ?? num(object.created) ?? 0);
  const base = {
    externalId: object.id,
    customerExternalId: String(idOf(object.customer)),
    name: product ?? str(price.nickname) ?? str(price.id) ?? 'Subscription',
    startDate,
    billingInterval: interval,
    amount: Math.max(0, Math.round(amount)),
    currency: String(object.currency ?? price.currency ?? '').toUpperCase(),
    seats: licensed.length > 0 ? seats : null,
    billingStatus: status,
  };
  const atLeastStart = (day: string) => (day < startDate ? startDate : day);
  if (status === 'canceled') {
    const ended = num(object.ended_at) ?? num(object.canceled_at) ?? 0;
    return {
      ...base,
      status: 'ended',
      endDate: atLeastStart(dayOf(ended)),
      autoRenew: false,
      cancelledAt: dayOf(num(object.canceled_at) ?? ended),
    };
  }
  const periodLastDay = periodEnd !== null ? atLeastStart(lastDayBefore(periodEnd)) : null;
  if ((status === 'active' || status === 'past_due') && noticeGiven) {
    const cancelAt = num(object.cancel_at);
    return {
      ...base,
      status: 'cancelled',
      endDate: cancelAt !== null ? atLeastStart(lastDayBefore(cancelAt)) : periodLastDay,
      autoRenew: false,
      cancelledAt: dayOf(num(object.canceled_at) ?? num(object.created) ?? 0),
    };
  }
  return {
    ...base,
    status: status === 'active' || status === 'past_due' ? 'active' : 'draft',
    endDate: periodLastDay,
    autoRenew: !noticeGiven,
    cancelledAt: null,
  };
}

const INVOICE_STATUSES: readonly InvoiceTerms['status'][] = ['draft', 'open', 'paid', 'void', 'uncollectible'];
const isInvoiceStatus = (value: unknown): value is InvoiceTerms['status'] => INVOICE_STATUSES.some((status) => status === value);

export function stripeInvoice(object: StripeInvoice): InvoiceTerms {
  const transitions = object.status_transitions ?? {};
  const issued = num(transitions.finalized_at) ?? num(object.effective_at) ?? num(object.created) ?? 0;
  const paidAt = num(transitions.paid_at);
  const dueDate = num(object.due_date);
  return {
    externalId: object.id,
    customerExternalId: String(idOf(object.customer)),
    subscriptionExternalId: idOf(object.parent?.subscription_details?.subscription) ?? idOf(object.subscription),
    number: str(object.number),
    status: isInvoiceStatus(object.status) ? object.status : 'draft',
    currency: String(object.currency ?? '').toUpperCase(),
    amountDue: Math.max(0, num(object.amount_due) ?? 0),
    amountPaid: Math.max(0, num(object.amount_paid) ?? 0),
    issuedAt: isoOf(issued),
    dueDate: dueDate !== null ? dayOf(dueDate) : null,
    paidAt: paidAt !== null ? isoOf(paidAt) : null,
  };
}

// ------------------------------------------------------------------------------------------- Chargebee

export function chargebeeCustomer(object: ChargebeeCustomer, occurredAt: number): CustomerTerms {
  const person = [str(object.first_name), str(object.last_name)].filter(Boolean).join(' ');
  return {
    externalId: object.id,
    name: str(object.company) ?? (person || null) ?? str(object.email) ?? object.id,
    email: str(object.email),
    currency: str(object.preferred_currency_code)?.toUpperCase() ?? null,
    deleted: object.deleted === true,
    deletedOn: object.deleted === true ? dayOf(occurredAt) : null,
  };
}

/** Chargebee's items give the amount (its `mrr` is optional and shown as 0 on active samples: used
 * only when the items price nothing). */
export function chargebeeSubscription(object: ChargebeeSubscription, occurredAt: number): ContractTerms {
  const unit = String(object.billing_period_unit ?? 'month');
  const count = num(object.billing_period) ?? 1;
  const interval = contractInterval(unit, count);
  const items = object.subscription_items ?? [];
  const recurring = items.filter(
    (item) => (item.item_type === 'plan' || item.item_type === 'addon') && !Number(item.metered_quantity ?? 0),
  );
  let perPeriod = 0;
  let seats = 0;
  for (const item of recurring) {
    const quantity = num(item.quantity) ?? 1;
    seats += quantity;
    perPeriod += num(item.amount) ?? (num(item.unit_price) ?? 0) * quantity;
  }
  let amount = (perPeriod / monthsOf(unit, count)) * INTERVAL_MONTHS[interval];
  const mrr = num(object.mrr) ?? 0;
  if (amount === 0 && mrr > 0) amount = mrr * INTERVAL_MONTHS[interval];
  const status = String(object.status ?? 'active');
  const startDate = dayOf(num(object.started_at) ?? num(object.activated_at) ?? num(object.start_date) ?? num(object.created_at) ?? 0);
  const atLeastStart = (day: string) => (day < startDate ? startDate : day);
  const termEnd = num(object.contract_term?.contract_end) ?? num(object.current_term_end);
  const first = recurring[0] ?? items[0];
  const base = {
    externalId: object.id,
    customerExternalId: object.customer_id,
    name: str(first?.item_price_id) ?? str(object.plan_id) ?? 'Subscription',
    startDate,
    billingInterval: interval,
    amount: Math.max(0, Math.round(amount)),
    currency: String(object.currency_code ?? '').toUpperCase(),
    seats: recurring.length > 0 ? seats : null,
    billingStatus: status,
  };
  const cancelledAt = num(object.cancelled_at);
  if (status === 'cancelled' || status === 'transferred') {
    const ended = cancelledAt ?? occurredAt;
    return {
      ...base,
      status: 'ended',
      endDate: atLeastStart(dayOf(ended)),
      autoRenew: false,
      cancelledAt: dayOf(num(object.cancel_schedule_created_at) ?? ended),
    };
  }
  if (status === 'non_renewing') {
    // cancelled_at is when it will end; the notice is cancel_schedule_created_at.
    return {
      ...base,
      status: 'cancelled',
      endDate:
        cancelledAt !== null ? atLeastStart(lastDayBefore(cancelledAt)) : termEnd !== null ? atLeastStart(lastDayBefore(termEnd)) : null,
      autoRenew: false,
      cancelledAt: dayOf(num(object.cancel_schedule_created_at) ?? occurredAt),
    };
  }
  return {
    ...base,
    status: status === 'active' ? 'active' : 'draft',
    endDate: termEnd !== null ? atLeastStart(lastDayBefore(termEnd)) : null,
    autoRenew: object.contract_term?.action_at_term_end !== 'cancel',
    cancelledAt: null,
  };
}

const CHARGEBEE_INVOICE_STATUS: Record<string, InvoiceTerms['status']> = {
  paid: 'paid',
  posted: 'open',
  payment_due: 'open',
  not_paid: 'uncollectible',
  voided: 'void',
  pending: 'draft',
};

export function chargebeeInvoice(object: ChargebeeInvoice): InvoiceTerms {
  const lines = object.line_items ?? [];
  const dueDate = num(object.due_date);
  const paidAt = num(object.paid_at);
  return {
    externalId: object.id,
    customerExternalId: object.customer_id,
    subscriptionExternalId: str(object.subscription_id) ?? str(lines.find((line) => str(line.subscription_id))?.subscription_id),
    number: object.id,
    status: CHARGEBEE_INVOICE_STATUS[String(object.status)] ?? 'open',
    currency: String(object.currency_code ?? '').toUpperCase(),
    amountDue: Math.max(0, num(object.total) ?? 0),
    amountPaid: Math.max(0, num(object.amount_paid) ?? 0),
    issuedAt: isoOf(num(object.date) ?? num(object.generated_at) ?? 0),
    dueDate: dueDate !== null ? dayOf(dueDate) : null,
    paidAt: paidAt !== null ? isoOf(paidAt) : null,
  };
}

// ------------------------------------------------------------------------------ Billed amounts (history)

/** What an invoice billed a subscription for one period: the amount and seats of its regular lines. */
export interface BilledPeriod {
  /** The period's first day. */
  day: string;
  amount: number;
  seats: number | null;
}

const BILLED_STATUSES = new Set(['open', 'paid', 'uncollectible']);

/** Sums lines by the day their period starts. */
function byPeriodStart(lines: { start: number; amount: number; quantity: number | null }[]): BilledPeriod[] {
  const days = new Map<string, BilledPeriod>();
  for (const line of lines) {
    const day = dayOf(line.start);
    const period = days.get(day) ?? { day, amount: 0, seats: null };
    period.amount += line.amount;
    if (line.quantity !== null) period.seats = (period.seats ?? 0) + line.quantity;
    days.set(day, period);
  }
  return [...days.values()];
}

/** A Stripe invoice's regular lines of `subscriptionId` (prorations, invoice items and drafts or
 * voided invoices left out): `parent.subscription_item_details` from 2025-03-31, `type:
 * subscription` with `subscription` before. Amounts exclude tax and discounts, as the lines do. */
export function stripeBilledPeriods(invoice: StripeInvoice, subscriptionId: string): BilledPeriod[] {
  if (!BILLED_STATUSES.has(invoice.status ?? '')) return [];
  const lines = (invoice.lines?.data ?? []).flatMap((line) => {
    const details = line.parent?.subscription_item_details;
    const subscription = details ? idOf(details.subscription) : line.type === 'subscription' ? idOf(line.subscription) : null;
    const proration = details ? details.proration === true : line.proration === true;
    const amount = num(line.amount);
    const start = num(line.period?.start);
    if (subscription !== subscriptionId || proration || amount === null || start === null) return [];
    return [{ start, amount, quantity: num(line.quantity) }];
  });
  return byPeriodStart(lines);
}

/** Chargebee marks no line as a proration: a line counts when it covers a whole month or more
 * (27 days at least), so the prorated charges of a mid-period change are left out. */
const MIN_PERIOD_SECONDS = 27 * 86400;

export function chargebeeBilledPeriods(invoice: ChargebeeInvoice, subscriptionId: string): BilledPeriod[] {
  if (!BILLED_STATUSES.has(CHARGEBEE_INVOICE_STATUS[String(invoice.status)] ?? 'open')) return [];
  const lines = (invoice.line_items ?? []).flatMap((line) => {
    const subscription = str(line.subscription_id) ?? str(invoice.subscription_id);
    const start = num(line.date_from);
    const end = num(line.date_to);
    const amount = num(line.amount);
    const recurring = line.entity_type === undefined || line.entity_type === null || /plan|addon/.test(line.entity_type);
    if (subscription !== subscriptionId || !recurring || start === null || end === null || amount === null) return [];
    if (end - start < MIN_PERIOD_SECONDS) return [];
    return [{ start, amount, quantity: num(line.quantity) }];
  });
  return byPeriodStart(lines);
}
