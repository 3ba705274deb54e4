// The agent actions' schemas (docs/agent-actions.md): what each route takes and answers. Params are
// checked per action type (PARAMS), so a bad one is a 400 naming `params.<field>`.
import { Type as t, type TSchema } from '@sinclair/typebox';
import {
  ACTION_PRIORITIES,
  ACTION_REASONS,
  ACTION_STATUSES,
  ACTION_TYPES,
  CHAT_PLATFORMS,
  CSM_ROLES,
  NOTIFICATION_STATUSES,
  OUTBOUND_EVENT_TYPES,
  RISK_BANDS,
  type ActionType,
} from '../../db/schema/index.ts';
import { email, enumOf, label, nullable } from '../../lib/record-fields.ts';

const wholeNumber = (min: number, max: number) =>
  t.Integer({ minimum: min, maximum: max, error: `must be a whole number from ${min} to ${max}` });
const note = t.String({ minLength: 1, maxLength: 2000 });

/** Each type's params (docs/agent-actions.md). */
export const PARAMS = {
  check_in: t.Object(
    { channel: enumOf(['email', 'call', 'meeting'] as const), due_in_days: wholeNumber(1, 30), note: t.Optional(note) },
    { additionalProperties: false },
  ),
  escalation: t.Object({ to: enumOf(['manager', 'executive'] as const), note }, { additionalProperties: false }),
  discount_offer: t.Object(
    { percent: wholeNumber(1, 50), months: wholeNumber(1, 24), note: t.Optional(note) },
    { additionalProperties: false },
  ),
  renewal_call: t.Object({ due_in_days: wholeNumber(1, 90) }, { additionalProperties: false }),
  success_plan: t.Object(
    { goals: t.Array(t.String({ minLength: 1, maxLength: 500 }), { minItems: 1, maxItems: 20 }) },
    { additionalProperties: false },
  ),
} as const satisfies Record<ActionType, TSchema>;

export const ActionCreate = t.Object(
  {
    customer_id: t.String({ minLength: 1, maxLength: 300 }),
    type: enumOf(ACTION_TYPES),
    params: t.Record(t.String(), t.Unknown(), { error: 'must be a JSON object' }),
    reason: t.Optional(enumOf(ACTION_REASONS)),
    rationale: t.Optional(t.String({ minLength: 1, maxLength: 4000 })),
    priority: t.Optional(enumOf(ACTION_PRIORITIES)),
    requires_approval: t.Optional(t.Boolean()),
    /** Propose even during a rejection's cool-down. */
    force: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
);
export type ActionCreate = typeof ActionCreate.static;

export const ActionParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) });

export const DecisionBody = t.Object({ comment: t.Optional(t.String({ minLength: 1, maxLength: 2000 })) }, { additionalProperties: false });
export const SnoozeBody = t.Object(
  { comment: t.Optional(t.String({ minLength: 1, maxLength: 2000 })), days: t.Optional(wholeNumber(1, 30)) },
  { additionalProperties: false },
);

export const ListActionsQuery = t.Object(
  {
    status: t.Optional(enumOf(ACTION_STATUSES)),
    type: t.Optional(enumOf(ACTION_TYPES)),
    customer_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
    csm_id: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
    limit: t.Optional(t.String()),
    cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);

const time = t.String();
const DecidedBy = t.Object({
  kind: enumOf(['csm', 'user', 'api_key', 'system'] as const),
  csm_id: t.Optional(t.String()),
  user_id: t.Optional(t.String()),
  key_id: t.Optional(t.String()),
  name: t.Optional(t.String()),
  platform: t.Optional(t.String()),
  at: time,
});

export const Action = t.Object({
  id: t.String(),
  customer_id: t.String(),
  /** The customer's name as it is now (a read convenience: lists need not fetch each customer). */
  customer_name: t.String(),
  type: enumOf(ACTION_TYPES),
  params: t.Record(t.String(), t.Unknown()),
  reason: enumOf(ACTION_REASONS),
  rationale: nullable(t.String()),
  priority: enumOf(ACTION_PRIORITIES),
  status: enumOf(ACTION_STATUSES),
  requires_approval: t.Boolean(),
  csm_id: nullable(t.String()),
  routing: nullable(
    t.Object({
      to: enumOf(['csm', 'managers', 'inbox'] as const),
      csm_ids: t.Array(t.String()),
      channels: t.Array(enumOf(CHAT_PLATFORMS)),
      note: t.String(),
    }),
  ),
  decided_by: nullable(DecidedBy),
  decision_comment: nullable(t.String()),
  snoozed_until: nullable(time),
  expires_at: nullable(time),
  executed_at: nullable(time),
  trigger_count: t.Integer(),
  last_error: nullable(t.String()),
  created_at: time,
  updated_at: time,
});

/** POST /api/agent-actions: the action, and whether an open one was found instead of a new one. */
export const ProposedAction = t.Composite([Action, t.Object({ deduplicated: t.Boolean() })]);

export const Notification = t.Object({
  id: t.String(),
  platform: enumOf(CHAT_PLATFORMS),
  csm_id: nullable(t.String()),
  target: nullable(t.String()),
  status: enumOf(NOTIFICATION_STATUSES),
  platform_message_id: nullable(t.String()),
  /** Where the message is (Slack: the DM's channel id). */
  platform_channel: nullable(t.String()),
  attempts: t.Integer(),
  last_error: nullable(t.String()),
  /** What the platform reported since it was sent (WhatsApp: sent, delivered, read, failed), and when. */
  platform_status: nullable(t.String()),
  platform_status_at: nullable(time),
  created_at: time,
  updated_at: time,
});

export const ActionEvent = t.Object({
  kind: t.String(),
  actor: nullable(t.Record(t.String(), t.Unknown())),
  details: t.Record(t.String(), t.Unknown()),
  at: time,
});

export const ActionDetail = t.Composite([Action, t.Object({ notifications: t.Array(Notification), events: t.Array(ActionEvent) })]);

// --- CSMs, tasks, notes -------------------------------------------------------------------------

const phone = t.String({ pattern: '^\\+[1-9][0-9]{6,14}$', error: 'must be a phone number in E.164 form, e.g. +4915112345678' });
const channels = t.Array(enumOf(CHAT_PLATFORMS), { uniqueItems: true, maxItems: CHAT_PLATFORMS.length });
const csmFields = {
  name: t.Optional(nullable(label(200))),
  phone: t.Optional(nullable(phone)),
  slack_user_id: t.Optional(nullable(t.String({ pattern: '^[UW][A-Z0-9]{2,30}$', error: 'must be a Slack user id such as U024BE7LH' }))),
  role: t.Optional(enumOf(CSM_ROLES)),
  channels: t.Optional(channels),
  active: t.Optional(t.Boolean()),
};
export const CsmCreate = t.Object({ email, ...csmFields }, { additionalProperties: false });
export type CsmCreate = typeof CsmCreate.static;
export const CsmPatch = t.Object({ email: t.Optional(email), ...csmFields }, { additionalProperties: false });
export type CsmPatch = typeof CsmPatch.static;
export const CsmParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) });
export const Csm = t.Object({
  id: t.String(),
  name: nullable(t.String()),
  email: t.String(),
  phone: nullable(t.String()),
  slack_user_id: nullable(t.String()),
  role: enumOf(CSM_ROLES),
  channels: t.Array(enumOf(CHAT_PLATFORMS)),
  active: t.Boolean(),
  created_at: time,
  updated_at: time,
});

