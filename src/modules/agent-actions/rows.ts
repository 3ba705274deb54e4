// How an action, a CSM, a task and a note are read and shown: one select list each, times as the
// API writes them, and the sort value for cursors (newest first, ties by id).
import { sql, type SQL } from 'drizzle-orm';
import { isoTime, newestFirst } from '../../db/keyset.ts';
import type {
  ActionPriority,
  ActionReason,
  ActionRouting,
  ActionStatus,
  ActionType,
  ChatPlatform,
  CsmRole,
  DecidedBy,
  NotificationStatus,
} from '../../db/schema/index.ts';

export const actionKeyset = newestFirst('a');

export const ACTION_COLUMNS = sql`
  a.id, a.org_id, a.customer_id, (select c.name from customers c where c.org_id = a.org_id and c.id = a.customer_id) as customer_name, a.type, a.params, a.reason, a.rationale, a.priority, a.status, a.requires_approval, a.csm_id, a.routing,
  a.decided_by, a.decision_comment, ${isoTime(sql`a.snoozed_until`)} as snoozed_until, ${isoTime(sql`a.expires_at`)} as expires_at,
  ${isoTime(sql`a.executed_at`)} as executed_at, a.trigger_count, a.last_error,
  ${isoTime(sql`a.created_at`)} as created_at, ${isoTime(sql`a.updated_at`)} as updated_at, ${actionKeyset.value} as sort_value`;

export interface ActionRow {
  id: string;
  org_id: string;
  customer_id: string;
  customer_name: string;
  type: ActionType;
  params: Record<string, unknown>;
  reason: ActionReason;
  rationale: string | null;
  priority: ActionPriority;
  status: ActionStatus;
  requires_approval: boolean;
  csm_id: string | null;
  routing: ActionRouting | null;
  decided_by: DecidedBy | null;
  decision_comment: string | null;
  snoozed_until: string | null;
  expires_at: string | null;
  executed_at: string | null;
  trigger_count: number;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  sort_value: string;
}

export const selectActions = (where: SQL) => sql`select ${ACTION_COLUMNS} from agent_actions a where ${where}`;

export function presentAction(row: ActionRow) {
  return {
    id: row.id,
    customer_id: row.customer_id,
    customer_name: row.customer_name,
    type: row.type,
    params: row.params,
    reason: row.reason,
    rationale: row.rationale,
    priority: row.priority,
    status: row.status,
    requires_approval: row.requires_approval,
    csm_id: row.csm_id,
    routing: row.routing,
    decided_by: row.decided_by,
    decision_comment: row.decision_comment,
    snoozed_until: row.snoozed_until,
    expires_at: row.expires_at,
    executed_at: row.executed_at,
    trigger_count: Number(row.trigger_count),
    last_error: row.last_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type PresentedAction = ReturnType<typeof presentAction>;

export interface NotificationRow {
  id: string;
  platform: ChatPlatform;
  csm_id: string | null;
  target: string | null;
  status: NotificationStatus;
  platform_message_id: string | null;
  platform_channel: string | null;
  attempts: number;
  last_error: string | null;
  platform_status: string | null;
  platform_status_at: string | null;
  created_at: string;
  updated_at: string;
}

export const csmKeyset = newestFirst('m');
export const CSM_COLUMNS = sql`m.id, m.name, m.email, m.phone, m.slack_user_id, m.role, m.channels, m.active,
  ${isoTime(sql`m.created_at`)} as created_at, ${isoTime(sql`m.updated_at`)} as updated_at, ${csmKeyset.value} as sort_value`;

export interface CsmRow {
  id: string;
  name: string | null;
  email: string;
  phone: string | null;
  slack_user_id: string | null;
  role: CsmRole;
  channels: ChatPlatform[];
  active: boolean;
  created_at: string;
  updated_at: string;
  sort_value: string;
}

export const presentCsm = ({ sort_value: _, ...row }: CsmRow) => row;

export const taskKeyset = newestFirst('k');
export const TASK_COLUMNS = sql`k.id, k.customer_id, k.csm_id, k.action_id, k.title, k.due_date::text as due_date, k.status,
  ${isoTime(sql`k.created_at`)} as created_at, ${isoTime(sql`k.updated_at`)} as updated_at, ${taskKeyset.value} as sort_value`;
export interface TaskRow {
  id: string;
  customer_id: string;
  csm_id: string | null;
  action_id: string | null;
  title: string;
  due_date: string | null;
  status: 'open' | 'done';
  created_at: string;
  updated_at: string;
  sort_value: string;
}
export const presentTask = ({ sort_value: _, ...row }: TaskRow) => row;

export const noteKeyset = newestFirst('n');
export const NOTE_COLUMNS = sql`n.id, n.customer_id, n.action_id, n.author, n.body, ${isoTime(sql`n.created_at`)} as created_at, ${noteKeyset.value} as sort_value`;
export interface NoteRow {
  id: string;
  customer_id: string;
  action_id: string | null;
  author: string;
  body: string;
  created_at: string;
  sort_value: string;
}
export const presentNote = ({ sort_value: _, ...row }: NoteRow) => row;
