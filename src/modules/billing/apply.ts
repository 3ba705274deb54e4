// Bringing the records up to date with a connector's stored events (docs/billing.md "Order and
// history"). Nothing here trusts arrival order: each object an event touched is rebuilt from ALL of
// its stored snapshots, sorted by the platform's own order (Stripe: `created`, then the type's place
// in the lifecycle; Chargebee: `resource_version`), so a redelivery, a late event or a shuffled
// sequence ends in the same records as the events in order.
// - a customer is its newest snapshot (a subscription or invoice seen first makes it from what they
//   say: its id and currency), churned when the billing system deleted it and nothing of it counts;
// - a subscription is a timeline of terms at the billing system's business dates (start, each
//   change, the notice, the end), written as contract revisions at those dates; a late event that
//   changes the past appends the timeline again from the first day it differs (the revision log is
//   append-only and the newest revision holding on a day wins, so the appended run is what reads see);
// - an invoice is its newest snapshot, linked to its subscription's contract once that exists.
import { transaction } from '../../db/transaction.ts';
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { nextSizeByTime } from '../../db/units-of-work.ts';
import type { BillingConnector, BillingObjectType } from '../../db/schema/index.ts';
import { AppError, messageOf } from '../../lib/errors.ts';
import { openSecret } from '../../lib/secret-box.ts';
import { writeContracts } from '../contracts/service.ts';
import { writeCustomers } from '../customers/service.ts';
import { writeInvoices } from '../invoices/service.ts';
import {
  type BilledPeriod,
  chargebeeBilledPeriods,
  chargebeeCustomer,
  chargebeeInvoice,
  chargebeeSubscription,
  dayOf,
  stripeBilledPeriods,
  stripeCustomer,
  stripeInvoice,
  stripeSubscription,
  type ContractTerms,
  type CustomerTerms,
} from './mapping.ts';
import { chargebeeObjects, isChargebeeCustomer, stripeObjects } from './payloads.ts';
import { isJsonObject } from '../signed-webhooks/payload.ts';

/** Failures before an object's events are dead (they stay pending, retried by the next run, until then). */
export const MAX_APPLY_ATTEMPTS = 5;

/** A Postgres array literal of ids (drizzle spreads a JS array into a row, not an array). */
const textArray = (ids: string[]) => `{${ids.map((id) => `"${id.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;

interface Snapshot {
  event_id: string;
  type: string;
  occurred_at: number;
  object_version: number;
  /** The event as stored, parsed: checked against its kind's schema where it is read. */
  body: unknown;
}

/** A stored body (JSON text, schema/billing.ts) parsed; null when it is not JSON, which the schema
 * check of its object then refuses by name, as it would any other wrong snapshot. */
function parsedBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Reads an object as the platform has it now (null: it could not be read). */
export type Reread = (kind: BillingObjectType, objectId: string) => Promise<unknown | null>;

type Connector = Pick<BillingConnector, 'id' | 'orgId' | 'platform' | 'mode'> & { reread: Reread | null };

/** The object a stored event is a snapshot of, not yet checked against its kind. */
function objectOf(connector: Connector, body: unknown, kind: BillingObjectType): unknown {
  if (!isJsonObject(body)) return null;
  const holder = connector.platform === 'stripe' ? body.data : body.content;
  return isJsonObject(holder) ? holder[connector.platform === 'stripe' ? 'object' : kind] : null;
}

const customerTerms = (connector: Connector, object: unknown, occurredAt: number) =>
  connector.platform === 'stripe'
    ? stripeCustomer(stripeObjects.customer(object), occurredAt)
    : chargebeeCustomer(chargebeeObjects.customer(object), occurredAt);

async function storedSnapshotsOf(db: Db, connector: Connector, kind: string, objectId: string): Promise<Snapshot[]> {
  return rowsOf<Omit<Snapshot, 'body'> & { body: string }>(
    await db.execute(sql`
      select event_id, type, extract(epoch from occurred_at)::bigint::int as occurred_at, object_version, body
      from billing_events
      where connector_id = ${connector.id} and object_type = ${kind} and object_id = ${objectId} and state in ('pending', 'applied')
      order by object_version, event_id`),
  ).map((row) => ({ ...row, object_version: Number(row.object_version), body: parsedBody(row.body) }));
}

/** What a snapshot says of its object, as our records would hold it: two snapshots that say the same are one state. */
function termsOf(connector: Connector, kind: BillingObjectType, object: unknown, occurredAt: number): string {
  if (kind === 'customer') return JSON.stringify(customerTerms(connector, object, occurredAt));
  if (kind === 'subscription')
    return connector.platform === 'stripe'
      ? termsKey(stripeSubscription(stripeObjects.subscription(object)))
      : termsKey(chargebeeSubscription(chargebeeObjects.subscription(object), occurredAt));
  return JSON.stringify(
    connector.platform === 'stripe' ? stripeInvoice(stripeObjects.invoice(object)) : chargebeeInvoice(chargebeeObjects.invoice(object)),
  );
}

