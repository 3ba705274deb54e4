// What an approval request looks like in Slack (Block Kit): the customer, ARR, risk band and
// probability (or the signal that triggered it), the top three drivers and the proposal, with
// Approve / Reject / Snooze 7 days buttons whose values carry the action id and the copy's nonce;
// and what a copy becomes once the action is decided (the same facts, the decision, no buttons).
import { type ActionFacts, decisionText, money, proposalText, topDrivers } from '../chat/facts.ts';

export const BUTTONS = { approve: 'revintel_approve', reject: 'revintel_reject', snooze: 'revintel_snooze' } as const;

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

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
