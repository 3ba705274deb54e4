// Agent actions (docs/agent-actions.md): proposing one (deduplicated per customer and type, refused or
// only counted during a rejection's cool-down), where it goes, and its guarded state machine. Every
// transition is one conditional UPDATE … WHERE status IN (…) RETURNING: of two decisions racing,
// exactly one changes the row, and the other learns who decided first and when.
import { randomBytes } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, rowsOf, type Db } from '../../db/client.ts';
import { andAll, limitTo } from '../../db/keyset.ts';
import {
  OPEN_ACTION_STATUSES,
  type ActionPriority,
  type ActionReason,
  type ActionRouting,
  type ActionStatus,
  type ActionType,
  type ChatPlatform,
  type DecidedBy,
} from '../../db/schema/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { decodeCursor } from '../../lib/pagination.ts';
import { validator } from '../../lib/validation.ts';
import { enqueueJob } from '../../queue/job-queue.ts';
import { emitOutboundEvent, recordActionEvent } from './events.ts';
import { executeActionJob } from './execute-job.ts';
import { PARAMS } from './model.ts';
import {
  ACTION_COLUMNS,
  actionKeyset,
  presentAction,
  selectActions,
  type ActionRow,
  type NotificationRow,
  type PresentedAction,
} from './rows.ts';
import type { ActionSettings } from './settings.ts';
import { CHAT_PLATFORMS } from '../chat/platforms.ts';
import type { CopyUpdate, Decision } from '../chat/port.ts';

const OPEN = sql.raw(OPEN_ACTION_STATUSES.map((s) => `'${s}'`).join(', '));

const paramCheckers = Object.fromEntries(Object.entries(PARAMS).map(([type, schema]) => [type, validator(schema)])) as Record<
  ActionType,
  (value: unknown) => string | null
>;