/**
 * The object's snapshots in the platform's order. Stripe's `created` is in seconds: when the newest
 * second holds snapshots that say different things and the connector can read Stripe's API, the
 * object as Stripe has it now says which of them came last (it is moved to the end); when the API
 * is not reachable, or the object has moved on since, the lifecycle order and the event id decide.
 * Only the newest second is asked about: within a day only the last state of the day is kept.
 */
async function snapshotsOf(db: Db, connector: Connector, kind: BillingObjectType, objectId: string): Promise<Snapshot[]> {
  const snapshots = await storedSnapshotsOf(db, connector, kind, objectId);
  const reread = connector.reread;
  const newest = snapshots[snapshots.length - 1];
  if (!reread || !newest) return snapshots;
  const tied = snapshots.filter((snapshot) => snapshot.occurred_at === newest.occurred_at);
  const said = tied.map((snapshot) => termsOf(connector, kind, objectOf(connector, snapshot.body, kind), snapshot.occurred_at));
  if (new Set(said).size < 2) return snapshots;
  const current = await reread(kind, objectId);
  if (current === null) return snapshots;
  let now: string;
  try {
    now = termsOf(connector, kind, current, newest.occurred_at);
  } catch {
    return snapshots; // not the object's shape: the lifecycle order decides
  }
  const last = said.lastIndexOf(now);
  if (last < 0) return snapshots;
  const winner = tied[last]!;
  return [...snapshots.filter((snapshot) => snapshot !== winner), winner];
}

/** The customer's newest snapshot: its own events, and for Chargebee the copy every subscription event carries. */
async function customerTermsOf(db: Db, connector: Connector, customerId: string): Promise<CustomerTerms | null> {
  const own = await snapshotsOf(db, connector, 'customer', customerId);
  let best: { version: number; key: string; terms: CustomerTerms } | null = null;
  const consider = (version: number, key: string, terms: CustomerTerms) => {
    if (!best || version > best.version || (version === best.version && key > best.key)) best = { version, key, terms };
  };
  for (const snapshot of own) {
    const terms = customerTerms(connector, objectOf(connector, snapshot.body, 'customer'), snapshot.occurred_at);
    // A Stripe customer.deleted carries the last customer object, not marked deleted.
    if (snapshot.type === 'customer.deleted' || snapshot.type === 'customer_deleted') {
      terms.deleted = true;
      terms.deletedOn = dayOf(snapshot.occurred_at);
    }
    consider(snapshot.object_version, snapshot.event_id, terms);
  }
  if (connector.platform === 'chargebee') {
    const carried = rowsOf<{ event_id: string; occurred_at: number; body: string }>(
      await db.execute(sql`
        select event_id, extract(epoch from occurred_at)::bigint::int as occurred_at, body
        from billing_events
        where connector_id = ${connector.id} and customer_ref = ${customerId} and object_type <> 'customer'
          and state in ('pending', 'applied')`),
    );
    for (const row of carried) {
      const body = parsedBody(row.body);
      const customer = isJsonObject(body) && isJsonObject(body.content) ? body.content.customer : undefined;
      // A copy that is not a customer's shape is left out: the subscription it came with still applies.
      if (!isChargebeeCustomer(customer)) continue;
      consider(customer.resource_version ?? 0, row.event_id, chargebeeCustomer(customer, row.occurred_at));
    }
  }
  return (best as { terms: CustomerTerms } | null)?.terms ?? null;
}

/** The currency of the customer's earliest priced object, for a customer the platform gives none. */
async function currencyFromObjects(db: Db, connector: Connector, customerId: string): Promise<string | null> {
  const [first] = rowsOf<{ object_type: BillingObjectType; body: string }>(
    await db.execute(sql`
      select object_type, body from billing_events
      where connector_id = ${connector.id} and customer_ref = ${customerId} and object_type in ('subscription', 'invoice')
        and state in ('pending', 'applied')
      order by occurred_at, event_id limit 1`),
  );
  if (!first) return null;
  const object = objectOf(connector, parsedBody(first.body), first.object_type);
  const currency = isJsonObject(object) ? (connector.platform === 'stripe' ? object.currency : object.currency_code) : null;
  return typeof currency === 'string' && currency !== '' ? currency.toUpperCase() : null;
}

/** Writes the customer from its newest snapshot (or, with none yet, from its id); null when there is
 * no currency to create it with yet. Returns the customer's id. */
