// The billing event store (docs/billing.md "Events"): every verified webhook event, and every object a
// backfill read, is kept raw with what it is a snapshot of and where it stands in that object's
// order. Storing is idempotent on the platform's event id, so a redelivery stores nothing; an event
// of the other mode (live/test) or of a type the sync does not map is stored as `ignored`, so it is
// acknowledged and never asked for again. `billing.apply` then brings the records up to date.
import { queryText, type Db } from '../../db/client.ts';
import type { BillingConnector, BillingEventState, BillingObjectType, BillingPlatform } from '../../db/schema/index.ts';
import { randomBase62 } from '../../lib/ids.ts';
import { sha256Hex } from '../../lib/digest.ts';
import { isJsonObject, type JsonObject } from '../signed-webhooks/payload.ts';
import { billingApplyInStatement, billingApplyOf } from './apply-job.ts';
import { type BillingEventBody, type ChargebeeEvent, idOf, objectTypeOf, STRIPE_LIFECYCLE, type StripeEvent } from './payloads.ts';

export interface ClassifiedEvent {
  eventId: string;
  type: string;
  objectType: BillingObjectType | null;
  objectId: string | null;
  customerRef: string | null;
  subscriptionRef: string | null;
  /** Unix seconds. */
  occurredAt: number;
  objectVersion: number;
  /** Why it is stored as ignored (null: it is to be applied). */
  ignored: string | null;
}

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

export function classifyStripeEvent(event: StripeEvent, mode: 'live' | 'test'): ClassifiedEvent {
  const { type } = event;
  const object = event.data.object;
  const occurredAt = event.created;
  const rank = STRIPE_LIFECYCLE[type];
  const objectType = objectTypeOf('stripe', type);
  const livemode = event.livemode === true;
  const ignored =
    livemode !== (mode === 'live')
      ? `a ${livemode ? 'live' : 'test'}-mode event; this connector takes ${mode} mode`
      : objectType === null
        ? `type ${type || '(none)'} is not synced`
        : !str(object.id)
          ? 'the event has no object id'
          : null;
  const parent = isJsonObject(object.parent) ? object.parent.subscription_details : null;
  return {
    eventId: event.id,
    type,
    objectType,
    objectId: str(object.id),
    customerRef: objectType === 'customer' ? str(object.id) : idOf(object.customer),
    subscriptionRef:
      objectType === 'subscription'
        ? str(object.id)
        : objectType === 'invoice'
          ? ((isJsonObject(parent) ? idOf(parent.subscription) : null) ?? idOf(object.subscription))
          : null,
    occurredAt,
    objectVersion: occurredAt * 1000 + (rank ?? 0),
    ignored,
  };
}

/** Chargebee has no live/test flag (a site is one or the other) and orders by `resource_version`. */
export function classifyChargebeeEvent(event: ChargebeeEvent): ClassifiedEvent {
  const type = event.event_type;
  const occurredAt = event.occurred_at;
  const objectType = objectTypeOf('chargebee', type);
  const found = objectType ? event.content[objectType] : null;
  const object = isJsonObject(found) ? found : null;
  const ignored =
    objectType === null ? `type ${type || '(none)'} is not synced` : !str(object?.id) ? `the event has no ${objectType}` : null;
  return {
    eventId: event.id,
    type,
    objectType,
    objectId: str(object?.id),
    customerRef: objectType === 'customer' ? str(object?.id) : str(object?.customer_id),
    subscriptionRef: objectType === 'subscription' ? str(object?.id) : objectType === 'invoice' ? str(object?.subscription_id) : null,
    occurredAt,
    objectVersion: Number(object?.resource_version) || occurredAt * 1000,
    ignored,
  };
}

export const classifyEvent = (connector: Pick<BillingConnector, 'mode'>, body: BillingEventBody) =>
  body.platform === 'stripe' ? classifyStripeEvent(body.event, connector.mode) : classifyChargebeeEvent(body.event);

/** An object a backfill read, as the event it would have been: its id is the object's and the
 * digest of its content, so reading an unchanged object again stores nothing. */
export function syncEventOf(
  platform: BillingPlatform,
  objectType: BillingObjectType,
  object: { id: string } & JsonObject,
  readAt: number,
  livemode?: boolean,
): BillingEventBody {
  const digest = sha256Hex(JSON.stringify(object)).slice(0, 24);
  const id = `sync:${object.id}:${digest}`;
  if (platform === 'stripe') {
    const type =
      objectType === 'subscription' ? 'customer.subscription.updated' : objectType === 'invoice' ? 'invoice.updated' : 'customer.updated';
    return {
      platform,
      event: { id, object: 'event', type, created: readAt, livemode: livemode ?? object.livemode === true, data: { object } },
    };
  }
  return {
    platform,
    event: { id, object: 'event', event_type: `${objectType}_changed`, occurred_at: readAt, content: { [objectType]: object } },
  };
}

export interface StoredBillingEvent {
  id: string;
  /** False when the event id was stored before (a redelivery): nothing changed. */
  created: boolean;
  state: BillingEventState;
  /** Storing it queued its connector's `billing.apply` (none was queued yet): the job loop is to
   * be woken. One already queued is the loop's to take, with no wake for every commit of a burst. */
  applyQueued: boolean;
}

export interface BillingEventToStore {
  connector: Pick<BillingConnector, 'id' | 'orgId' | 'platform' | 'mode'>;
  body: BillingEventBody;
  source: 'webhook' | 'sync';
  /** `body.event` as JSON text, when the caller has it (the webhook's raw body): not written again. */
  text?: string;
}