/** The first thing wrong with `params` for `type`, naming the field as `params.<field>`, or null. */
export function paramsProblem(type: ActionType, params: unknown, field = 'params'): string | null {
  const problem = paramCheckers[type](params);
  if (!problem) return null;
  return problem.replace(/^Invalid field "/, `Invalid field "${field}.`).replace(/^Invalid record: /, `Invalid field "${field}": `);
}

/** The platforms of `platforms` this organisation can be sent copies on now. */
async function sendablePlatforms(db: Db, orgId: string, platforms: ChatPlatform[], settings: ActionSettings): Promise<Set<ChatPlatform>> {
  const sendable = new Set<ChatPlatform>();
  for (const platform of new Set(platforms)) {
    if (await CHAT_PLATFORMS[platform].available(db, orgId, settings)) sendable.add(platform);
  }
  return sendable;
}

/** Every copy of a decided, expired or woken action is updated to show it. */
async function updateCopies(db: Db, input: CopyUpdate): Promise<void> {
  for (const platform of Object.values(CHAT_PLATFORMS)) await platform.queueUpdates(db, input);
}

export interface ProposeInput {
  orgId: string;
  customerId: string;
  type: ActionType;
  params: Record<string, unknown>;
  reason: ActionReason;
  rationale?: string | null;
  priority?: ActionPriority;
  requiresApproval?: boolean;
  /** `api`: refused during a cool-down unless `force`; `rule`: counted on the rejected action. */
  source: 'api' | 'rule';
  force?: boolean;
  actor?: Record<string, unknown>;
  now?: Date;
}

export type ProposeOutcome =
  | { outcome: 'created'; action: PresentedAction }
  | { outcome: 'deduplicated'; action: PresentedAction }
  /** A rule fired during a rejection's cool-down: counted on the rejected action. */
  | { outcome: 'cooling_down'; action: PresentedAction };

interface CustomerFacts {
  id: string;
  name: string;
  status: string;
  csm_email: string | null;
}

async function customerFacts(db: Db, orgId: string, customerId: string): Promise<CustomerFacts | null> {
  const [row] = rowsOf<CustomerFacts>(
    await db.execute(
      sql`select id, name, status, lower(csm->>'email') as csm_email from customers where org_id = ${orgId} and id = ${customerId} and deleted_at is null for share`,
    ),
  );
  return row ?? null;
}

async function bumpTrigger(db: Db, orgId: string, actionId: string, details: Record<string, unknown>): Promise<PresentedAction> {
  await db.execute(
    sql`update agent_actions set trigger_count = trigger_count + 1, updated_at = now() where org_id = ${orgId} and id = ${actionId}`,
  );
  await recordActionEvent(db, { orgId, actionId, kind: 'triggered_again', details });
  return presentAction((await readAction(db, orgId, actionId))!);
}

async function readAction(db: Db, orgId: string, id: string): Promise<ActionRow | null> {
  const [row] = rowsOf<ActionRow>(await db.execute(selectActions(sql`a.org_id = ${orgId} and a.id = ${id}`)));
  return row ?? null;
}

/** Proposes an action, in `db`'s transaction (the caller wakes the job loop after it commits). */
export async function proposeAction(db: Db, input: ProposeInput, settings: ActionSettings): Promise<ProposeOutcome> {
  const problem = paramsProblem(input.type, input.params);
  if (problem) throw new AppError('validation_failed', problem);
  const customer = await customerFacts(db, input.orgId, input.customerId);
  if (!customer)
    throw new AppError('unprocessable', `Invalid field "customer_id": "${input.customerId}" is not a customer of this organisation`);
  if (customer.status === 'churned')
    throw new AppError('unprocessable', `Customer ${customer.id} has churned: no action is proposed for a churned customer`);
  const now = input.now ?? new Date();

  for (let round = 0; round < 2; round++) {
    const [open] = rowsOf<{ id: string }>(
      await db.execute(
        sql`select id from agent_actions where org_id = ${input.orgId} and customer_id = ${customer.id} and type = ${input.type} and status in (${OPEN}) for update`,
      ),
    );
    if (open)
      return {
        outcome: 'deduplicated',
        action: await bumpTrigger(db, input.orgId, open.id, { reason: input.reason, source: input.source }),
      };

    const [rejected] = rowsOf<{ id: string; decided_at: string; decided_by: DecidedBy | null; until: string }>(
      await db.execute(sql`
        select id, decided_at::text, decided_by, to_char((decided_at + make_interval(days => ${settings.rejectCooldownDays})) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as until
        from agent_actions
        where org_id = ${input.orgId} and customer_id = ${customer.id} and type = ${input.type} and status = 'rejected'
          and decided_at > ${now.toISOString()}::timestamptz - make_interval(days => ${settings.rejectCooldownDays})
        order by decided_at desc limit 1`),
    );
    if (rejected && !(input.source === 'api' && input.force)) {
      if (input.source === 'rule')
        return {
          outcome: 'cooling_down',
          action: await bumpTrigger(db, input.orgId, rejected.id, { reason: input.reason, source: 'rule', cooling_down: true }),
        };
      throw new AppError(
        'conflict',
        `A ${input.type} for customer ${customer.id} was rejected (${rejected.id}${rejected.decided_by?.name ? ` by ${rejected.decided_by.name}` : ''}); its cool-down runs until ${rejected.until}. Send "force": true to propose it anyway`,
      );
    }

    const routing = await routeAction(db, input.orgId, customer.csm_email);
    const csmId = routing.csmId;
    const requiresApproval = input.requiresApproval ?? true;
    const platforms = await sendablePlatforms(
      db,
      input.orgId,
      routing.copies.map((copy) => copy.platform),
      settings,
    );
    const sendable = routing.copies.some((copy) => platforms.has(copy.platform));
    // Nowhere to send it but the inbox: it waits there for a decision at once.
    const status: ActionStatus = !requiresApproval ? 'approved' : sendable ? 'proposed' : 'pending_approval';
    const id = newId('act');
    const inserted = rowsOf<{ id: string }>(
      await db.execute(sql`
        insert into agent_actions (id, org_id, customer_id, type, params, reason, rationale, priority, status, requires_approval, csm_id, routing, expires_at, decided_by, decided_at, created_at, updated_at)
        values (${id}, ${input.orgId}, ${customer.id}, ${input.type}, ${JSON.stringify(input.params)}::jsonb, ${input.reason}, ${input.rationale ?? null}, ${input.priority ?? 'normal'},
                ${status}, ${requiresApproval}, ${csmId}, ${JSON.stringify(routing.routing)}::jsonb,
                ${now.toISOString()}::timestamptz + make_interval(hours => ${settings.ttlHours}),
                ${requiresApproval ? null : JSON.stringify({ kind: 'system', name: 'no approval required', at: now.toISOString() })}::jsonb,
                ${requiresApproval ? null : now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz)
        on conflict (org_id, customer_id, type) where status in (${OPEN}) do nothing
        returning id`),
    );
    if (inserted.length === 0) continue; // another proposal won the race: it is the open one now
    for (const copy of routing.copies) {
      const notificationId = newId('ntf');
      const send = requiresApproval && platforms.has(copy.platform);
      await db.execute(sql`
        insert into action_notifications (id, org_id, action_id, csm_id, platform, target, nonce, status, created_at, updated_at)
        values (${notificationId}, ${input.orgId}, ${id}, ${copy.csmId}, ${copy.platform}, ${copy.target}, ${randomBytes(16).toString('hex')},
                ${send ? 'pending' : 'no_sender'}, clock_timestamp(), clock_timestamp())`);
      if (send) await CHAT_PLATFORMS[copy.platform].queueSend(db, { orgId: input.orgId, actionId: id, notificationId });
    }
    await recordActionEvent(db, {
      orgId: input.orgId,
      actionId: id,
      kind: 'proposed',
      actor: input.actor ?? { kind: input.source === 'api' ? 'api_key' : 'rule' },
      details: { reason: input.reason },
    });
    await recordActionEvent(db, { orgId: input.orgId, actionId: id, kind: 'routed', details: { ...routing.routing } });
    const action = presentAction((await readAction(db, input.orgId, id))!);
    await emitOutboundEvent(db, input.orgId, 'agent_action.proposed', { action });
    if (!requiresApproval) {
      await recordActionEvent(db, {
        orgId: input.orgId,
        actionId: id,
        kind: 'approved',
        actor: { kind: 'system' },
        details: { requires_approval: false },
      });
      await emitOutboundEvent(db, input.orgId, 'agent_action.approved', { action });
      await enqueueJob(db, executeActionJob, { actionId: id }, { orgId: input.orgId, dedupeKey: id });
    }
    return { outcome: 'created', action };
  }
  throw new AppError('conflict', `Another ${input.type} for customer ${customer.id} was being proposed at the same time; try again`);
}

interface Copy {
  csmId: string;
  platform: ChatPlatform;
  target: string | null;
}

/** Where an action goes (docs/agent-actions.md): its customer's CSM's channels; without a CSM, or a CSM without
 * a channel, the managers' (and admins') channels; with none, the inbox. */
export async function routeAction(
  db: Db,
  orgId: string,
  csmEmail: string | null,
): Promise<{ csmId: string | null; routing: ActionRouting; copies: Copy[] }> {
  type Person = {
    id: string;
    email: string;
    phone: string | null;
    slack_user_id: string | null;
    channels: ChatPlatform[];
    active: boolean;
  };
  const targetOf = (person: Person, platform: ChatPlatform) =>
    platform === 'slack' ? person.slack_user_id : platform === 'whatsapp' ? person.phone : person.email;
  const copiesOf = (people: Person[]) =>
    people.flatMap((p) => p.channels.map((platform) => ({ csmId: p.id, platform, target: targetOf(p, platform) })));
  let csm: Person | undefined;
  if (csmEmail) {
    [csm] = rowsOf<Person>(
      await db.execute(
        sql`select id, email, phone, slack_user_id, channels, active from csms where org_id = ${orgId} and email = ${csmEmail}`,
      ),
    );
  }
  const csmId = csm?.id ?? null;
  if (csm?.active && csm.channels.length > 0) {
    return {
      csmId,
      copies: copiesOf([csm]),
      routing: { to: 'csm', csm_ids: [csm.id], channels: csm.channels, note: "the customer's CSM's channels" },
    };
  }
  const managers = rowsOf<Person>(
    await db.execute(
      sql`select id, email, phone, slack_user_id, channels, active from csms where org_id = ${orgId} and active and role in ('manager', 'admin') and jsonb_array_length(channels) > 0 order by id`,
    ),
  );
  const why = !csm ? 'the customer has no CSM' : !csm.active ? "the customer's CSM is inactive" : "the customer's CSM has no channel";
  if (managers.length > 0) {
    return {
      csmId,
      copies: copiesOf(managers),
      routing: {
        to: 'managers',
        csm_ids: managers.map((m) => m.id),
        channels: [...new Set(managers.flatMap((m) => m.channels))],
        note: `${why}: the managers' channels`,
      },
    };
  }
  return { csmId, copies: [], routing: { to: 'inbox', csm_ids: [], channels: [], note: `${why} and no manager has a channel: the inbox` } };
}

