// What an approval request looks like in Google Chat (a `cardsV2` card): the same facts as the
// Slack message — customer, ARR, risk band and probability, top three drivers, the proposal — with
// Approve / Reject / Snooze 7 days buttons whose parameters carry the decision, the action id and
// the copy's nonce; once decided, the same card without buttons and with the decision. Card text
// takes Google's small HTML subset, so every value is escaped.
import { type ActionFacts, decisionText, proposalText, topDrivers } from '../chat/facts.ts';
import type { Decision } from '../chat/port.ts';

/** The buttons' functions (a Chat API click names it as `invokedFunction`/`actionMethodName`). */
export const GCHAT_FUNCTIONS = {
  approve: 'revintel_approve',
  reject: 'revintel_reject',
  snooze: 'revintel_snooze',
} as const satisfies Partial<Record<Decision, string>>;

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function money(minor: number | string | null, currency: string | null): string {
  if (minor === null || !currency) return 'unknown';
  return `${currency} ${(Number(minor) / 100).toLocaleString('en-US', { maximumFractionDigits: 0 })}`;
}

const cardId = (facts: Pick<ActionFacts, 'id'>) => `revintel-${facts.id}`;

function factWidgets(facts: ActionFacts) {
  const risk = facts.risk
    ? `${facts.risk} risk${facts.probability !== null ? ` (${Math.round(Number(facts.probability) * 100)}% churn probability)` : ''}`
    : `triggered by ${facts.reason.replace('_', ' ')}`;
  const widgets: Record<string, unknown>[] = [
    { decoratedText: { topLabel: 'ARR', text: escapeHtml(money(facts.arr, facts.currency)) } },
    { decoratedText: { topLabel: 'Risk', text: escapeHtml(risk) } },
  ];
  const drivers = topDrivers(facts.drivers).map(escapeHtml);
  if (drivers.length > 0) widgets.push({ decoratedText: { topLabel: 'Top drivers', text: drivers.join('<br>'), wrapText: true } });
  widgets.push({
    textParagraph: {
      text: `<b>Proposal:</b> ${escapeHtml(proposalText(facts))}${facts.rationale ? ` — ${escapeHtml(facts.rationale)}` : ''}`,
    },
  });
  return widgets;
}

/** The approval request: a card with the three buttons, and a text for notifications. */
export function approvalCard(facts: ActionFacts, nonce: string, recipient: string | null) {
  const button = (text: string, decision: keyof typeof GCHAT_FUNCTIONS) => ({
    text,
    onClick: {
      action: {
        function: GCHAT_FUNCTIONS[decision],
        parameters: [
          { key: 'decision', value: decision },
          { key: 'action_id', value: facts.id },
          { key: 'nonce', value: nonce },
        ],
      },
    },
  });
  return {
    text: `Approval requested${recipient ? ` from ${recipient}` : ''}: ${proposalText(facts)} for ${facts.customer_name}`,
    cardsV2: [
      {
        cardId: cardId(facts),
        card: {
          header: { title: 'Approval requested', subtitle: facts.customer_name },
          sections: [
            { widgets: factWidgets(facts) },
            {
              widgets: [
                { buttonList: { buttons: [button('Approve', 'approve'), button('Reject', 'reject'), button('Snooze 7 days', 'snooze')] } },
              ],
            },
            {
              widgets: [
                {
                  textParagraph: {
                    text: escapeHtml(
                      `Action ${facts.id}${recipient ? ` · for ${recipient}` : ''}${facts.expires_at ? ` · expires ${facts.expires_at}` : ''}`,
                    ),
                  },
                },
              ],
            },
          ],
        },
      },
    ],
  };
}

/** The card once decided (or expired): the facts and the decision, no buttons. */
export function decidedCard(facts: ActionFacts) {
  const decision = decisionText(facts);
  return {
    cardsV2: [
      {
        cardId: cardId(facts),
        card: {
          header: { title: decision, subtitle: facts.customer_name },
          sections: [
            { widgets: factWidgets(facts) },
            { widgets: [{ textParagraph: { text: `<b>${escapeHtml(decision)}</b> · action ${escapeHtml(facts.id)}` } }] },
          ],
        },
      },
    ],
  };
}