/** The apply runs of the connectors with a new pending event (the statement's `stored` part). */
const APPLY_RUNS = billingApplyInStatement({
  firstParam: 16,
  only: `exists (select 1 from stored s where s.connector_id = j.dedupe_key and s.state = 'pending')`,
});

/** One statement for a whole batch and its apply runs: the columns as arrays, unnested into rows; a
 * redelivery (or a second copy within the batch) is skipped by the connector's event-id constraint,
 * and a connector with a new pending event gets its `billing.apply` queued (one queued at a time)
 * by the same statement, so both commit together. The bodies are stored as the text received, never
 * parsed by the database (schema/billing.ts). Answers the new events' ids and the connectors whose
 * run it queued. */
const STORE_EVENTS = `
  with stored as (
    insert into billing_events (id, org_id, connector_id, event_id, type, object_type, object_id, customer_ref, subscription_ref,
      occurred_at, object_version, source, body, state, detail)
    select e.id, e.org_id, e.connector_id, e.event_id, e.type, e.object_type, e.object_id, e.customer_ref, e.subscription_ref,
      to_timestamp(e.occurred_at::float8), e.object_version::bigint, e.source, e.body, e.state, e.detail
    from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
      $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[])
      as e(id, org_id, connector_id, event_id, type, object_type, object_id, customer_ref, subscription_ref,
        occurred_at, object_version, source, body, state, detail)
    on conflict (connector_id, event_id) do nothing
    returning id, connector_id, state
  ),
  queued as (${APPLY_RUNS.text})
  select id, null::text as queued from stored
  union all select null, dedupe_key from queued`;

/** The stored copies of events whose id was taken. */
const FIND_STORED = `
  select e.connector_id, e.event_id, e.id, e.state from billing_events e
  join unnest($1::text[], $2::text[]) as k(connector_id, event_id) on e.connector_id = k.connector_id and e.event_id = k.event_id`;

/** Stores events and, for each connector with a new event to apply, queues `billing.apply` once in
 * the same statement: an event acknowledged is an event that will be applied. One statement, so
 * committed alone by the webhook's group commit, or in a backfill page's transaction with its cursor;
 * a redelivery's stored copy is then read in a second. */
export async function storeBillingEvents(
  db: Db,
  events: BillingEventToStore[],
  options: {
    /** Where Stripe's API is, for the apply job's re-reads of ties. */
    stripeApiBase?: string;
  } = {},
): Promise<StoredBillingEvent[]> {
  if (events.length === 0) return [];
  const rows = events.map(({ connector, body, source, text }) => {
    if (body.platform !== connector.platform) throw new Error(`a ${body.platform} event for a ${connector.platform} connector`);
    const event = classifyEvent(connector, body);
    const state: BillingEventState = event.ignored ? 'ignored' : 'pending';
    return { id: `bev_${randomBase62(20)}`, connector, source, text: text ?? JSON.stringify(body.event), event, state };
  });
  const column = (pick: (row: (typeof rows)[number]) => string | null) => rows.map(pick);
  const toApply = new Map(rows.filter((r) => r.state === 'pending').map((r) => [r.connector.id, r.connector]));
  const answered = await queryText<{ id: string | null; queued: string | null }>(db, STORE_EVENTS, [
    column((r) => r.id),
    column((r) => r.connector.orgId),
    column((r) => r.connector.id),
    column((r) => r.event.eventId),
    column((r) => r.event.type),
    column((r) => r.event.objectType),
    column((r) => r.event.objectId),
    column((r) => r.event.customerRef),
    column((r) => r.event.subscriptionRef),
    column((r) => String(r.event.occurredAt)),
    column((r) => String(r.event.objectVersion)),
    column((r) => r.source),
    column((r) => r.text),
    column((r) => r.state),
    column((r) => r.event.ignored),
    ...APPLY_RUNS.params([...toApply.values()].map((connector) => billingApplyOf(connector, options.stripeApiBase))),
  ]);
  const fresh = new Set(answered.flatMap((row) => (row.id ? [row.id] : [])));
  const queued = new Set(answered.flatMap((row) => (row.queued ? [row.queued] : [])));
  const repeated = rows.filter((r) => !fresh.has(r.id));
  const storedBefore = new Map<string, { id: string; state: BillingEventState }>();
  if (repeated.length > 0) {
    const found = await queryText<{ connector_id: string; event_id: string; id: string; state: BillingEventState }>(db, FIND_STORED, [
      repeated.map((r) => r.connector.id),
      repeated.map((r) => r.event.eventId),
    ]);
    for (const row of found) storedBefore.set(`${row.connector_id}\0${row.event_id}`, row);
  }
  return rows.map((r) => {
    if (fresh.has(r.id)) return { id: r.id, created: true, state: r.state, applyQueued: queued.has(r.connector.id) };
    const first = storedBefore.get(`${r.connector.id}\0${r.event.eventId}`);
    if (!first) throw new Error(`billing event ${r.event.eventId} was neither stored nor found stored`);
    return { id: first.id, created: false, state: first.state, applyQueued: false };
  });
}

/** Stores one event (storeBillingEvents for one). */
export async function storeBillingEvent(db: Db, args: BillingEventToStore & { stripeApiBase?: string }): Promise<StoredBillingEvent> {
  const [stored] = await storeBillingEvents(db, [args], { stripeApiBase: args.stripeApiBase });
  return stored!;
}
