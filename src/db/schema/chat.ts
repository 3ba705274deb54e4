import { sql } from 'drizzle-orm';
import { check, foreignKey, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { CHAT_PLATFORMS } from './agent-actions.ts';
import { outboxAttempts, timestamps, timestamptz } from './columns.ts';

const inList = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));

/** Which Slack workspace (Google Chat space, WhatsApp number) belongs to which organisation
 * (`revintel chat add`). `external_id` is the platform's own id of it: the Slack team id, the
 * Google Chat space name, the WhatsApp phone number id. The platform's token is sealed under
 * SECRET_KEY, bound to the installation's id, as connector secrets are. */
export const chatInstallations = pgTable(
  'chat_installations',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    platform: text('platform').notNull(),
    externalId: text('external_id').notNull(),
    /** The bot token (Slack), access token (WhatsApp); null where the platform needs none of its own. */
    credentialsSealed: text('credentials_sealed'),
    /** Platform details that are not secret (Slack: the bot's user id once known). */
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    ...timestamps,
    removedAt: timestamptz('removed_at'),
  },
  (table) => [
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
    uniqueIndex('chat_installations_platform_external_unique').on(table.platform, table.externalId).where(sql`${table.removedAt} is null`),
    index('chat_installations_org_idx').on(table.orgId),
    check('chat_installations_platform_check', sql`${table.platform} in (${inList(CHAT_PLATFORMS)})`),
  ],
);

export const CHAT_SEND_KINDS = ['post', 'update', 'reply', 'ephemeral'] as const;
export type ChatSendKind = (typeof CHAT_SEND_KINDS)[number];

/** The outbox of calls to chat platforms: an approval request posted, a copy updated after a
 * decision, an answer in a thread, a private notice. Sent by `chat.send` jobs with the outbox's
 * back-off; `request` is the call (method and JSON body) as far as it is known when queued. */
export const chatSends = pgTable(
  'chat_sends',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    installationId: text('installation_id').notNull(),
    notificationId: text('notification_id'),
    actionId: text('action_id'),
    platform: text('platform').notNull(),
    kind: text('kind').$type<ChatSendKind>().notNull(),
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    status: text('status').notNull().default('pending'),
    ...outboxAttempts,
    ...timestamps,
  },
  (table) => [
    foreignKey({ columns: [table.installationId], foreignColumns: [chatInstallations.id] }).onDelete('cascade'),
    index('chat_sends_org_created_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    index('chat_sends_notification_idx').on(table.notificationId),
    check('chat_sends_status_check', sql`${table.status} in ('pending', 'delivered', 'dead')`),
    check('chat_sends_kind_check', sql`${table.kind} in (${inList(CHAT_SEND_KINDS)})`),
  ],
);

/** Every inbound chat event, stored once (the platform's ids as `dedupe_key`) before its effects,
 * with what came of it. */
export const chatInboundEvents = pgTable(
  'chat_inbound_events',
  {
    id: text('id').primaryKey(),
    platform: text('platform').notNull(),
    dedupeKey: text('dedupe_key').notNull(),
    installationId: text('installation_id'),
    orgId: text('org_id'),
    type: text('type').notNull(),
    /** received (stored; its processing is a queued job: WhatsApp), processed, denied (nothing
     * changed; the sender was told why) or ignored. */
    outcome: text('outcome').notNull(),
    detail: text('detail'),
    body: jsonb('body').$type<unknown>(),
    /** A large WhatsApp delivery's body as it came (one `delivery` event, worked through by its
     * `whatsapp.batch` job): stored as text, uncompressed, so that storing it in the request is
     * one cheap write. */
    raw: text('raw'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [
    uniqueIndex('chat_inbound_events_dedupe_unique').on(table.platform, table.dedupeKey),
    index('chat_inbound_events_org_idx').on(table.orgId, table.createdAt),
    check('chat_inbound_events_outcome_check', sql`${table.outcome} in ('received', 'processed', 'denied', 'ignored')`),
  ],
);