// --- decisions ----------------------------------------------------------------------------------

const TRANSITIONS: Record<Decision, { to: ActionStatus; from: readonly ActionStatus[] }> = {
  approve: { to: 'approved', from: ['proposed', 'pending_approval', 'snoozed'] },
  reject: { to: 'rejected', from: ['proposed', 'pending_approval', 'snoozed'] },
  snooze: { to: 'snoozed', from: ['proposed', 'pending_approval'] },
  cancel: { to: 'cancelled', from: ['proposed', 'pending_approval', 'snoozed', 'approved'] },
};

const hhmm = (iso: string | null | undefined) => (iso ? `${iso.slice(11, 16)} UTC on ${iso.slice(0, 10)}` : 'an unknown time');

/** "already approved by Ana at 14:02 UTC on 2026-11-26": what a decision that lost learns. */
export function alreadyDecided(action: ActionRow): string {
  const by = action.decided_by;
  const who = by?.name ?? (by?.kind === 'api_key' ? `API key ${by.key_id}` : (by?.kind ?? null));
  switch (action.status) {
    case 'expired':
      return `Action ${action.id} already expired at ${hhmm(action.expires_at)}`;
    case 'executed':
      return `Action ${action.id} was already approved${who ? ` by ${who}` : ''} at ${hhmm(by?.at)} and executed at ${hhmm(action.executed_at)}`;
    case 'failed':
      return `Action ${action.id} was already approved${who ? ` by ${who}` : ''} at ${hhmm(by?.at)}; its execution failed`;
    default:
      return `Action ${action.id} was already ${action.status.replace('_', ' ')}${who ? ` by ${who}` : ''} at ${hhmm(by?.at ?? action.updated_at)}`;
  }
}

