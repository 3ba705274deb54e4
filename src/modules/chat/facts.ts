// What an approval request shows, on every platform: the facts of an action (its customer, ARR,
// risk, drivers and proposal) read once per message, and the words every platform's message draws
// from them. Platforms lay them out (Block Kit, cards, WhatsApp text); the words are the same.
import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../db/client.ts';
import type { DecidedBy } from '../../db/schema/index.ts';

export interface ActionFacts {
  id: string;
  type: string;
  params: Record<string, unknown>;
  reason: string;
  rationale: string | null;
  status: string;
  decided_by: DecidedBy | null;
  trigger_count: number;
  customer_name: string;
  arr: number | string | null;
  currency: string | null;
  risk: string | null;
  probability: number | null;
  /** The prediction's drivers, strongest first (points and at_reference since drivers were grouped). */
  drivers: { label: string; impact: number; points?: number; at_reference?: boolean }[] | null;
  expires_at: string | null;
  snoozed_until: string | null;
}

/** The three strongest drivers as every platform's message shows them, unescaped: "↑ Term ends in
 * 45 days; notice given (+12.3 pts)". Groups at the reference customer's values say nothing. */
export function topDrivers(drivers: ActionFacts['drivers']): string[] {
  return (drivers ?? [])
    .filter((d) => d.impact !== 0 && d.at_reference !== true)
    .slice(0, 3)
    .map(
      (d) =>
        `${d.impact >= 0 ? '↑' : '↓'} ${d.label}${d.points === undefined ? '' : ` (${d.points >= 0 ? '+' : '−'}${Math.abs(d.points).toFixed(1)} pts)`}`,
    );
}

export function money(minor: number | string | null, currency: string | null): string {
  if (minor === null || !currency) return 'unknown';
  const amount = Number(minor) / 100;
  return `${currency} ${amount.toLocaleString('en-US', { maximumFractionDigits: 0 })}`;
}

/** The proposal in words. */
export function proposalText(facts: Pick<ActionFacts, 'type' | 'params'>): string {
  const p = facts.params;
  switch (facts.type) {
    case 'check_in':
      return `Check in (${String(p.channel)})`;
    case 'escalation':
      return `Escalate to the ${String(p.to)}`;
    case 'discount_offer':
      return `Offer ${String(p.percent)}% off for ${String(p.months)} months`;
    case 'renewal_call':
      return 'A renewal call';
    case 'success_plan':
      return `A success plan (${(Array.isArray(p.goals) ? p.goals.map(String) : []).join('; ')})`;
    default:
      return facts.type;
  }
}

/** The decision in words: "Approved by Ana", "Snoozed until …". */
export function decisionText(facts: Pick<ActionFacts, 'status' | 'decided_by' | 'snoozed_until'>): string {
  const by = facts.decided_by;
  const who = by?.name ? ` by ${by.name}` : by?.kind === 'api_key' ? ' through the API' : '';
  const at = by?.at ? ` at ${by.at.slice(11, 16)} UTC on ${by.at.slice(0, 10)}` : '';
  if (facts.status === 'expired') return 'Expired: nobody decided in time';
  const snoozed = facts.snoozed_until ? `Snoozed until ${facts.snoozed_until.slice(0, 10)}` : 'Snoozed';
  const word =
    { approved: 'Approved', executed: 'Approved', failed: 'Approved', rejected: 'Rejected', snoozed, cancelled: 'Cancelled' }[
      facts.status
    ] ?? facts.status;
  return `${word}${who}${at}`;
}

/** What an approval request shows (every platform's messages are drawn from it). */
export async function actionFacts(db: Db, orgId: string, actionId: string): Promise<ActionFacts | null> {
  const [row] = rowsOf<ActionFacts>(
    await db.execute(sql`
      select a.id, a.type, a.params, a.reason, a.rationale, a.status, a.decided_by, a.trigger_count,
        c.name as customer_name, p.arr, p.currency, p.risk, p.probability, p.drivers,
        to_char(a.snoozed_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as snoozed_until,
        to_char(a.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as expires_at
      from agent_actions a join customers c on c.org_id = a.org_id and c.id = a.customer_id
      left join predictions p on p.org_id = a.org_id and p.customer_id = a.customer_id
      where a.org_id = ${orgId} and a.id = ${actionId}`),
  );
  return row ?? null;
}
