// Who may decide an agent action: one rule for every way of deciding — the API with a key, the
// console (a session, the same API), and a click or reply on Slack, Google Chat or WhatsApp — so
// that no channel lets someone do what another refuses.
//
// Everyone decides in a CSM's shoes:
// - on a chat platform, the active CSM the platform's user is (Slack user id, Google e-mail,
//   WhatsApp number);
// - in the console, a member as the active CSM with their e-mail (none: they may not decide); an
//   admin of the organisation as an admin;
// - an API key as an admin: keys are issued by the organisation's admins (or its operator) to its
//   integrations, may decide anything, and every decision is audited under the key's name.
// Then: a `csm` decides only their own customers' actions, and approves a discount only up to
// DISCOUNT_MAX_NO_MANAGER %; a `manager` or `admin` decides any action.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import type { ActionType, CsmRole } from '../../db/schema/index.ts';
import type { Principal } from '../keys/service.ts';
import type { Decision } from '../chat/port.ts';
import type { ActionSettings } from './settings.ts';

/** Whoever decides, in the rule's terms: the CSM they act as (null: none, an admin acting as such)
 * and that CSM's role. */
export interface Decider {
  csmId: string | null;
  role: CsmRole;
}

/** What the rule reads of an action. */
export interface DecidedAction {
  csm_id: string | null;
  type: ActionType | string;
  params: Record<string, unknown>;
}

/** What the rule reads of the settings. */
export type DecisionSettings = Pick<ActionSettings, 'discountMaxNoManager'>;

const mayDecideAny = (role: CsmRole) => role === 'manager' || role === 'admin';

/** The decisions on an action type that only a manager or admin may take, beyond ownership: for
 * each type, why `decision` with these params needs one (null: it does not). */
const MANAGER_ONLY: Partial<
  Record<ActionType, (decision: Decision, params: Record<string, unknown>, settings: DecisionSettings) => string | null>
> = {
  discount_offer: (decision, params, settings) => {
    const limit = settings.discountMaxNoManager;
    return decision === 'approve' && Number(params.percent) > limit ? `A discount above ${limit}% needs a manager's approval` : null;
  },
};

/** Why `decider` may not take `decision` on `action` (null: they may). */
export function decisionRefusal(decider: Decider, action: DecidedAction, decision: Decision, settings: DecisionSettings): string | null {
  if (mayDecideAny(decider.role)) return null;
  if (action.csm_id === null || action.csm_id !== decider.csmId) return "Only the customer's CSM or a manager may decide this action";
  return MANAGER_ONLY[action.type as ActionType]?.(decision, action.params, settings) ?? null;
}

/** The decider a caller of the API is (null: a member of the console with no active CSM of their
 * e-mail, who may not decide). */
export async function deciderOfPrincipal(db: Db, principal: Principal): Promise<Decider | null> {
  if (principal.kind === 'key') return { csmId: null, role: 'admin' };
  const [csm] = rowsOf<{ id: string; role: CsmRole }>(
    await db.execute(
      sql`select id, role from csms where org_id = ${principal.org.id} and email = ${principal.user.email.toLowerCase()} and active order by id limit 1`,
    ),
  );
  if (principal.user.role === 'admin') return { csmId: csm?.id ?? null, role: 'admin' };
  return csm ? { csmId: csm.id, role: csm.role } : null;
}

/** Why `principal` may not propose an action already approved (`requires_approval: false`): that is
 * approving it, so only who may approve the action it would be — the customer's CSM's, by the same
 * rule — may skip the decision (null: they may). */
export async function approvalOnProposalRefusal(
  db: Db,
  principal: Principal,
  proposal: { customerId: string; type: ActionType; params: Record<string, unknown> },
  settings: DecisionSettings,
): Promise<string | null> {
  const decider = await deciderOfPrincipal(db, principal);
  if (!decider) return 'Only a CSM of this organisation may approve: no active CSM has your e-mail';
  // The CSM the action would record (routeAction's: the CSM with the customer's CSM's e-mail).
  const [owner] = rowsOf<{ id: string }>(
    await db.execute(
      sql`select m.id from customers c join csms m on m.org_id = c.org_id and m.email = lower(c.csm->>'email') where c.org_id = ${principal.org.id} and c.id = ${proposal.customerId}`,
    ),
  );
  return decisionRefusal(decider, { csm_id: owner?.id ?? null, type: proposal.type, params: proposal.params }, 'approve', settings);
}