async function applyCustomer(db: Db, connector: Connector, customerId: string, currencyHint: string | null): Promise<string | null> {
  const [existing] = rowsOf<{ id: string; currency: string }>(
    await db.execute(sql`select id, currency from customers where org_id = ${connector.orgId} and external_id = ${customerId}`),
  );
  const terms = await customerTermsOf(db, connector, customerId);
  const currency = existing?.currency ?? terms?.currency ?? currencyHint ?? (await currencyFromObjects(db, connector, customerId));
  if (!currency) return null;
  let churned = false;
  if (terms?.deleted && existing) {
    const [counting] = rowsOf<{ n: number }>(
      await db.execute(sql`
        select count(*)::int as n from contracts
        where org_id = ${connector.orgId} and customer_id = ${existing.id} and deleted_at is null
          and revintel_contract_counted_on(status, start_date, end_date, cancelled_at, (now() at time zone 'UTC')::date)`),
    );
    churned = (counting?.n ?? 0) === 0;
  } else if (terms?.deleted) churned = true;
  const [outcome] = await writeCustomers(db, connector.orgId, [
    {
      index: 0,
      input: {
        external_id: customerId,
        name: (terms?.name ?? customerId).slice(0, 300),
        email: terms?.email && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(terms.email) ? terms.email : null,
        currency, // the customer's own once it exists: a currency never changes under its records
        status: churned ? 'churned' : 'active',
        churned_at: churned ? (terms?.deletedOn ?? null) : null,
        metadata: { billing: { platform: connector.platform, connector_id: connector.id } },
      },
    },
  ]);
  if (outcome!.outcome === 'rejected') throw outcome!.error;
  return outcome!.id;
}

interface TimelineEntry {
  day: string;
  terms: ContractTerms;
}

const termsKey = (t: ContractTerms) =>
  JSON.stringify([t.status, t.startDate, t.endDate, t.autoRenew, t.billingInterval, t.amount, t.currency, t.seats, t.cancelledAt]);

/** The day a snapshot's terms hold from: the start for the first one; the end for an ended
 * subscription; the notice for one that just got notice; else the day of the event. */
export function businessDay(terms: ContractTerms, previous: ContractTerms | null, occurredAt: number): string {
  if (!previous) return terms.startDate;
  if (terms.status === 'ended' && terms.endDate) return terms.endDate;
  if (terms.status === 'cancelled' && previous.status !== 'cancelled' && terms.cancelledAt) return terms.cancelledAt;
  return dayOf(occurredAt);
}

/** What the first snapshot says of the days before it: a subscription first seen ended (or with
 * notice given), as a backfill reads most, ran from its start, got its notice on its cancellation
 * day and ended at its end, at the terms it ended with. */
export function earlierDaysOf(terms: ContractTerms): TimelineEntry[] {
  if (terms.status !== 'ended' && terms.status !== 'cancelled') return [{ day: terms.startDate, terms }];
  const running: ContractTerms = { ...terms, status: 'active', cancelledAt: null, autoRenew: true };
  const entries: TimelineEntry[] = [{ day: terms.startDate, terms: running }];
  const noticeDay = terms.cancelledAt;
  const endDay = terms.status === 'ended' ? terms.endDate : null;
  if (noticeDay && noticeDay > terms.startDate && (!endDay || noticeDay < endDay))
    entries.push({ day: noticeDay, terms: { ...terms, status: 'cancelled', autoRenew: false } });
  if (terms.status === 'ended') {
    const day = endDay && endDay > entries[entries.length - 1]!.day ? endDay : entries[entries.length - 1]!.day;
    if (day === entries[entries.length - 1]!.day) entries.pop();
    entries.push({ day, terms });
  } else if (!(noticeDay && noticeDay > terms.startDate)) {
    entries[0] = { day: terms.startDate, terms };
  }
  return entries;
}

/** Every snapshot's terms at its business day, in order: one entry per day (the last state seen
 * that day), none repeating the one before. */
