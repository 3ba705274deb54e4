// A decision taken by a CSM on a chat platform (SPEC 8.3 "Who may decide"): an active CSM of the
// action's organisation who owns the customer, or a manager/admin; a discount above
// DISCOUNT_MAX_NO_MANAGER needs a manager. Anyone else, an expired action or a decision that lost a
// race changes nothing and gets the reason in words, to be told privately on their platform.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import type { ChatPlatform } from '../../db/schema/index.ts';
import { AppError } from '../../lib/errors.ts';
import { recordAudit } from '../audit/service.ts';
import type { PresentedAction } from './rows.ts';
import { decideAction, type Decision } from './service.ts';
import { actionSettings } from './settings.ts';

export interface Decider {
  id: string;
  name: string | null;
  email: string;
  role: string;
}

export type CsmDecision = { ok: true; action: PresentedAction } | { ok: false; why: string };

/** Decides `actionId` as `csm`, in `db`'s transaction. `actor` names them in the audit log. */
export async function decideAsCsm(
  db: Db,
  input: { orgId: string; actionId: string; decision: Decision; csm: Decider; platform: ChatPlatform; actor: string; now: Date; snoozeDays?: number; comment?: string | null; via?: { notificationId: string; responseUrl: string | null } | null },
): Promise<CsmDecision> {
  const { orgId, actionId, decision, csm } = input;
  const [action] = rowsOf<{ csm_id: string | null; type: string; params: Record<string, unknown>; status: string; expired: boolean; expires_at: string | null }>(
    await db.execute(sql`
      select csm_id, type, params, status, expires_at <= ${input.now.toISOString()}::timestamptz as expired, to_char(expires_at at time zone 'UTC', 'HH24:MI "UTC on" YYYY-MM-DD') as expires_at
      from agent_actions where org_id = ${orgId} and id = ${actionId}`),
  );
  if (!action) return { ok: false, why: 'This action no longer exists: nothing was changed.' };
  const manager = csm.role === 'manager' || csm.role === 'admin';
  if (action.csm_id !== csm.id && !manager) return { ok: false, why: "Only the customer's CSM or a manager may decide this action: nothing was changed." };
  const limit = actionSettings().discountMaxNoManager;
  if (decision === 'approve' && action.type === 'discount_offer' && Number(action.params.percent) > limit && !manager) {
    return { ok: false, why: `A discount above ${limit}% needs a manager's approval: nothing was changed.` };
  }
  if (action.expired && (action.status === 'proposed' || action.status === 'pending_approval')) return { ok: false, why: `Action ${actionId} expired at ${action.expires_at}: nothing was changed.` };
  try {
    const decided = await decideAction(db, {
      orgId,
      actionId,
      decision,
      by: { kind: 'csm', csm_id: csm.id, name: csm.name ?? csm.email, platform: input.platform },
      comment: input.comment,
      snoozeDays: input.snoozeDays,
      now: input.now,
      via: input.via,
    });
    await recordAudit(db, { orgId, actor: input.actor, action: 'agent_action.decided', targetType: 'agent_action', targetId: actionId, details: { decision, status: decided.status, csm_id: csm.id } });
    return { ok: true, action: decided };
  } catch (error) {
    if (error instanceof AppError && error.code === 'conflict') return { ok: false, why: `${error.message}: nothing was changed.` };
    throw error;
  }
}
