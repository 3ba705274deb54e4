// The billing event store (docs/billing.md "Events"): every verified webhook event, and every object a
// backfill read, is kept raw with what it is a snapshot of and where it stands in that object's
// order. Storing is idempotent on the platform's event id, so a redelivery stores nothing; an event
// of the other mode (live/test) or of a type the sync does not map is stored as `ignored`, so it is
// acknowledged and never asked for again. `billing.apply` then brings the records up to date.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import type { BillingConnector, BillingEventState, BillingObjectType, BillingPlatform } from '../../db/schema/index.ts';
import { randomBase62 } from '../../lib/ids.ts';
import { sha256Hex } from '../../lib/digest.ts';
import { isJsonObject, type JsonObject } from '../signed-webhooks/payload.ts';
import { queueBillingApply } from './apply-job.ts';
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
}

/** Stores one event for the connector and, when it is new and to be applied, queues `billing.apply`
 * in the same transaction: an event acknowledged is an event that will be applied. */
export async function storeBillingEvent(
  db: Db,
  args: {
    connector: Pick<BillingConnector, 'id' | 'orgId' | 'platform' | 'mode'>;
    body: BillingEventBody;
    source: 'webhook' | 'sync';
    /** Where Stripe's API is, for the apply job's re-reads of ties. */
    stripeApiBase?: string;
    /** False: the caller queues `billing.apply` once for many events (a backfill's page). */
    queueApply?: boolean;
  },
): Promise<StoredBillingEvent> {
  if (args.body.platform !== args.connector.platform)
    throw new Error(`a ${args.body.platform} event for a ${args.connector.platform} connector`);
  const event = classifyEvent(args.connector, args.body);
  const state: BillingEventState = event.ignored ? 'ignored' : 'pending';
  const id = `bev_${randomBase62(20)}`;
  const inserted = rowsOf<{ id: string }>(
    await db.execute(sql`
      insert into billing_events (id, org_id, connector_id, event_id, type, object_type, object_id, customer_ref, subscription_ref,
        occurred_at, object_version, source, body, state, detail)
      values (${id}, ${args.connector.orgId}, ${args.connector.id}, ${event.eventId}, ${event.type}, ${event.objectType}, ${event.objectId},
        ${event.customerRef}, ${event.subscriptionRef}, to_timestamp(${event.occurredAt}), ${event.objectVersion}, ${args.source},
        ${JSON.stringify(args.body.event)}::jsonb, ${state}, ${event.ignored})
      on conflict (connector_id, event_id) do nothing
      returning id`),
  );
  if (inserted[0]) {
    if (state === 'pending' && args.queueApply !== false) await queueBillingApply(db, args.connector, args.stripeApiBase);
    return { id, created: true, state };
  }
  const [existing] = rowsOf<{ id: string; state: BillingEventState }>(
    await db.execute(sql`select id, state from billing_events where connector_id = ${args.connector.id} and event_id = ${event.eventId}`),
  );
  return { id: existing!.id, created: false, state: existing!.state };
}