export function timelineOf(snapshots: { terms: ContractTerms; occurredAt: number }[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  for (const { terms, occurredAt } of snapshots) {
    const last = entries[entries.length - 1];
    if (!last) {
      entries.push(...earlierDaysOf(terms));
      continue;
    }
    let day = businessDay(terms, last?.terms ?? null, occurredAt);
    if (last && day < last.day) day = last.day;
    if (last && day === last.day) {
      entries.pop();
      const before = entries[entries.length - 1];
      if (!before || termsKey(before.terms) !== termsKey(terms)) entries.push({ day, terms });
      continue;
    }
    if (last && termsKey(last.terms) === termsKey(terms)) continue;
    entries.push({ day, terms });
  }
  return renewedThrough(entries);
}

/** An auto-renewing term that a later snapshot shows still running was renewed: its end date
 * reaches the later one's, so a renewal the platform announced in an event we never got (or that
 * only moved the period) does not read as a gap in the history. The newest terms keep their own end. */
function renewedThrough(entries: TimelineEntry[]): TimelineEntry[] {
  for (let i = entries.length - 2; i >= 0; i--) {
    const { terms } = entries[i]!;
    const nextEnd = entries[i + 1]!.terms.endDate;
    if (terms.autoRenew && terms.status !== 'ended' && terms.endDate !== null && nextEnd !== null && nextEnd > terms.endDate)
      entries[i] = { day: entries[i]!.day, terms: { ...terms, endDate: nextEnd } };
  }
  return entries.filter((entry, i) => i === 0 || termsKey(entry.terms) !== termsKey(entries[i - 1]!.terms));
}

/**
 * The days before the first snapshot (`observedFrom`) hold what the first snapshot inferred of them
 * (its terms from the start); the invoices tell better: from each billed period's start, the
 * amount (and seats) billed for it. Days a snapshot observed keep what it said.
 */
export function withBilledAmounts(entries: TimelineEntry[], billed: BilledPeriod[], observedFrom: string): TimelineEntry[] {
  const inferred = entries.filter((entry) => entry.day < observedFrom);
  const first = inferred[0];
  if (!first) return entries;
  const points = billed.filter((period) => period.day >= first.day && period.day < observedFrom).sort((a, b) => (a.day < b.day ? -1 : 1));
  if (points.length === 0) return entries;
  const days = [...new Set([...inferred.map((entry) => entry.day), ...points.map((period) => period.day)])].sort();
  const rebuilt: TimelineEntry[] = [];
  for (const day of days) {
    let holding = first;
    for (const entry of inferred) if (entry.day <= day) holding = entry;
    let point: BilledPeriod | undefined;
    for (const period of points) if (period.day <= day) point = period;
    const terms = point ? { ...holding.terms, amount: point.amount, seats: point.seats ?? holding.terms.seats } : holding.terms;
    rebuilt.push({ day, terms });
  }
  const all = [...rebuilt, ...entries.filter((entry) => entry.day >= observedFrom)];
  return all.filter((entry, i) => i === 0 || termsKey(entry.terms) !== termsKey(all[i - 1]!.terms));
}

/** Every period the subscription's invoices billed, each invoice as its newest snapshot says. */
async function billedPeriodsOf(db: Db, connector: Connector, subscriptionId: string): Promise<BilledPeriod[]> {
  const invoices = rowsOf<{ body: string }>(
    await db.execute(sql`
      select distinct on (object_id) body from billing_events
      where connector_id = ${connector.id} and object_type = 'invoice' and subscription_ref = ${subscriptionId}
        and state in ('pending', 'applied')
      order by object_id, object_version desc, event_id desc`),
  );
  return invoices.flatMap(({ body }) => {
    const object = objectOf(connector, parsedBody(body), 'invoice');
    try {
      return connector.platform === 'stripe'
        ? stripeBilledPeriods(stripeObjects.invoice(object), subscriptionId)
        : chargebeeBilledPeriods(chargebeeObjects.invoice(object), subscriptionId);
    } catch {
      return []; // an invoice off its schema fails on its own apply; the history goes without it
    }
  });
}

interface RevisionRow {
  revision: number;
  valid_from: string;
  status: string;
  start_date: string;
  end_date: string | null;
  auto_renew: boolean;
  billing_interval: string;
  amount: number;
  currency: string;
  seats: number | null;
  cancelled_at: string | null;
}

const revisionKey = (r: RevisionRow) =>
  JSON.stringify([
    r.status,
    r.start_date,
    r.end_date,
    r.auto_renew,
    r.billing_interval,
    Number(r.amount),
    r.currency,
    r.seats,
    r.cancelled_at,
  ]);

/** The first day on which what the revisions say differs from the timeline (null: they agree). */
export function firstDifference(revisions: RevisionRow[], timeline: TimelineEntry[]): string | null {
  const days = [...new Set([...revisions.map((r) => r.valid_from), ...timeline.map((e) => e.day)])].sort();
  for (const day of days) {
    let recorded: RevisionRow | undefined;
    for (const r of revisions) if (r.valid_from <= day && (!recorded || r.revision > recorded.revision)) recorded = r;
    let wanted: TimelineEntry | undefined;
    for (const e of timeline) if (e.day <= day) wanted = e;
    const recordedKey = recorded ? revisionKey(recorded) : null;
    const wantedKey = wanted ? termsKey(wanted.terms) : null;
    if (recordedKey !== wantedKey) return day;
  }
  return null;
}

async function writeTerms(db: Db, orgId: string, entry: TimelineEntry, billing: Record<string, unknown>): Promise<string> {
  const t = entry.terms;
  await db.execute(sql`select set_config('revintel.valid_from', ${entry.day}, true)`);
  const [outcome] = await writeContracts(db, orgId, [
    {
      index: 0,
      input: {
        external_id: t.externalId,
        customer_external_id: t.customerExternalId,
        name: t.name.slice(0, 300),
        status: t.status,
        start_date: t.startDate,
        end_date: t.endDate,
        auto_renew: t.autoRenew,
        billing_interval: t.billingInterval,
        amount: t.amount,
        // Named, so a subscription billed in another currency than its customer's is refused (the
        // event fails with the reason) instead of stored as the customer's currency.
        ...(t.currency ? { currency: t.currency } : {}),
        seats: t.seats,
        cancelled_at: t.cancelledAt,
        metadata: { billing: { ...billing, status: t.billingStatus } },
      },
    },
  ]);
  if (outcome!.outcome === 'rejected') throw outcome!.error;
  return outcome!.id;
}

/** Writes the timeline's days from the first one the revision log disagrees with. */
async function writeTimeline(db: Db, orgId: string, timeline: TimelineEntry[], billing: Record<string, unknown>): Promise<string | null> {
  const last = timeline[timeline.length - 1];
  if (!last) return null;
  const [contract] = rowsOf<{ id: string }>(
    await db.execute(sql`select id from contracts where org_id = ${orgId} and external_id = ${last.terms.externalId}`),
  );
  try {
    if (!contract) {
      let id = '';
      for (const entry of timeline) id = await writeTerms(db, orgId, entry, billing);
      return id;
    }
    const revisions = rowsOf<RevisionRow>(
      await db.execute(sql`
        select revision, valid_from::text as valid_from, status, start_date::text as start_date, end_date::text as end_date, auto_renew,
               billing_interval, amount, currency, seats, cancelled_at::text as cancelled_at
        from contract_revisions where contract_id = ${contract.id} order by revision`),
    );
    const from = firstDifference(revisions, timeline);
    if (from === null) {
      // The terms agree; the name and billing status may still have moved on.
      await writeTerms(db, orgId, { day: last.day, terms: last.terms }, billing);
      return contract.id;
    }
    let holding = timeline[0]!;
    for (const entry of timeline) if (entry.day <= from) holding = entry;
    const run = [{ day: from, terms: holding.terms }, ...timeline.filter((entry) => entry.day > from)];
    for (const entry of run) {
      const before = await maxRevision(db, contract.id);
      await writeTerms(db, orgId, entry, billing);
      // Terms equal to the row's own write no revision: this day still needs one in the new run.
      if ((await maxRevision(db, contract.id)) === before) await appendRevision(db, contract.id, entry.day);
    }
    return contract.id;
  } finally {
    await db.execute(sql`select set_config('revintel.valid_from', '', true)`);
  }
}

async function maxRevision(db: Db, contractId: string): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await db.execute(sql`select coalesce(max(revision), 0)::int as n from contract_revisions where contract_id = ${contractId}`),
  );
  return row?.n ?? 0;
}

