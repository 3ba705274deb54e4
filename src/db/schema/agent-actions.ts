import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  date,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { customers } from './customers.ts';
import { timestamps, timestamptz } from './columns.ts';

export const CSM_ROLES = ['csm', 'manager', 'admin'] as const;
export type CsmRole = (typeof CSM_ROLES)[number];
export const CHAT_PLATFORMS = ['slack', 'google_chat', 'whatsapp'] as const;
export type ChatPlatform = (typeof CHAT_PLATFORMS)[number];

export const ACTION_TYPES = ['check_in', 'escalation', 'discount_offer', 'renewal_call', 'success_plan'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];
export const ACTION_REASONS = ['risk_rise', 'churn_signal', 'renewal_due', 'overdue', 'manual'] as const;
export type ActionReason = (typeof ACTION_REASONS)[number];
export const ACTION_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type ActionPriority = (typeof ACTION_PRIORITIES)[number];
export const ACTION_STATUSES = [
  'proposed',
  'pending_approval',
  'approved',
  'executed',
  'rejected',
  'snoozed',
  'expired',
  'cancelled',
  'failed',
] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];
/** Statuses in which an action is still open: at most one open action per (customer, type). */
export const OPEN_ACTION_STATUSES = ['proposed', 'pending_approval', 'approved', 'snoozed'] as const satisfies readonly ActionStatus[];

const inList = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));

/** Customer-success managers. Created by a trigger (migration 0024) the first time a customer's
 * `csm.email` names an e-mail no CSM of its organisation has; role and channels are set later. */
export const csms = pgTable(
  'csms',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    name: text('name'),
    /** Stored lower-cased: unique per organisation. */
    email: text('email').notNull(),
    phone: text('phone'),
    slackUserId: text('slack_user_id'),
    role: text('role').$type<CsmRole>().notNull().default('csm'),
    /** Ordered subset of slack, google_chat, whatsapp. */
    channels: jsonb('channels').$type<ChatPlatform[]>().notNull().default([]),
    active: boolean('active').notNull().default(true),
    /** The CSM's last inbound WhatsApp message: it opens Meta's 24-hour window, inside which free
     * messages (interactive buttons, texts) may be sent; outside it only a template. */
    whatsappInboundAt: timestamptz('whatsapp_inbound_at'),
    ...timestamps,
  },
  (table) => [
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
    uniqueIndex('csms_org_email_unique').on(table.orgId, table.email),
    index('csms_org_created_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    check('csms_role_check', sql`${table.role} in (${inList(CSM_ROLES)})`),
    check('csms_email_lower_check', sql`${table.email} = lower(${table.email})`),
  ],
);
export type CsmRecord = typeof csms.$inferSelect;

/** Who decided an action (docs/agent-actions.md → Lifecycle: `decided_by`). */
export interface DecidedBy {
  kind: 'csm' | 'user' | 'api_key' | 'system';
  csm_id?: string;
  user_id?: string;
  key_id?: string;
  /** A display name for messages ("already approved by Ana at 14:02"). */
  name?: string;
  platform?: string;
  at: string;
}

/** Where an action was sent when it was proposed: its CSM's channels, the managers', or the inbox. */
export interface ActionRouting {
  to: 'csm' | 'managers' | 'inbox';
  csm_ids: string[];
  channels: ChatPlatform[];
  /** Why it went there, in words. */
  note: string;
}

export const agentActions = pgTable(
  'agent_actions',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    customerId: text('customer_id').notNull(),
    type: text('type').$type<ActionType>().notNull(),
    params: jsonb('params').$type<Record<string, unknown>>().notNull(),
    reason: text('reason').$type<ActionReason>().notNull(),
    rationale: text('rationale'),
    priority: text('priority').$type<ActionPriority>().notNull().default('normal'),
    status: text('status').$type<ActionStatus>().notNull(),
    requiresApproval: boolean('requires_approval').notNull().default(true),
    csmId: text('csm_id'),
    routing: jsonb('routing').$type<ActionRouting>(),
    decidedBy: jsonb('decided_by').$type<DecidedBy>(),
    decidedAt: timestamptz('decided_at'),
    decisionComment: text('decision_comment'),
    snoozedUntil: timestamptz('snoozed_until'),
    expiresAt: timestamptz('expires_at'),
    executedAt: timestamptz('executed_at'),
    lastError: text('last_error'),
    triggerCount: integer('trigger_count').notNull().default(1),
    ...timestamps,
  },
  (table) => [
    foreignKey({ columns: [table.orgId, table.customerId], foreignColumns: [customers.orgId, customers.id] }).onDelete('cascade'),
    foreignKey({ columns: [table.csmId], foreignColumns: [csms.id] }).onDelete('set null'),
    uniqueIndex('agent_actions_one_open')
      .on(table.orgId, table.customerId, table.type)
      .where(sql`${table.status} in (${inList(OPEN_ACTION_STATUSES)})`),
    index('agent_actions_org_created_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    index('agent_actions_org_customer_type_idx').on(table.orgId, table.customerId, table.type, table.decidedAt),
    index('agent_actions_expiry_idx').on(table.expiresAt).where(sql`${table.status} in ('proposed', 'pending_approval')`),
    index('agent_actions_wake_idx').on(table.snoozedUntil).where(sql`${table.status} = 'snoozed'`),
    check('agent_actions_type_check', sql`${table.type} in (${inList(ACTION_TYPES)})`),
    check('agent_actions_reason_check', sql`${table.reason} in (${inList(ACTION_REASONS)})`),
    check('agent_actions_priority_check', sql`${table.priority} in (${inList(ACTION_PRIORITIES)})`),
    check('agent_actions_status_check', sql`${table.status} in (${inList(ACTION_STATUSES)})`),
  ],
);
export type AgentAction = typeof agentActions.$inferSelect;