export interface DecideInput {
  orgId: string;
  actionId: string;
  decision: Decision;
  by: Omit<DecidedBy, 'at'>;
  comment?: string | null;
  snoozeDays?: number;
  now?: Date;
  /** The decision was a click on this copy (its response_url may update it). */
  via?: { notificationId: string; responseUrl: string | null } | null;
  /** Why the decider may not decide the action as it stands (null: they may), asked of the row
   * read for the decision itself, so a decision from chat reads the action once. */
  refusal?: (action: ActionRow, now: Date) => string | null;
}

/** What a decision came to: the action decided, or why nothing changed (no such action, refused
 * by `refusal`, or decided first by someone else — the message says who and when). */
export type DecideOutcome =
  | { ok: true; action: PresentedAction }
  | { ok: false; reason: 'not_found' | 'refused' | 'conflict'; why: string };

/** Applies a decision, in `db`'s transaction, reading the action once: its row is locked and read,
 * `refusal` asked, then one guarded UPDATE … RETURNING changes it (of racing decisions, the later
 * waits on the lock and finds the earlier's). An approval queues the execution. */
export async function tryDecideAction(db: Db, input: DecideInput): Promise<DecideOutcome> {
  const now = input.now ?? new Date();
  const rule = TRANSITIONS[input.decision];
  const [current] = rowsOf<ActionRow>(
    await db.execute(sql`${selectActions(sql`a.org_id = ${input.orgId} and a.id = ${input.actionId}`)} for update`),
  );
  if (!current) return { ok: false, reason: 'not_found', why: `Action ${input.actionId} not found` };
  const refused = input.refusal?.(current, now);
  if (refused) return { ok: false, reason: 'refused', why: refused };
  if (!rule.from.includes(current.status)) return { ok: false, reason: 'conflict', why: alreadyDecided(current) };
  const by: DecidedBy = { ...input.by, at: now.toISOString() };
  const snoozeDays = input.snoozeDays ?? 7;
  const extra: SQL =
    input.decision === 'snooze' ? sql`, snoozed_until = ${now.toISOString()}::timestamptz + make_interval(days => ${snoozeDays})` : sql``;
  const [row] = rowsOf<ActionRow>(
    await db.execute(sql`
      update agent_actions a set status = ${rule.to}, decided_by = ${JSON.stringify(by)}::jsonb, decided_at = ${now.toISOString()}::timestamptz,
        decision_comment = ${input.comment ?? null}, updated_at = ${now.toISOString()}::timestamptz ${extra}
      where a.org_id = ${input.orgId} and a.id = ${input.actionId} and a.status in (${sql.raw(rule.from.map((s) => `'${s}'`).join(', '))})
      returning ${ACTION_COLUMNS}`),
  );
  // The row is locked since it was read: only a change outside transactions could get here.
  if (!row) return { ok: false, reason: 'conflict', why: alreadyDecided(current) };
  const action = presentAction(row);
  const kind = ({ approve: 'approved', reject: 'rejected', snooze: 'snoozed', cancel: 'cancelled' } as const)[input.decision];
  await recordActionEvent(db, {
    orgId: input.orgId,
    actionId: row.id,
    kind,
    actor: { ...by },
    details: input.decision === 'snooze' ? { days: snoozeDays } : {},
  });
  if (input.decision === 'approve') {
    await enqueueJob(db, executeActionJob, { actionId: row.id }, { orgId: input.orgId, dedupeKey: row.id, now });
    await emitOutboundEvent(db, input.orgId, 'agent_action.approved', { action });
  }
  if (input.decision === 'reject') await emitOutboundEvent(db, input.orgId, 'agent_action.rejected', { action });
  await updateCopies(db, { orgId: input.orgId, actionId: row.id, via: input.via });
  return { ok: true, action };
}