async function appendRevision(db: Db, contractId: string, day: string): Promise<void> {
  await db.execute(sql`
    insert into contract_revisions (org_id, contract_id, revision, valid_from, customer_id, status, start_date, end_date, auto_renew,
      billing_interval, amount, currency, seats, cancelled_at, deleted)
    select c.org_id, c.id, (select coalesce(max(r.revision), 0) + 1 from contract_revisions r where r.contract_id = c.id), ${day}::date,
      c.customer_id, c.status, c.start_date, c.end_date, c.auto_renew, c.billing_interval, c.amount, c.currency, c.seats, c.cancelled_at,
      c.deleted_at is not null
    from contracts c where c.id = ${contractId}`);
}

async function applySubscription(db: Db, connector: Connector, subscriptionId: string): Promise<string | null> {
  const snapshots = await snapshotsOf(db, connector, 'subscription', subscriptionId);
  const mapped = snapshots.map((snapshot) => {
    const object = objectOf(connector, snapshot.body, 'subscription');
    return {
      terms:
        connector.platform === 'stripe'
          ? stripeSubscription(stripeObjects.subscription(object))
          : chargebeeSubscription(chargebeeObjects.subscription(object), snapshot.occurred_at),
      occurredAt: snapshot.occurred_at,
    };
  });
  const firstSeen = mapped[0];
  if (!firstSeen) return null;
  const timeline = withBilledAmounts(timelineOf(mapped), await billedPeriodsOf(db, connector, subscriptionId), dayOf(firstSeen.occurredAt));
  const last = timeline[timeline.length - 1];
  if (!last) return null;
  const customer = await applyCustomer(db, connector, last.terms.customerExternalId, last.terms.currency || null);
  if (!customer) throw new AppError('unprocessable', `customer ${last.terms.customerExternalId} has no currency yet`);
  const contractId = await writeTimeline(db, connector.orgId, timeline, { platform: connector.platform, connector_id: connector.id });
  if (contractId) {
    // Invoices stored before their subscription was known get their contract now.
    await db.execute(sql`
      update invoices set contract_id = ${contractId}, updated_at = now()
      where org_id = ${connector.orgId} and customer_id = ${customer} and contract_id is null and external_id in (
        select object_id from billing_events
        where connector_id = ${connector.id} and object_type = 'invoice' and subscription_ref = ${subscriptionId})`);
  }
  return contractId;
}

