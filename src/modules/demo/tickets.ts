// Demo support tickets: what a customer's situation makes them write. Churned and cancelling
// customers ask to cancel, name competitors, want refunds; customers with overdue invoices dispute
// charges; the rest ask how-to questions, report bugs and outages, thank support. Each ticket is
// scored by the same intelligence the worker uses, so the demo shows real sentiment and signals.
import type { tickets } from '../../db/schema/index.ts';
import { analyseTicket } from '../tickets/intelligence.ts';
import type { TicketPriority, TicketStatus } from '../tickets/adapters/types.ts';

export type TicketInsert = typeof tickets.$inferInsert;

type Random = { next(): number; int(min: number, max: number): number; pick<T>(items: readonly T[]): T; chance(p: number): boolean };

interface Template {
  subject: string;
  description: string;
  priority: TicketPriority;
}

type Mood = 'howto' | 'bug' | 'outage' | 'billing' | 'cancellation' | 'competitor' | 'downgrade' | 'praise' | 'feature';

const TEMPLATES: Record<Mood, Template[]> = {
  howto: [
    { subject: 'How do I export invoices to CSV?', description: 'Hi, where can I export all invoices of last quarter as a CSV file? Thanks!', priority: 'low' },
    { subject: 'Adding a new admin user', description: 'Could you tell me how to give admin rights to our new finance lead? Thanks in advance.', priority: 'low' },
    { subject: 'Question about API limits', description: 'We are building an integration. How many requests per minute does our plan allow?', priority: 'normal' },
  ],
  bug: [
    { subject: 'Dashboard charts not loading', description: 'Since this morning the revenue dashboard shows a spinner forever. Could you take a look?', priority: 'normal' },
    { subject: 'Wrong totals in the MRR report', description: 'The MRR report shows a different total than the sum of our contracts. Something seems broken.', priority: 'high' },
    { subject: 'Still broken after the update', description: 'The export is still broken, this is the third time we report it. Unacceptable.', priority: 'high' },
  ],
  outage: [
    { subject: 'Service down for our whole team', description: 'Nobody on our team can log in, we get 503 errors. This is urgent: our finance close is today.', priority: 'urgent' },
    { subject: 'API returning errors', description: 'All our API calls fail since 9:00 with service unavailable. Production sync is down.', priority: 'urgent' },
  ],
  billing: [
    { subject: 'Charged twice this month', description: 'We were charged twice for the same invoice. Please fix this and refund the duplicate charge.', priority: 'high' },
    { subject: 'Invoice amount is wrong', description: 'The latest invoice does not match our contract, we were overcharged. We dispute this invoice.', priority: 'high' },
  ],
  cancellation: [
    { subject: 'Cancel our subscription', description: 'We have decided to cancel our subscription and will not renew. Please confirm the end date.', priority: 'normal' },
    { subject: 'Not renewing', description: "We won't be renewing our contract this year. Please send us instructions to export all our data.", priority: 'normal' },
  ],
  competitor: [
    { subject: 'Evaluating alternatives', description: 'Our team is evaluating alternatives and considering switching to a cheaper option. What can you offer?', priority: 'normal' },
  ],
  downgrade: [
    { subject: 'Reduce our seats', description: 'Budget cuts: we need to downgrade to a cheaper plan and reduce our seats. How do we do that?', priority: 'normal' },
  ],
  praise: [
    { subject: 'Thanks for the quick fix', description: 'That fixed it, works great now. Thank you for the fast help!', priority: 'low' },
    { subject: 'Great onboarding', description: 'The onboarding session was excellent, the team loves the new reports. Thanks!', priority: 'low' },
  ],
  feature: [
    { subject: 'Feature request: Slack alerts', description: 'It would be great to get a Slack notification when an invoice becomes overdue.', priority: 'low' },
  ],
};

const REQUESTERS = ['alex', 'billing', 'finance', 'it', 'jamie', 'ops', 'priya', 'sam'] as const;

const DAY_MS = 86_400_000;

export interface CustomerSituation {
  customerId: string;
  index: number;
  domain: string;
  churned: boolean;
  cancelling: boolean;
  overdue: boolean;
}

/** The customer's tickets of the last 90 days, newest last. */
export function generateTickets(
  random: Random,
  situation: CustomerSituation,
  context: { orgId: string; connectorId: string; today: string; ticketId: (n: number) => string },
): TicketInsert[] {
  const moods: Mood[] = [];
  if (situation.churned || situation.cancelling) {
    moods.push(random.pick(['cancellation', 'competitor', 'downgrade'] as const));
    if (random.chance(0.6)) moods.push(random.pick(['bug', 'billing', 'competitor'] as const));
  }
  if (situation.overdue && random.chance(0.7)) moods.push('billing');
  const ordinary = random.chance(0.45) ? random.int(1, 2) : 0;
  for (let n = 0; n < ordinary; n++) moods.push(random.pick(['howto', 'howto', 'bug', 'feature', 'praise', 'outage'] as const));

  const todayMs = Date.parse(`${context.today}T12:00:00Z`);
  const created = moods.map(() => todayMs - random.int(0, 90) * DAY_MS - random.int(0, 36_000) * 1000).sort((a, b) => a - b);
  return moods.map((mood, n) => {
    const template: Template = random.pick(TEMPLATES[mood]);
    const createdAt = created[n]!;
    const ageDays = (todayMs - createdAt) / DAY_MS;
    const status: TicketStatus = ageDays > 14 ? random.pick(['solved', 'closed'] as const) : ageDays > 3 ? random.pick(['pending', 'solved'] as const) : 'open';
    const updatedAt = Math.min(todayMs, createdAt + random.int(1, 72) * 3_600_000);
    const recentContacts = created.filter((t, k) => k !== n && Math.abs(t - createdAt) <= 7 * DAY_MS).length;
    const intelligence = analyseTicket({ subject: template.subject, description: template.description, priority: template.priority }, { recentContacts });
    return {
      id: context.ticketId(n),
      orgId: context.orgId,
      connectorId: context.connectorId,
      externalId: `DEMO-${situation.index + 1}-${n + 1}`,
      customerId: situation.customerId,
      subject: template.subject,
      description: template.description,
      status,
      statusNormalised: status,
      priority: template.priority,
      priorityNormalised: template.priority,
      requesterEmail: `${random.pick(REQUESTERS)}@${situation.domain}`,
      sourceCreatedAt: new Date(createdAt),
      sourceUpdatedAt: new Date(updatedAt),
      sentiment: intelligence.sentiment,
      urgency: intelligence.urgency,
      topics: intelligence.topics,
      churnSignals: intelligence.churnSignals,
      // One text per demo ticket: what it said when it came in is what it says.
      firstSentiment: intelligence.sentiment,
      firstUrgency: intelligence.urgency,
      firstChurnSignals: intelligence.churnSignals,
      intelligenceMethod: intelligence.method,
      intelligenceVersion: intelligence.version,
      createdAt: new Date(createdAt),
      updatedAt: new Date(updatedAt),
    };
  });
}
