// What WhatsApp messages look like (docs/chat-platforms.md "WhatsApp"): an approval request as
// interactive reply buttons (at most 3 buttons, titles ≤ 20 characters, body ≤ 1,024) inside the
// 24-hour window, else as the approved template (body parameters {{1}} customer, {{2}} ARR, {{3}}
// band, {{4}} proposal; its three quick replies carry the payloads); a button's id or payload is
// `approve|reject|snooze:<action id>:<nonce>`. And what a CSM's free text means.
import type { Decision } from '../chat/port.ts';
import { type ActionFacts, decisionText, proposalText, topDrivers } from '../chat/facts.ts';

export const BODY_MAX = 1024;
export const TITLE_MAX = 20;
export const TEXT_MAX = 4096;
/** Meta refuses a template parameter with newlines, tabs or more than 4 spaces in a row. */
const PARAMETER_MAX = 200;

/** At most `max` characters (code points, so no surrogate pair is cut), with an ellipsis. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

const templateParameter = (text: string) =>
  clip(
    text
      .replace(/[\r\n\t]+/g, ' ')
      .replace(/ {4,}/g, '   ')
      .trim() || '-',
    PARAMETER_MAX,
  );

function money(minor: number | string | null, currency: string | null): string {
  if (minor === null || !currency) return 'unknown';
  return `${currency} ${(Number(minor) / 100).toLocaleString('en-US', { maximumFractionDigits: 0 })}`;
}

const band = (facts: ActionFacts) =>
  facts.risk
    ? `${facts.risk}${facts.probability !== null ? ` (${Math.round(Number(facts.probability) * 100)}%)` : ''}`
    : `triggered by ${facts.reason.replace('_', ' ')}`;

const BUTTON_TITLES: Record<'approve' | 'reject' | 'snooze', string> = { approve: 'Approve', reject: 'Reject', snooze: 'Snooze 7 days' };
const CHOICES = ['approve', 'reject', 'snooze'] as const;

export const payloadOf = (choice: 'approve' | 'reject' | 'snooze', actionId: string, nonce: string) => `${choice}:${actionId}:${nonce}`;

/** A button id or quick-reply payload of ours, or null. */
export function parsePayload(raw: string): { decision: 'approve' | 'reject' | 'snooze'; actionId: string; nonce: string } | null {
  const match = /^(approve|reject|snooze):([A-Za-z0-9_]{1,100}):([0-9a-f]{32})$/.exec(raw);
  return match ? { decision: match[1] as 'approve' | 'reject' | 'snooze', actionId: match[2]!, nonce: match[3]! } : null;
}

/** The approval request's text: customer, ARR, band, top three drivers, the proposal. */
export function approvalBody(facts: ActionFacts): string {
  const lines = [
    `Approval requested for *${facts.customer_name}*`,
    `ARR ${money(facts.arr, facts.currency)}, ${facts.risk ? `${band(facts)} churn risk` : band(facts)}`,
  ];
  const drivers = topDrivers(facts.drivers);
  if (drivers.length > 0) lines.push(`Top drivers: ${drivers.join(' · ')}`);
  lines.push(`Proposal: ${proposalText(facts)}${facts.rationale ? ` — ${facts.rationale}` : ''}`);
  return clip(lines.join('\n'), BODY_MAX);
}

/** Graph API `messages` body: interactive reply buttons. */
export function interactiveApproval(to: string, facts: ActionFacts, nonce: string) {
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to,
    type: 'interactive',
    interactive: {
      type: 'button',
      body: { text: approvalBody(facts) },
      footer: { text: clip(`Action ${facts.id}`, 60) },
      action: {
        buttons: CHOICES.map((choice) => ({
          type: 'reply',
          reply: { id: payloadOf(choice, facts.id, nonce), title: clip(BUTTON_TITLES[choice], TITLE_MAX) },
        })),
      },
    },
  };
}

/** Graph API `messages` body: the approval template, for outside the 24-hour window. */
export function templateApproval(to: string, facts: ActionFacts, nonce: string, template: { name: string; language: string }) {
  const parameters = [facts.customer_name, money(facts.arr, facts.currency), band(facts), proposalText(facts)].map((text) => ({
    type: 'text',
    text: templateParameter(text),
  }));
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to,
    type: 'template',
    template: {
      name: template.name,
      language: { code: template.language },
      components: [
        { type: 'body', parameters },
        ...CHOICES.map((choice, index) => ({
          type: 'button',
          sub_type: 'quick_reply',
          index: String(index),
          parameters: [{ type: 'payload', payload: payloadOf(choice, facts.id, nonce) }],
        })),
      ],
    },
  };
}

/** Graph API `messages` body: a plain text (confirmations, notes, follow-ups), optionally as a
 * reply to the message it answers. */
export function textMessage(to: string, text: string, replyTo?: string | null) {
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to,
    type: 'text',
    text: { body: clip(text, TEXT_MAX), preview_url: false },
    ...(replyTo ? { context: { message_id: replyTo } } : {}),
  };
}

/** The follow-up of a decided copy (a sent WhatsApp message cannot be edited). */
/** What a copy is told after a decision — or, when a snooze ended, that it waits again (the
 * approval's buttons, a reply to it, still decide). */
export const followUpText = (facts: ActionFacts) =>
  facts.status === 'pending_approval'
    ? `The snooze is over: ${proposalText(facts)} for ${facts.customer_name} waits for your decision again (action ${facts.id}). Use the buttons above, or reply approve, reject or snooze to it.`
    : `${decisionText(facts)}: ${proposalText(facts)} for ${facts.customer_name} (action ${facts.id}).`;

/** A reply to an approval message in words: approve / reject / "snooze 3d"; null: a note. */
export function decisionWords(text: string): { decision: Decision; days?: number } | null {
  const words = text
    .trim()
    .toLowerCase()
    .replace(/[.!]+$/, '');
  if (/^(approve|approved|yes|ok|okay)$/.test(words)) return { decision: 'approve' };
  if (/^(reject|rejected|no|decline)$/.test(words)) return { decision: 'reject' };
  const snooze = /^snooze(?:\s+(\d{1,2})\s*(?:d|days?)?)?$/.exec(words);
  if (snooze) {
    const days = snooze[1] ? Number(snooze[1]) : 7;
    return days >= 1 && days <= 30 ? { decision: 'snooze', days } : null;
  }
  return null;
}

export const HELP_TEXT = [
  'Reply to an approval request with the buttons, or with "approve", "reject" or "snooze 3d".',
  'Any other reply to it is a note on that customer; a message naming one of your customers is a note on it.',
].join('\n');