async function applyInvoice(db: Db, connector: Connector, invoiceId: string): Promise<void> {
  const snapshots = await snapshotsOf(db, connector, 'invoice', invoiceId);
  const newest = snapshots[snapshots.length - 1];
  if (!newest) return;
  const object = objectOf(connector, newest.body, 'invoice');
  const terms =
    connector.platform === 'stripe' ? stripeInvoice(stripeObjects.invoice(object)) : chargebeeInvoice(chargebeeObjects.invoice(object));
  if (newest.type === 'invoice.deleted' || newest.type === 'invoice_deleted') {
    // A deleted draft never was an invoice: a tombstone if we had it, nothing otherwise.
    await db.execute(
      sql`update invoices set deleted_at = now(), updated_at = now() where org_id = ${connector.orgId} and external_id = ${invoiceId} and deleted_at is null`,
    );
    return;
  }
  const customer = await applyCustomer(db, connector, terms.customerExternalId, terms.currency || null);
  if (!customer) throw new AppError('unprocessable', `customer ${terms.customerExternalId} has no currency yet`);
  const [contract] = terms.subscriptionExternalId
    ? rowsOf<{ id: string }>(
        await db.execute(
          sql`select id from contracts where org_id = ${connector.orgId} and external_id = ${terms.subscriptionExternalId} and customer_id = ${customer}`,
        ),
      )
    : [];
  const [outcome] = await writeInvoices(db, connector.orgId, [
    {
      index: 0,
      input: {
        external_id: terms.externalId,
        customer_id: customer,
        contract_id: contract?.id ?? null,
        number: terms.number,
        status: terms.status,
        amount_due: terms.amountDue,
        amount_paid: terms.amountPaid,
        issued_at: terms.issuedAt,
        due_date: terms.dueDate,
        paid_at: terms.paidAt,
        metadata: { billing: { platform: connector.platform, connector_id: connector.id, subscription: terms.subscriptionExternalId } },
      },
    },
  ]);
  if (outcome!.outcome === 'rejected') throw outcome!.error;
}

/** Where a pass over the pending events stands: after this event in their order. */
export interface ApplyCursor {
  version: number;
  eventId: string;
}

export interface ApplyOptions {
  /** Events a part applies at most. */
  limit?: number;
  /** The part takes the pending events after this one (null or absent: from the first). */
  after?: ApplyCursor | null;
  /** Only events never tried yet (a run's later passes: what was stored meanwhile). */
  freshOnly?: boolean;
  /** Where Stripe's API is, and the key that opens the connector's API key: with both, ties are re-read. */
  stripeApiBase?: string | null;
  secretKey?: string | null;
}

/** How long a tie's re-read may hold the run (it runs inside the apply transaction). */
const REREAD_TIMEOUT_MS = 5_000;

/** Stripe's `GET /v1/{customers|subscriptions|invoices}/:id` with the connector's key, or null when
 * the connector is not Stripe's or cannot read (no key, no SECRET_KEY, no API base). */
function stripeReread(row: Pick<BillingConnector, 'id' | 'platform' | 'apiKeySealed'>, options: ApplyOptions): Reread | null {
  if (row.platform !== 'stripe' || !row.apiKeySealed || !options.secretKey || !options.stripeApiBase) return null;
  const apiKey = openSecret(row.apiKeySealed, options.secretKey, row.id);
  const base = options.stripeApiBase.replace(/\/+$/, '');
  return async (kind, objectId) => {
    try {
      const response = await fetch(`${base}/v1/${kind}s/${encodeURIComponent(objectId)}`, {
        headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
        signal: AbortSignal.timeout(REREAD_TIMEOUT_MS),
      });
      if (!response.ok) {
        await response.arrayBuffer();
        return null;
      }
      return await response.json();
    } catch {
      return null; // unreachable or too slow: the lifecycle order decides
    }
  };
}

export interface ApplyReport {
  applied: number;
  failed: number;
  dead: number;
  /** Where the next part of this pass starts (null: this part took the last pending events). */
  next: ApplyCursor | null;
  /** Pending events left once a pass ends (failed and to retry, or stored meanwhile); null while
   * the pass goes on (counting them each part would cost a scan per part). */
  remaining: number | null;
}

