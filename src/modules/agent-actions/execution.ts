// Carrying out an approved action (docs/agent-actions.md → "Execution"): a task for the CSM, a note on the
// customer and an outbound event, then `executed` — all in one transaction, under the action's row
// lock, so a job run twice (delivery is at least once) executes it once. An execution that fails
// for good leaves the action `failed` with its error.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import type { ActionType } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { emitOutboundEvent, recordActionEvent } from './events.ts';
import { presentAction, selectActions, type ActionRow } from './rows.ts';

const addDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** What the CSM is asked to do, in words, and by when. */
export function taskFor(
  type: ActionType,
  params: Record<string, unknown>,
  customerName: string,
  today: string,
): { title: string; due: string; note: string } {
  const due = (days: unknown) => addDays(today, typeof days === 'number' ? days : 7);
  const extra = typeof params.note === 'string' ? ` — ${params.note}` : '';
  switch (type) {
    case 'check_in':
      return {
        title: `Check in with ${customerName} (${String(params.channel)})`,
        due: due(params.due_in_days),
        note: `Agent action approved: check in by ${String(params.channel)}${extra}`,
      };
    case 'escalation':
      return {
        title: `Escalate ${customerName} to the ${String(params.to)}`,
        due: due(1),
        note: `Agent action approved: escalation to the ${String(params.to)}${extra}`,
      };
    case 'discount_offer':
      return {
        title: `Offer ${customerName} ${String(params.percent)}% off for ${String(params.months)} months`,
        due: due(3),
        note: `Agent action approved: a ${String(params.percent)}% discount for ${String(params.months)} months${extra}`,
      };
    case 'renewal_call':
      return { title: `Renewal call with ${customerName}`, due: due(params.due_in_days), note: 'Agent action approved: a renewal call' };
    case 'success_plan': {
      const goals = Array.isArray(params.goals) ? params.goals.map(String) : [];
      return {
        title: `Success plan for ${customerName}`,
        due: due(14),
        note: `Agent action approved: a success plan (${goals.join('; ')})`,
      };
    }
  }
}

export type ExecutionOutcome = { outcome: 'executed'; taskId: string } | { outcome: 'skipped'; status: string };

/** Executes the approved action `actionId`; an action no longer approved (cancelled, already
 * executed) is left alone. */
export async function executeAction(db: Db, args: { orgId: string; actionId: string; today?: string }): Promise<ExecutionOutcome> {
  const [action] = rowsOf<ActionRow>(
    await db.execute(sql`${selectActions(sql`a.org_id = ${args.orgId} and a.id = ${args.actionId}`)} for update of a`),
  );
  if (!action) return { outcome: 'skipped', status: 'missing' };
  if (action.status !== 'approved') return { outcome: 'skipped', status: action.status };
  const today = args.today ?? new Date().toISOString().slice(0, 10);
  const work = taskFor(action.type, action.params, action.customer_name, today);
  const taskId = newId('tsk');
  await db.execute(sql`
    insert into tasks (id, org_id, customer_id, csm_id, action_id, title, due_date)
    values (${taskId}, ${args.orgId}, ${action.customer_id}, ${action.csm_id}, ${action.id}, ${work.title}, ${work.due}::date)
    on conflict (action_id) do nothing`);
  await db.execute(sql`
    insert into customer_notes (id, org_id, customer_id, action_id, author, body)
    values (${newId('note')}, ${args.orgId}, ${action.customer_id}, ${action.id}, 'agent', ${work.note})
    on conflict (action_id) do nothing`);
  await db.execute(sql`
    update agent_actions set status = 'executed', executed_at = now(), updated_at = now(), last_error = null
    where org_id = ${args.orgId} and id = ${action.id} and status = 'approved'`);
  const [row] = rowsOf<ActionRow>(await db.execute(selectActions(sql`a.org_id = ${args.orgId} and a.id = ${action.id}`)));
  await recordActionEvent(db, {
    orgId: args.orgId,
    actionId: action.id,
    kind: 'executed',
    actor: { kind: 'system' },
    details: { task_id: taskId },
  });
  await emitOutboundEvent(db, args.orgId, 'agent_action.executed', { action: presentAction(row!), task_id: taskId });
  return { outcome: 'executed', taskId };
}

/** The execution failed for good: `failed`, with its error (only from `approved`). */
export async function failAction(db: Db, args: { orgId: string; actionId: string; error: string }): Promise<boolean> {
  const rows = rowsOf(
    await db.execute(sql`
      update agent_actions set status = 'failed', last_error = ${args.error.slice(0, 2000)}, updated_at = now()
      where org_id = ${args.orgId} and id = ${args.actionId} and status = 'approved' returning id`),
  );
  if (rows.length > 0)
    await recordActionEvent(db, {
      orgId: args.orgId,
      actionId: args.actionId,
      kind: 'failed',
      actor: { kind: 'system' },
      details: { error: args.error.slice(0, 2000) },
    });
  return rows.length > 0;
}
