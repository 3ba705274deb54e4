// A decision taken on a chat platform (docs/agent-actions.md → "Who may decide"), the same for every platform: the
// button must be one of the action's current copies there (its nonce, compared in constant time),
// the clicker an active CSM of the organisation whom the rule of who-decides.ts lets decide (the
// API's rule too), and an expired action takes no decision.
// Whatever fails changes nothing and says why, in words the clicker is shown privately.
import { sameSecret } from '../../lib/digest.ts';
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import type { ChatPlatform, CsmRole } from '../../db/schema/index.ts';
import { recordAudit } from '../audit/service.ts';
import { tryDecideAction } from '../agent-actions/service.ts';
import type { Decision } from './port.ts';
import type { PresentedAction } from '../agent-actions/rows.ts';
import { decisionRefusal, type DecisionSettings } from '../agent-actions/who-decides.ts';

/** The CSM behind a platform's user. */
export interface ChatDecider {
  id: string;
  name: string | null;
  email: string;
  role: string;
}

export type ChatDecisionOutcome = { ok: true; action: PresentedAction; copyId: string; csmId: string } | { ok: false; why: string };

/** The active CSM of the organisation with this e-mail (Google Chat's users are known by it), or null. */
export async function csmByEmail(db: Db, orgId: string, email: string): Promise<ChatDecider | null> {
  const [row] = rowsOf<ChatDecider>(
    await db.execute(
      sql`select id, name, email, role from csms where org_id = ${orgId} and email = ${email.toLowerCase()} and active order by id limit 1`,
    ),
  );
  return row ?? null;
}

/** Applies a click on a copy's button, in `db`'s transaction: the button must be one of the action's
 * copies on that platform (its nonce); then as `decideAsCsm`. */
export async function decideFromChat(
  db: Db,
  input: {
    orgId: string;
    actionId: string;
    nonce: string;
    platform: ChatPlatform;
    decision: Decision;
    csm: ChatDecider | null;
    actor: string;
    now: Date;
    responseUrl?: string | null;
    place: string;
  },
  settings: DecisionSettings,
): Promise<ChatDecisionOutcome> {
  const copies = rowsOf<{ id: string; nonce: string }>(
    await db.execute(
      sql`select id, nonce from action_notifications where org_id = ${input.orgId} and action_id = ${input.actionId} and platform = ${input.platform} order by id`,
    ),
  );
  const copy = copies.find((c) => sameSecret(c.nonce, input.nonce));
  if (!copy)
    return { ok: false, why: `This button does not belong to a current approval request of this ${input.place}: nothing was changed.` };
  if (!input.csm) return { ok: false, why: 'Only a CSM of this organisation may decide: nothing was changed.' };
  const decided = await decideAsCsm(
    db,
    {
      ...input,
      csm: input.csm,
      via: { notificationId: copy.id, responseUrl: input.responseUrl ?? null },
    },
    settings,
  );
  return decided.ok ? { ...decided, copyId: copy.id, csmId: input.csm.id } : decided;
}

/** Decides `actionId` as `csm` (who may: as who-decides.ts says; an expired action takes no
 * decision), in `db`'s transaction.
 * `actor` names them in the audit log; `via` is the copy the decision came from, if one. */
export async function decideAsCsm(
  db: Db,
  input: {
    orgId: string;
    actionId: string;
    decision: Decision;
    csm: ChatDecider;
    platform: ChatPlatform;
    actor: string;
    now: Date;
    snoozeDays?: number;
    comment?: string | null;
    via?: { notificationId: string; responseUrl: string | null } | null;
  },
  settings: DecisionSettings,
): Promise<{ ok: true; action: PresentedAction } | { ok: false; why: string }> {
  const { orgId, actionId, decision, csm } = input;
  // The action is read once, by the decision itself: who may decide and whether it expired are
  // asked of that row.
  const decided = await tryDecideAction(db, {
    orgId,
    actionId,
    decision,
    by: { kind: 'csm', csm_id: csm.id, name: csm.name ?? csm.email, platform: input.platform },
    comment: input.comment,
    snoozeDays: input.snoozeDays,
    now: input.now,
    via: input.via,
    refusal: (action, now) => {
      const refusal = decisionRefusal({ csmId: csm.id, role: csm.role as CsmRole }, action, decision, settings);
      if (refusal) return refusal;
      const expired = action.expires_at !== null && Date.parse(action.expires_at) <= now.getTime();
      if (expired && (action.status === 'proposed' || action.status === 'pending_approval'))
        return `Action ${actionId} expired at ${action.expires_at!.slice(11, 16)} UTC on ${action.expires_at!.slice(0, 10)}`;
      return null;
    },
  });
  if (!decided.ok)
    return {
      ok: false,
      why: decided.reason === 'not_found' ? 'This action no longer exists: nothing was changed.' : `${decided.why}: nothing was changed.`,
    };
  await recordAudit(db, {
    orgId,
    actor: input.actor,
    action: 'agent_action.decided',
    targetType: 'agent_action',
    targetId: actionId,
    details: { decision, status: decided.action.status, csm_id: csm.id },
  });
  return { ok: true, action: decided.action };
}