/**
 * Applies up to `limit` of the connector's pending events after `after`, one part of a pass (the
 * job runs a pass part after part, each its own transaction: applyInParts): the objects they touch are rebuilt,
 * customers first, then subscriptions, then invoices, then the customers of the subscriptions again
 * (a deletion counts as churn only once nothing of the customer counts). Each object in its own
 * savepoint: one that fails leaves its events pending with the error, the others go on.
 */
export async function applyPendingEvents(db: Db, connectorId: string, options: ApplyOptions = {}): Promise<ApplyReport> {
  const limit = options.limit ?? 500;
  const after = options.after ?? null;
  const [row] = rowsOf<BillingConnector>(
    await db.execute(
      sql`select id, org_id as "orgId", platform, mode, api_key_sealed as "apiKeySealed" from billing_connectors where id = ${connectorId}`,
    ),
  );
  if (!row) return { applied: 0, failed: 0, dead: 0, next: null, remaining: 0 };
  const connector: Connector = { ...row, reread: stripeReread(row, options) };
  // One run per connector at a time (the job, a CLI's backfill): two would rebuild the same contracts.
  await db.execute(sql`select pg_advisory_xact_lock(hashtext(${`billing.apply:${connectorId}`}))`);
  const pending = rowsOf<{
    id: string;
    event_id: string;
    object_version: string;
    object_type: string;
    object_id: string;
    customer_ref: string | null;
    subscription_ref: string | null;
  }>(
    await db.execute(sql`
      select id, event_id, object_version::text as object_version, object_type, object_id, customer_ref, subscription_ref
      from billing_events
      where connector_id = ${connectorId} and state = 'pending'
        ${after ? sql`and (object_version, event_id) > (${after.version}::bigint, ${after.eventId})` : sql``}
        ${options.freshOnly ? sql`and attempts = 0` : sql``}
      order by object_version, event_id limit ${limit}`),
  );
  const last = pending[pending.length - 1];
  const next = pending.length === limit && last ? { version: Number(last.object_version), eventId: last.event_id } : null;
  const objects = new Map<string, { kind: string; id: string; events: string[] }>();
  const churnChecks = new Set<string>();
  for (const event of pending) {
    const key = `${event.object_type}:${event.object_id}`;
    const entry = objects.get(key) ?? { kind: event.object_type, id: event.object_id, events: [] };
    entry.events.push(event.id);
    objects.set(key, entry);
    if (event.object_type === 'subscription' && event.customer_ref) churnChecks.add(event.customer_ref);
    // An invoice says what its subscription billed in the past: the subscription is rebuilt too.
    if (event.object_type === 'invoice' && event.subscription_ref) {
      const subscription = `subscription:${event.subscription_ref}`;
      if (!objects.has(subscription)) objects.set(subscription, { kind: 'subscription', id: event.subscription_ref, events: [] });
    }
  }
  const order = ['customer', 'subscription', 'invoice'];
  const sorted = [...objects.values()].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || (a.id < b.id ? -1 : 1));
  const report: ApplyReport = { applied: 0, failed: 0, dead: 0, next, remaining: null };
  for (const object of sorted) {
    try {
      await transaction(db, async (savepoint) => {
        if (object.kind === 'customer') {
          if (!(await applyCustomer(savepoint, connector, object.id, null))) {
            // No currency yet: the customer is made with its first subscription or invoice.
          }
        } else if (object.kind === 'subscription') await applySubscription(savepoint, connector, object.id);
        else await applyInvoice(savepoint, connector, object.id);
      });
      await db.execute(sql`
        update billing_events set state = 'applied', applied_at = now(), attempts = attempts + 1, detail = null
        where id = any(${textArray(object.events)}::text[])`);
      report.applied += object.events.length;
    } catch (error) {
      const detail = messageOf(error).slice(0, 500);
      const dead = rowsOf<{ id: string }>(
        await db.execute(sql`
          update billing_events set attempts = attempts + 1, detail = ${detail},
            state = case when attempts + 1 >= ${MAX_APPLY_ATTEMPTS} then 'dead' else state end
          where id = any(${textArray(object.events)}::text[]) returning id, state`),
      ).filter((row) => (row as { state?: string }).state === 'dead');
      report.failed += object.events.length - dead.length;
      report.dead += dead.length;
    }
  }
  // Only a customer the billing system deleted can turn churned when its subscriptions end.
  const deleted = churnChecks.size
    ? rowsOf<{ object_id: string }>(
        await db.execute(sql`
          select distinct object_id from billing_events
          where connector_id = ${connectorId} and object_type = 'customer' and type in ('customer.deleted', 'customer_deleted')
            and object_id = any(${textArray([...churnChecks])}::text[])`),
      ).map((row) => row.object_id)
    : [];
  for (const customerId of deleted) {
    try {
      await transaction(db, (tx) => applyCustomer(tx, connector, customerId, null));
    } catch {
      // The customer's own events carry the failure, if any, on their next run.
    }
  }
  if (next === null) {
    const [left] = rowsOf<{ n: number }>(
      await db.execute(sql`select count(*)::int as n from billing_events where connector_id = ${connectorId} and state = 'pending'`),
    );
    report.remaining = left?.n ?? 0;
  }
  return report;
}