export const ListTasksQuery = t.Object(
  {
    csm_id: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
    customer_id: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
    status: t.Optional(enumOf(['open', 'done'] as const)),
    limit: t.Optional(t.String()),
    cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export const Task = t.Object({
  id: t.String(),
  customer_id: t.String(),
  csm_id: nullable(t.String()),
  action_id: nullable(t.String()),
  title: t.String(),
  due_date: nullable(t.String()),
  status: enumOf(['open', 'done'] as const),
  created_at: time,
  updated_at: time,
});

export const NotesParams = t.Object({ id: t.String({ minLength: 1, maxLength: 300 }) });
export const ListNotesQuery = t.Object(
  { limit: t.Optional(t.String()), cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })) },
  { additionalProperties: false },
);
export const Note = t.Object({
  id: t.String(),
  customer_id: t.String(),
  action_id: nullable(t.String()),
  author: t.String(),
  body: t.String(),
  created_at: time,
});

// --- rules --------------------------------------------------------------------------------------

const ruleCommon = {
  action: enumOf(ACTION_TYPES),
  params: t.Record(t.String(), t.Unknown(), { error: 'must be a JSON object' }),
  priority: t.Optional(enumOf(ACTION_PRIORITIES)),
  enabled: t.Optional(t.Boolean()),
};
export const CHURN_SIGNALS = ['cancellation', 'competitor', 'refund', 'downgrade', 'outage'] as const;
/** Each trigger's rule; a rule is checked against its trigger's, so an error names its field. */
export const RULES = {
  risk_rise: t.Object(
    { trigger: t.Literal('risk_rise'), band: enumOf(['medium', 'high', 'critical'] as const), ...ruleCommon },
    { additionalProperties: false },
  ),
  churn_signal: t.Object(
    { trigger: t.Literal('churn_signal'), signal: enumOf(CHURN_SIGNALS), ...ruleCommon },
    { additionalProperties: false },
  ),
  renewal_due: t.Object(
    { trigger: t.Literal('renewal_due'), within_days: wholeNumber(1, 365), ...ruleCommon },
    { additionalProperties: false },
  ),
};
export const Rule = t.Union([RULES.risk_rise, RULES.churn_signal, RULES.renewal_due]);
export type Rule = typeof Rule.static;
export const RulesBody = t.Object({ rules: t.Array(t.Unknown(), { maxItems: 50 }) }, { additionalProperties: false });
/** RulesBody as a client sends it: each rule is checked against its trigger's (rules.ts, for errors naming the rule's field). */
export const RulesDocumented = t.Object({ rules: t.Array(Rule, { maxItems: 50 }) }, { additionalProperties: false });
export const RuleView = t.Object({
  trigger: t.String(),
  band: t.Optional(enumOf(RISK_BANDS)),
  signal: t.Optional(t.String()),
  within_days: t.Optional(t.Integer()),
  action: enumOf(ACTION_TYPES),
  params: t.Record(t.String(), t.Unknown()),
  priority: enumOf(ACTION_PRIORITIES),
  enabled: t.Boolean(),
});

// --- outbound event deliveries ------------------------------------------------------------------

export const ListDeliveriesQuery = t.Object(
  {
    status: t.Optional(enumOf(['pending', 'delivered', 'dead'] as const)),
    endpoint_id: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
    event_type: t.Optional(enumOf(OUTBOUND_EVENT_TYPES)),
    limit: t.Optional(t.String()),
    cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export const Delivery = t.Object({
  id: t.String(),
  endpoint_id: t.String(),
  url: t.String(),
  event_id: t.String(),
  event_type: t.String(),
  status: enumOf(['pending', 'delivered', 'dead'] as const),
  attempts: t.Integer(),
  next_attempt_at: nullable(time),
  last_status: nullable(t.Integer()),
  last_error: nullable(t.String()),
  history: t.Array(t.Object({ at: time, status: nullable(t.Integer()), error: nullable(t.String()), ms: t.Number() })),
  delivered_at: nullable(time),
  created_at: time,
});
