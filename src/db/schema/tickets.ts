import { sql } from 'drizzle-orm';
import { check, foreignKey, index, integer, jsonb, pgTable, primaryKey, real, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { connectors } from './connectors.ts';
import { timestamps, timestamptz } from './columns.ts';

export const EVENT_STATUSES = ['pending', 'processing', 'done', 'dead'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];
export const EVENT_SOURCES = ['webhook', 'import'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

/** The durable queue of inbound ticket events: a webhook delivery or an imported ticket, stored as
 * received before anyone answers, then processed by a worker thread. `pending` waits for
 * `run_after`; `processing` is held by `lease_owner` until `lease_until` (a worker that dies lets its
 * lease run out and another takes the event again); `done` carries its result; `dead` gave up after
 * the last attempt (or at once when no retry can help: modules/tickets/queue/retry.ts) and keeps the
 * reason until replayed. */
export const ticketEvents = pgTable(
  'ticket_events',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    connectorId: text('connector_id').notNull(),
    source: text('source').$type<EventSource>().notNull(),
    /** The import request it came in (ticket_import_batches), and its index there. */
    batchId: text('batch_id'),
    itemIndex: integer('item_index'),
    /** The body as received (text, not jsonb: parsing waits for the worker, and keeps the bytes). */
    body: text('body').notNull(),
    /** The request headers an adapter may need (Help Scout names its event in one). */
    headers: jsonb('headers').$type<Record<string, string>>().notNull().default({}),
    /** What makes a re-delivery the same event: the platform's delivery id, or a hash of an imported
     * item. A second copy is not stored again. */
    dedupeKey: text('dedupe_key'),
    status: text('status').$type<EventStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    runAfter: timestamptz('run_after').notNull().defaultNow(),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamptz('lease_until'),
    lastError: text('last_error'),
    /** The tickets it made or updated. */
    ticketIds: jsonb('ticket_ids').$type<string[]>(),
    receivedAt: timestamptz('received_at').notNull().defaultNow(),
    processedAt: timestamptz('processed_at'),
  },
  (table) => [
    foreignKey({ columns: [table.orgId, table.connectorId], foreignColumns: [connectors.orgId, connectors.id] }).onDelete('cascade'),
    uniqueIndex('ticket_events_dedupe_unique').on(table.connectorId, table.dedupeKey).where(sql`${table.dedupeKey} is not null`),
    // What a worker claims next, and what it takes back from a worker that died.
    index('ticket_events_due_idx').on(table.runAfter, table.id).where(sql`${table.status} = 'pending'`),
    index('ticket_events_leased_idx').on(table.leaseUntil).where(sql`${table.status} = 'processing'`),
    index('ticket_events_org_received_idx').on(table.orgId, table.receivedAt.desc(), table.id.desc()),
    index('ticket_events_batch_idx').on(table.batchId).where(sql`${table.batchId} is not null`),
    index('ticket_events_dead_idx').on(table.receivedAt).where(sql`${table.status} = 'dead'`),
    check('ticket_events_status_check', sql`${table.status} in ('pending', 'processing', 'done', 'dead')`),
    check('ticket_events_source_check', sql`${table.source} in ('webhook', 'import')`),
  ],
);

export type TicketEvent = typeof ticketEvents.$inferSelect;

/** One ticket per (connector, id on the platform), as the latest event described it, with its
 * intelligence and its customer. */
export const tickets = pgTable(
  'tickets',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    connectorId: text('connector_id').notNull(),
    externalId: text('external_id').notNull(),
    /** Linked by requester e-mail, then by its domain; null when no customer matches. */
    customerId: text('customer_id'),
    subject: text('subject'),
    description: text('description'),
    status: text('status'),
    statusNormalised: text('status_normalised'),
    priority: text('priority'),
    priorityNormalised: text('priority_normalised'),
    requesterEmail: text('requester_email'),
    sourceCreatedAt: timestamptz('source_created_at'),
    /** The platform's time for the version stored: an older event never overwrites a newer one. */
    sourceUpdatedAt: timestamptz('source_updated_at'),
    sentiment: real('sentiment'),
    urgency: text('urgency'),
    topics: jsonb('topics').$type<string[]>().notNull().default([]),
    churnSignals: jsonb('churn_signals').$type<string[]>().notNull().default([]),
    /** The intelligence of the first event that carried text, never replaced afterwards: what was
     * known of the ticket when it came in, which is what a churn prediction for a past day may read
     * (later events rewrite the columns above). */
    firstSentiment: real('first_sentiment'),
    firstUrgency: text('first_urgency'),
    firstChurnSignals: jsonb('first_churn_signals').$type<string[]>(),
    /** What produced the intelligence (e.g. "afinn-165+phrase-grammar" version "2"). */
    intelligenceMethod: text('intelligence_method'),
    intelligenceVersion: text('intelligence_version'),
    lastEventId: text('last_event_id'),
    ...timestamps,
  },
  (table) => [
    foreignKey({ columns: [table.orgId, table.connectorId], foreignColumns: [connectors.orgId, connectors.id] }).onDelete('cascade'),
    uniqueIndex('tickets_connector_external_unique').on(table.connectorId, table.externalId),
    index('tickets_org_created_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    index('tickets_org_updated_idx').on(table.orgId, table.updatedAt, table.id),
    index('tickets_org_customer_idx').on(table.orgId, table.customerId),
    index('tickets_org_requester_idx').on(table.orgId, table.requesterEmail, table.sourceCreatedAt),
    check('tickets_sentiment_range', sql`${table.sentiment} is null or ${table.sentiment} between -1 and 1`),
  ],
);

export type Ticket = typeof tickets.$inferSelect;

/** One row per import request (POST /api/ticket-intelligence/import): what it received; its
 * progress is read from its events. */
export const ticketImportBatches = pgTable(
  'ticket_import_batches',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    connectorId: text('connector_id').notNull(),
    received: integer('received').notNull(),
    accepted: integer('accepted').notNull(),
    duplicates: integer('duplicates').notNull(),
    rejected: jsonb('rejected').$type<{ index: number; error: string }[]>().notNull().default([]),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [
    foreignKey({ columns: [table.orgId, table.connectorId], foreignColumns: [connectors.orgId, connectors.id] }).onDelete('cascade'),
    index('ticket_import_batches_org_idx').on(table.orgId, table.id),
  ],
);

/** Customers whose churn-risk inputs changed since their prediction was last computed (the churn
 * predictions recompute these). */
export const riskInputChanges = pgTable(
  'risk_input_changes',
  {
    orgId: text('org_id').notNull(),
    customerId: text('customer_id').notNull(),
    changedAt: timestamptz('changed_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.orgId, table.customerId] }),
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
  ],
);