/** A part's events at most, sized by the time the last part took in the database (nextSizeByTime):
 * a part is one transaction, and on the embedded database, which runs one at a time, every webhook
 * acknowledgement waits for the part in hand. Parts of 500 events held it for seconds (8 s on a
 * quiet machine), and deliveries waited behind them. */
const PART_SIZING = { targetMs: 40, min: 2, max: 500 };
const FIRST_PART = 10;

/** While the connector's webhooks arrive, the job's parts wait, up to this long in a run: an event
 * applied half a minute later loses nothing, while an acknowledgement that waits may be delivered
 * again. Beyond it the run goes on at full speed, so a flood that does not end cannot starve
 * applying. On the embedded database, which runs one transaction at a time, each part otherwise
 * took its turn between deliveries, and the webhook acknowledged at half the speed it did alone. */
export const DEFER_AT_MOST_MS = 30_000;
const DEFER_STEP_MS = 250;

/** Webhook deliveries a second above which the connector's webhooks count as arriving (a few events
 * now and then are applied at once). */
export const INGEST_BUSY_PER_SECOND = 20;

/** Are the connector's webhooks arriving (INGEST_BUSY_PER_SECOND over the last second, backfill
 * pages aside)? */
export async function webhookIngestBusy(db: Db, connectorId: string): Promise<boolean> {
  const rows = rowsOf<{ n: number }>(
    await db.execute(sql`
      select count(*)::int as n from (
        select 1 from billing_events
        where connector_id = ${connectorId} and received_at > now() - interval '1 second' and source = 'webhook'
        limit ${INGEST_BUSY_PER_SECOND}
      ) recent`),
  );
  return (rows[0]?.n ?? 0) >= INGEST_BUSY_PER_SECOND;
}

export interface ApplyTotals {
  applied: number;
  failed: number;
  dead: number;
  /** Pending events left after the last pass (failed and waiting for a retry). */
  remaining: number;
  parts: number;
  passes: number;
}

/**
 * Applies the connector's pending events part after part through `part` (applyPendingEvents on a
 * database, or a unit of the job or the CLI: each part its own transaction). A pass walks the
 * pending events in their order; a pass that applied something and left events pending is followed
 * by another over the events stored meanwhile (those never tried: one that failed is tried once a
 * run, so a run that keeps finding new events does not spend a failing object's five attempts in
 * seconds); one that applied nothing ends the run (`remaining` then says whether a retry is due).
 */
export async function applyInParts(
  part: (args: { limit: number; after: ApplyCursor | null; freshOnly: boolean }) => Promise<ApplyReport & { ms?: number }>,
  options: {
    limit?: number;
    /** Are the connector's webhooks arriving? While they are, parts wait (at most DEFER_AT_MOST_MS
     * in all), so that acknowledging them comes first. */
    ingestBusy?: () => Promise<boolean>;
  } = {},
): Promise<ApplyTotals & { deferredMs: number }> {
  const totals = { applied: 0, failed: 0, dead: 0, remaining: 0, parts: 0, passes: 0, deferredMs: 0 };
  let limit = options.limit ?? FIRST_PART;
  let after: ApplyCursor | null = null;
  let passApplied = 0;
  let passFailed = 0;
  for (;;) {
    while (options.ingestBusy && totals.deferredMs < DEFER_AT_MOST_MS && (await options.ingestBusy())) {
      await Bun.sleep(DEFER_STEP_MS);
      totals.deferredMs += DEFER_STEP_MS;
    }
    const started = performance.now();
    const report = await part({ limit, after, freshOnly: totals.passes > 0 });
    totals.parts++;
    totals.applied += report.applied;
    totals.dead += report.dead;
    passApplied += report.applied;
    passFailed += report.failed;
    if (options.limit === undefined) limit = nextSizeByTime(limit, report.ms ?? performance.now() - started, PART_SIZING);
    if (report.next) {
      after = report.next;
      continue;
    }
    totals.failed += passFailed;
    totals.remaining = report.remaining ?? 0;
    totals.passes++;
    if (totals.remaining === 0 || passApplied === 0) return totals;
    after = null;
    passApplied = 0;
    passFailed = 0;
  }
}
