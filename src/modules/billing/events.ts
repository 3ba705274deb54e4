// The billing event store (docs/billing.md "Events"): every verified webhook event, and every object a
// backfill read, is kept raw with what it is a snapshot of and where it stands in that object's
// order. Storing is idempotent on the platform's event id, so a redelivery stores nothing; an event
// of the other mode (live/test) or of a type the sync does not map is stored as `ignored`, so it is
// acknowledged and never asked for again. `billing.apply` then brings the records up to date.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import type { BillingConnector, BillingEventState, BillingObjectType } from '../../db/schema/index.ts';
import { randomBase62 } from '../../lib/ids.ts';
import { sha256Hex } from '../../lib/digest.ts';
import { queueBillingApply } from './apply-job.ts';

// biome-ignore lint/suspicious/noExplicitAny: platform payloads are untyped JSON
type Json = any;

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

// Stripe's `created` is in seconds and one action often yields several events in the same second:
// within a second, an object's events are ordered by where their type falls in its lifecycle.
const STRIPE_RANKS: Record<string, number> = {
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

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const idOf = (value: Json): string | null => str(value) ?? str(value?.id);

export function classifyStripeEvent(body: Json, mode: 'live' | 'test'): ClassifiedEvent {
  const type = String(body?.type ?? '');
  const object = body?.data?.object ?? {};
  const occurredAt = Number(body?.created) || 0;
  const rank = STRIPE_RANKS[type];
  const objectType: BillingObjectType | null =
    rank === undefined
      ? null
      : type.startsWith('customer.subscription.')
        ? 'subscription'
        : type.startsWith('invoice.')
          ? 'invoice'
          : 'customer';
  const livemode = body?.livemode === true;
  const ignored =
    livemode !== (mode === 'live')
      ? `a ${livemode ? 'live' : 'test'}-mode event; this connector takes ${mode} mode`
      : objectType === null
        ? `type ${type || '(none)'} is not synced`
        : !str(object.id)
          ? 'the event has no object id'
          : null;
  return {
    eventId: String(body?.id ?? ''),
    type,
    objectType,
    objectId: str(object.id),
    customerRef: objectType === 'customer' ? str(object.id) : idOf(object.customer),
    subscriptionRef:
      objectType === 'subscription'
        ? str(object.id)
        : objectType === 'invoice'
          ? (idOf(object.parent?.subscription_details?.subscription) ?? idOf(object.subscription))
          : null,
    occurredAt,
    objectVersion: occurredAt * 1000 + (rank ?? 0),
    ignored,
  };
}

/** Chargebee has no live/test flag (a site is one or the other) and orders by `resource_version`. */
export function classifyChargebeeEvent(body: Json): ClassifiedEvent {
  const type = String(body?.event_type ?? '');
  const content = body?.content ?? {};
  const occurredAt = Number(body?.occurred_at) || 0;
  const objectType: BillingObjectType | null = type.startsWith('subscription_')
    ? 'subscription'
    : type.startsWith('customer_')
      ? 'customer'
      : type.startsWith('invoice_') || type === 'payment_succeeded'
        ? 'invoice'
        : null;
  const object = objectType ? content[objectType] : null;
  const ignored =
    objectType === null ? `type ${type || '(none)'} is not synced` : !str(object?.id) ? `the event has no ${objectType}` : null;
  return {
    eventId: String(body?.id ?? ''),
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

export const classifyEvent = (connector: Pick<BillingConnector, 'platform' | 'mode'>, body: Json) =>
  connector.platform === 'stripe' ? classifyStripeEvent(body, connector.mode) : classifyChargebeeEvent(body);

/** An object a backfill read, as the event it would have been: its id is the object's and the
 * digest of its content, so reading an unchanged object again stores nothing. */
export function syncEventOf(
  platform: 'stripe' | 'chargebee',
  objectType: BillingObjectType,
  object: Json,
  readAt: number,
  livemode?: boolean,
) {
  const digest = sha256Hex(JSON.stringify(object)).slice(0, 24);
  const id = `sync:${String(object.id)}:${digest}`;
  if (platform === 'stripe') {
    const type =
      objectType === 'subscription' ? 'customer.subscription.updated' : objectType === 'invoice' ? 'invoice.updated' : 'customer.updated';
    return { id, object: 'event', type, created: readAt, livemode: livemode ?? object.livemode === true, data: { object } };
  }
  const type = `${objectType}_changed`;
  return { id, object: 'event', event_type: type, occurred_at: readAt, content: { [objectType]: object } };
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
  args: { connector: Pick<BillingConnector, 'id' | 'orgId' | 'platform' | 'mode'>; body: Json; source: 'webhook' | 'sync' },
): Promise<StoredBillingEvent> {
  const event = classifyEvent(args.connector, args.body);
  if (!event.eventId) throw new Error('a billing event needs its id');
  const state: BillingEventState = event.ignored ? 'ignored' : 'pending';
  const id = `bev_${randomBase62(20)}`;
  const inserted = rowsOf<{ id: string }>(
    await db.execute(sql`
      insert into billing_events (id, org_id, connector_id, event_id, type, object_type, object_id, customer_ref, subscription_ref,
        occurred_at, object_version, source, body, state, detail)
      values (${id}, ${args.connector.orgId}, ${args.connector.id}, ${event.eventId}, ${event.type}, ${event.objectType}, ${event.objectId},
        ${event.customerRef}, ${event.subscriptionRef}, to_timestamp(${event.occurredAt}), ${event.objectVersion}, ${args.source},
        ${JSON.stringify(args.body)}::jsonb, ${state}, ${event.ignored})
      on conflict (connector_id, event_id) do nothing
      returning id`),
  );
  if (inserted[0]) {
    if (state === 'pending') await queueBillingApply(db, args.connector);
    return { id, created: true, state };
  }
  const [existing] = rowsOf<{ id: string; state: BillingEventState }>(
    await db.execute(sql`select id, state from billing_events where connector_id = ${args.connector.id} and event_id = ${event.eventId}`),
  );
  return { id: existing!.id, created: false, state: existing!.state };
}
