// What an approval request looks like in Slack (Block Kit): the customer, ARR, risk band and
// probability (or the signal that triggered it), the top three drivers and the proposal, with
// Approve / Reject / Snooze 7 days buttons whose values carry the action id and the copy's nonce;
// and what a copy becomes once the action is decided (the same facts, the decision, no buttons).
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

/** The button action ids; a click's value is `<action id>:<nonce>`. */
export const BUTTONS = { approve: 'revintel_approve', reject: 'revintel_reject', snooze: 'revintel_snooze' } as const;

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

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

function money(minor: number | string | null, currency: string | null): string {
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

function summary(facts: ActionFacts): string[] {
  const risk = facts.risk
    ? `${facts.risk} risk${facts.probability !== null ? ` (${Math.round(Number(facts.probability) * 100)}% churn probability)` : ''}`
    : `triggered by ${facts.reason.replace('_', ' ')}`;
  const lines = [`*${escapeHtml(facts.customer_name)}* — ARR ${money(facts.arr, facts.currency)}, ${risk}`];
  const drivers = topDrivers(facts.drivers).map(escapeHtml);
  if (drivers.length > 0) lines.push(`Top drivers: ${drivers.join(' · ')}`);
  lines.push(`*Proposal:* ${escapeHtml(proposalText(facts))}${facts.rationale ? ` — ${escapeHtml(facts.rationale)}` : ''}`);
  return lines;
}

export function approvalBlocks(facts: ActionFacts, nonce: string) {
  const value = `${facts.id}:${nonce}`;
  const button = (text: string, action_id: string, style?: 'primary' | 'danger') => ({
    type: 'button',
    text: { type: 'plain_text', text },
    action_id,
    value,
    ...(style ? { style } : {}),
  });
  return {
    text: `Approval requested: ${proposalText(facts)} for ${facts.customer_name}`,
    blocks: [
      { type: 'section', block_id: 'revintel_summary', text: { type: 'mrkdwn', text: summary(facts).join('\n') } },
      {
        type: 'actions',
        block_id: 'revintel_decision',
        elements: [
          button('Approve', BUTTONS.approve, 'primary'),
          button('Reject', BUTTONS.reject, 'danger'),
          button('Snooze 7 days', BUTTONS.snooze),
        ],
      },
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: `Action ${facts.id}${facts.expires_at ? ` · expires ${facts.expires_at}` : ''}` }],
      },
    ],
  };
}

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

export function decidedBlocks(facts: ActionFacts) {
  const decision = decisionText(facts);
  return {
    text: `${decision}: ${proposalText(facts)} for ${facts.customer_name}`,
    blocks: [
      { type: 'section', block_id: 'revintel_summary', text: { type: 'mrkdwn', text: summary(facts).join('\n') } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `*${escapeHtml(decision)}* · action ${facts.id}` }] },
    ],
  };
}