/** `window_closed`: a WhatsApp copy cannot be edited, and the decision's follow-up text could not be
 * sent because the CSM's 24-hour window had closed. */
export const NOTIFICATION_STATUSES = ['pending', 'sent', 'failed', 'no_sender', 'updated', 'window_closed'] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** One copy of an action's approval request on one platform, for one person: what a platform
 * sender posts and later updates. `nonce` (128 bits) is carried by the copy's buttons. */
export const actionNotifications = pgTable(
  'action_notifications',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    actionId: text('action_id')
      .notNull()
      .references(() => agentActions.id, { onDelete: 'cascade' }),
    csmId: text('csm_id'),
    platform: text('platform').$type<ChatPlatform>().notNull(),
    /** The platform's address of the recipient (Slack user id, Google e-mail, WhatsApp number). */
    target: text('target'),
    nonce: text('nonce').notNull(),
    status: text('status').$type<NotificationStatus>().notNull(),
    /** The platform's id of the posted message (Slack `ts`, Google message name, WhatsApp wamid). */
    platformMessageId: text('platform_message_id'),
    /** Where the message is (Slack: the DM's channel id, which `chat.update` needs with the ts). */
    platformChannel: text('platform_channel'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    /** What the platform reported about the sent message since (WhatsApp `statuses[]`: sent,
     * delivered, read, failed) and when. */
    platformStatus: text('platform_status'),
    platformStatusAt: timestamptz('platform_status_at'),
    ...timestamps,
  },
  (table) => [
    index('action_notifications_action_idx').on(table.actionId),
    // WhatsApp statuses and replies name the message (wamid), not the action.
    index('action_notifications_message_idx').on(table.orgId, table.platform, table.platformMessageId),
    check('action_notifications_status_check', sql`${table.status} in (${inList(NOTIFICATION_STATUSES)})`),
    check('action_notifications_platform_check', sql`${table.platform} in (${inList(CHAT_PLATFORMS)})`),
  ],
);

/** An action's history: proposed, routed, triggered again, decided, woken, expired, executed… */
export const actionEvents = pgTable(
  'action_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    orgId: text('org_id').notNull(),
    actionId: text('action_id')
      .notNull()
      .references(() => agentActions.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    actor: jsonb('actor').$type<Record<string, unknown>>(),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [index('action_events_action_idx').on(table.actionId, table.id)],
);

/** Work for a CSM, made by an executed action. */
export const tasks = pgTable(
  'tasks',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    customerId: text('customer_id').notNull(),
    csmId: text('csm_id'),
    actionId: text('action_id').references(() => agentActions.id, { onDelete: 'set null' }),
    title: text('title').notNull(),
    dueDate: date('due_date', { mode: 'string' }),
    status: text('status').$type<'open' | 'done'>().notNull().default('open'),
    ...timestamps,
  },
  (table) => [
    foreignKey({ columns: [table.orgId, table.customerId], foreignColumns: [customers.orgId, customers.id] }).onDelete('cascade'),
    foreignKey({ columns: [table.csmId], foreignColumns: [csms.id] }).onDelete('set null'),
    uniqueIndex('tasks_action_unique').on(table.actionId),
    index('tasks_org_created_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    check('tasks_status_check', sql`${table.status} in ('open', 'done')`),
  ],
);

/** Notes on a customer: by an executed action, or (later) by a CSM from chat. */
export const customerNotes = pgTable(
  'customer_notes',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    customerId: text('customer_id').notNull(),
    actionId: text('action_id').references(() => agentActions.id, { onDelete: 'set null' }),
    author: text('author').notNull(),
    body: text('body').notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [
    foreignKey({ columns: [table.orgId, table.customerId], foreignColumns: [customers.orgId, customers.id] }).onDelete('cascade'),
    uniqueIndex('customer_notes_action_unique').on(table.actionId),
    index('customer_notes_customer_idx').on(table.orgId, table.customerId, table.createdAt.desc(), table.id.desc()),
  ],
);

/** An organisation's action rules (PUT /api/action-rules); absent: the defaults. */
export const actionRules = pgTable('action_rules', {
  orgId: text('org_id')
    .primaryKey()
    .references(() => organisations.id, { onDelete: 'cascade' }),
  rules: jsonb('rules').$type<unknown[]>().notNull(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

/** Which rule fired for which renewal: a renewal fires its rule once per contract end. */
export const actionRuleFirings = pgTable(
  'action_rule_firings',
  {
    orgId: text('org_id').notNull(),
    key: text('key').notNull(),
    firedAt: timestamptz('fired_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.orgId, table.key] }),
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
  ],
);

export const OUTBOUND_EVENT_TYPES = [
  'agent_action.proposed',
  'agent_action.approved',
  'agent_action.rejected',
  'agent_action.executed',
  'prediction.risk_changed',
] as const;
export type OutboundEventType = (typeof OUTBOUND_EVENT_TYPES)[number];

/** Events for the organisation's own endpoints (docs/agent-actions.md "Outbound events"), recorded in the transaction of the
 * change they describe; the outbox delivers each to every endpoint subscribed at the time. */
export const outboundEvents = pgTable(
  'outbound_events',
  {
    /** `msg_…`: the Standard Webhooks `webhook-id`, the same on every retry. */
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    type: text('type').$type<OutboundEventType>().notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
    index('outbound_events_org_created_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
  ],
);
