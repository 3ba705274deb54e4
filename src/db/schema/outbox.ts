import { sql } from 'drizzle-orm';
import { check, foreignKey, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { outboundEvents } from './agent-actions.ts';
import { outboxAttempts, timestamps, timestamptz } from './columns.ts';

/** The organisation's own receivers of outbound events (`revintel endpoints add`). The signing
 * secret is sealed under SECRET_KEY, bound to the endpoint's id; it is shown once, at creation. */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    url: text('url').notNull(),
    /** The event types it receives; null: all. */
    events: jsonb('events').$type<string[] | null>(),
    secretSealed: text('secret_sealed').notNull(),
    ...timestamps,
    /** Removed endpoints keep their deliveries' history and receive nothing more. */
    removedAt: timestamptz('removed_at'),
  },
  (table) => [
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
    index('webhook_endpoints_org_idx').on(table.orgId),
  ],
);

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The outbox: one row per (event, endpoint), delivered by `outbox.deliver` jobs with back-off. */
export const eventDeliveries = pgTable(
  'event_deliveries',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id')
      .notNull()
      .references(() => outboundEvents.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
    ...outboxAttempts,
    ...timestamps,
  },
  (table) => [
    uniqueIndex('event_deliveries_event_endpoint_unique').on(table.eventId, table.endpointId),
    index('event_deliveries_org_created_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    index('event_deliveries_status_idx').on(table.status),
    check('event_deliveries_status_check', sql`${table.status} in ('pending', 'delivered', 'dead')`),
  ],
);