/** As `tryDecideAction`, for the API: a missing action is a 404, a refusal a 403, a decision that
 * lost a 409 saying who decided it and when. */
export async function decideAction(db: Db, input: DecideInput): Promise<PresentedAction> {
  const outcome = await tryDecideAction(db, input);
  if (outcome.ok) return outcome.action;
  if (outcome.reason === 'not_found') throw notFound(`Action ${input.actionId}`);
  if (outcome.reason === 'refused') throw new AppError('forbidden', outcome.why);
  throw new AppError('conflict', outcome.why, {});
}

// --- time: expiry and snooze wake-up ------------------------------------------------------------

/** Actions not decided within their time to live expire: the `limit` (all when absent) that
 * expired first. */
export async function expireActions(db: Db, now: Date = new Date(), limit?: number): Promise<number> {
  const rows = rowsOf<{ id: string; org_id: string }>(
    await db.execute(sql`
      update agent_actions set status = 'expired', updated_at = ${now.toISOString()}::timestamptz
      where id in (
        select id from agent_actions
        where status in ('proposed', 'pending_approval') and expires_at <= ${now.toISOString()}::timestamptz
        order by expires_at limit ${limit ?? null})
      returning id, org_id`),
  );
  for (const row of rows) {
    await recordActionEvent(db, { orgId: row.org_id, actionId: row.id, kind: 'expired', actor: { kind: 'system' } });
    await updateCopies(db, { orgId: row.org_id, actionId: row.id });
  }
  return rows.length;
}

