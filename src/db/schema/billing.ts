import { sql } from 'drizzle-orm';
import { bigint, check, foreignKey, index, integer, jsonb, pgTable, text, unique } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { timestamps, timestamptz } from './columns.ts';

export const BILLING_PLATFORMS = ['stripe', 'chargebee'] as const;
export type BillingPlatform = (typeof BILLING_PLATFORMS)[number];
export const BILLING_MODES = ['live', 'test'] as const;
export type BillingMode = (typeof BILLING_MODES)[number];

/** A billing system an organisation's customers, contracts and invoices come from (docs/billing.md).
 * The id is in the webhook URL, so it is unguessable like a ticket connector's. */
export const billingConnectors = pgTable(
  'billing_connectors',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    name: text('name').notNull(),
    platform: text('platform', { enum: BILLING_PLATFORMS }).notNull(),
    /** Stripe sends both modes to one account; a connector takes one and ignores the other's events. */
    mode: text('mode', { enum: BILLING_MODES }).notNull().default('live'),
    /** Chargebee's site (`acme` of acme.chargebee.com); null for Stripe. */
    site: text('site'),
    /** Stripe's endpoint signing secret, sealed (lib/secret-box.ts), bound to the connector id. */
    webhookSecretSealed: text('webhook_secret_sealed'),
    previousWebhookSecretSealed: text('previous_webhook_secret_sealed'),
    previousSecretExpiresAt: timestamptz('previous_secret_expires_at'),
    /** The API key the backfill reads with, sealed. */
    apiKeySealed: text('api_key_sealed'),
    /** Chargebee's webhook Basic credentials `user:pass`, sealed (compared in constant time). */
    basicAuthSealed: text('basic_auth_sealed'),
    ...timestamps,
  },
  (table) => [
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
    unique('billing_connectors_org_id_id_unique').on(table.orgId, table.id),
    unique('billing_connectors_org_name_unique').on(table.orgId, table.name),
    check('billing_connectors_platform_check', sql`${table.platform} in ('stripe', 'chargebee')`),
    check('billing_connectors_mode_check', sql`${table.mode} in ('live', 'test')`),
    check('billing_connectors_site_check', sql`(${table.platform} = 'chargebee') = (${table.site} is not null)`),
  ],
);

export type BillingConnector = typeof billingConnectors.$inferSelect;

export const BILLING_EVENT_STATES = ['pending', 'applied', 'ignored', 'dead'] as const;
export type BillingEventState = (typeof BILLING_EVENT_STATES)[number];
export const BILLING_OBJECT_TYPES = ['customer', 'subscription', 'invoice'] as const;
export type BillingObjectType = (typeof BILLING_OBJECT_TYPES)[number];

/** Every event a billing connector received (webhook) or read (backfill), kept raw: a contract's
 * history is derived from all of its subscription's snapshots, whatever order they arrived in. */
export const billingEvents = pgTable(
  'billing_events',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    connectorId: text('connector_id').notNull(),
    /** The platform's event id (`evt_…`, `ev_…`), or `sync:<object id>:<digest>` for a backfill read. */
    eventId: text('event_id').notNull(),
    type: text('type').notNull(),
    /** What the snapshot is of; null for a type the sync does not map (stored as ignored). */
    objectType: text('object_type', { enum: BILLING_OBJECT_TYPES }),
    objectId: text('object_id'),
    /** The billing customer a subscription or invoice belongs to, and an invoice's subscription:
     * what a late snapshot of one of them must bring up to date. */
    customerRef: text('customer_ref'),
    subscriptionRef: text('subscription_ref'),
    /** When the platform says it happened (Stripe `created`, Chargebee `occurred_at`). */
    occurredAt: timestamptz('occurred_at').notNull(),
    /** Order among one object's snapshots: Chargebee's `resource_version`; Stripe's `created` in ms
     * plus the type's lifecycle rank (ties within a second are common). */
    objectVersion: bigint('object_version', { mode: 'number' }).notNull(),
    source: text('source', { enum: ['webhook', 'sync'] }).notNull(),
    /** The event as JSON text, as received (a backfill's read as serialised): text, not jsonb, since
     * nothing queries inside it and the apply job parses it anyway. As jsonb PostgreSQL parsed each
     * 3 KB Stripe event on ingest: 150 µs of its CPU a row stored against 70 as text (migration 0036). */
    body: text('body').notNull(),
    state: text('state', { enum: BILLING_EVENT_STATES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    detail: text('detail'),
    receivedAt: timestamptz('received_at').notNull().defaultNow(),
    appliedAt: timestamptz('applied_at'),
  },
  (table) => [
    foreignKey({ columns: [table.orgId, table.connectorId], foreignColumns: [billingConnectors.orgId, billingConnectors.id] }).onDelete(
      'cascade',
    ),
    unique('billing_events_connector_event_unique').on(table.connectorId, table.eventId),
    index('billing_events_object_idx').on(table.connectorId, table.objectType, table.objectId),
    index('billing_events_pending_idx').on(table.connectorId, table.state),
    index('billing_events_customer_idx').on(table.connectorId, table.customerRef),
    index('billing_events_subscription_idx').on(table.connectorId, table.subscriptionRef),
    // The status's last event (`order by received_at desc, id desc limit 1`) and a backfill's events
    // (received while it ran): read from the end of the connector's range, not sorted from all of it.
    index('billing_events_received_idx').on(table.connectorId, table.receivedAt, table.id),
    check('billing_events_state_check', sql`${table.state} in ('pending', 'applied', 'ignored', 'dead')`),
  ],
);

export type BillingEvent = typeof billingEvents.$inferSelect;

export const BILLING_SYNC_STATES = ['running', 'done', 'failed'] as const;

/** One backfill of a connector: where it is (the phase and the last page fully stored), so a run
 * killed mid-way resumes from there, and its report. */
export const billingSyncs = pgTable(
  'billing_syncs',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    connectorId: text('connector_id').notNull(),
    state: text('state', { enum: BILLING_SYNC_STATES }).notNull().default('running'),
    /** customers, subscriptions, invoices, then done. */
    phase: text('phase').notNull().default('customers'),
    /** The platform's cursor after the last page stored (Stripe: the last id; Chargebee: next_offset). */
    cursor: text('cursor'),
    pages: integer('pages').notNull().default(0),
    requests: integer('requests').notNull().default(0),
    rateLimited: integer('rate_limited').notNull().default(0),
    /** Counts per object type: read, stored (new snapshot), unchanged (seen before). */
    report: jsonb('report').$type<Record<string, Record<string, number>>>().notNull().default({}),
    error: text('error'),
    ...timestamps,
    finishedAt: timestamptz('finished_at'),
  },
  (table) => [
    foreignKey({ columns: [table.orgId, table.connectorId], foreignColumns: [billingConnectors.orgId, billingConnectors.id] }).onDelete(
      'cascade',
    ),
    index('billing_syncs_connector_idx').on(table.connectorId, table.createdAt),
  ],
);

export type BillingSync = typeof billingSyncs.$inferSelect;