/** Snoozed actions whose snooze ended wait for a decision again, with a new time to live; their
 * copies show the buttons again and the CSM is reminded. The `limit` (all when absent) whose snooze
 * ended first. */
export async function wakeSnoozedActions(db: Db, now: Date, limit: number | undefined, settings: ActionSettings): Promise<number> {
  const rows = rowsOf<{ id: string; org_id: string }>(
    await db.execute(sql`
      update agent_actions set status = 'pending_approval', snoozed_until = null, updated_at = ${now.toISOString()}::timestamptz,
        expires_at = ${now.toISOString()}::timestamptz + make_interval(hours => ${settings.ttlHours})
      where id in (
        select id from agent_actions
        where status = 'snoozed' and snoozed_until <= ${now.toISOString()}::timestamptz
        order by snoozed_until limit ${limit ?? null})
      returning id, org_id`),
  );
  for (const row of rows) {
    await recordActionEvent(db, { orgId: row.org_id, actionId: row.id, kind: 'woke', actor: { kind: 'system' } });
    await updateCopies(db, { orgId: row.org_id, actionId: row.id, reminder: true });
  }
  return rows.length;
}

// --- reads --------------------------------------------------------------------------------------

export interface ActionFilters {
  status?: ActionStatus;
  type?: ActionType;
  customerId?: string;
  csmId?: string;
}

export async function listActions(
  db: Db,
  input: { orgId: string; filters: ActionFilters; limit: number; cursor?: string },
): Promise<ActionRow[]> {
  const where: SQL[] = [];
  const { filters } = input;
  if (filters.status) where.push(sql`a.status = ${filters.status}`);
  if (filters.type) where.push(sql`a.type = ${filters.type}`);
  if (filters.customerId) where.push(sql`a.customer_id = ${filters.customerId}`);
  if (filters.csmId) where.push(sql`a.csm_id = ${filters.csmId}`);
  if (input.cursor) {
    const position = decodeCursor(input.cursor, 'created_at', 'timestamp');
    where.push(actionKeyset.after(position.value, position.id));
  }
  return queryRows<ActionRow>(
    db,
    sql`${selectActions(sql`a.org_id = ${input.orgId} ${andAll(where)}`)} order by ${actionKeyset.order} ${limitTo(input.limit + 1)}`,
  );
}

export async function getAction(db: Db, orgId: string, id: string): Promise<PresentedAction> {
  const row = await readAction(db, orgId, id);
  if (!row) throw notFound(`Action ${id}`);
  return presentAction(row);
}

/** The action with its notifications (one per copy) and its history. */
export async function actionDetail(db: Db, orgId: string, id: string) {
  const action = await getAction(db, orgId, id);
  const notifications = rowsOf<NotificationRow>(
    await db.execute(sql`
      select id, platform, csm_id, target, status, platform_message_id, platform_channel, attempts, last_error, platform_status,
        to_char(platform_status_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as platform_status_at,
        to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at, to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as updated_at
      from action_notifications where org_id = ${orgId} and action_id = ${id} order by created_at, id`),
  );
  const events = rowsOf<{ kind: string; actor: Record<string, unknown> | null; details: Record<string, unknown>; at: string }>(
    await db.execute(sql`
      select kind, actor, details, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at
      from action_events where org_id = ${orgId} and action_id = ${id} order by id`),
  );
  return { ...action, notifications: notifications.map((n) => ({ ...n, attempts: Number(n.attempts) })), events };
}
