// Demo support tickets: what a customer's health makes them write, month by month (health.ts).
// Healthy customers ask how-to questions, ask for features and say thanks; unhealthy ones write
// more often, report bugs and outages, dispute charges, name competitors, want to downgrade or a
// refund; a customer that gave notice asks to cancel. Every complaint scores negative. Each ticket is
// scored by the same intelligence the worker uses, so the demo shows real sentiment and signals.
import type { tickets } from '../../db/schema/index.ts';
import { analyseTicket, type TicketIntelligence } from '../tickets/intelligence.ts';
import type { TicketPriority, TicketStatus } from '../tickets/adapters/types.ts';
import { signals, type Random } from './health.ts';

export type TicketInsert = typeof tickets.$inferInsert;

interface Template {
  subject: string;
  description: string;
  priority: TicketPriority;
}

export type Mood = 'howto' | 'bug' | 'outage' | 'billing' | 'cancellation' | 'competitor' | 'downgrade' | 'refund' | 'praise' | 'feature';

const TEMPLATES: Record<Mood, Template[]> = {
  howto: [
    { subject: 'How do I export invoices to CSV?', description: 'Hi, where can I export all invoices of last quarter as a CSV file? Thanks!', priority: 'low' },
    { subject: 'Adding a new admin user', description: 'Could you tell me how to give admin rights to our new finance lead? Thanks in advance.', priority: 'low' },
    { subject: 'Question about API limits', description: 'We are building an integration. How many requests per minute does our plan allow?', priority: 'normal' },
    { subject: 'Connecting Salesforce', description: 'How do we connect our Salesforce account? Is there a guide?', priority: 'low' },
    { subject: 'Changing billing e-mail', description: 'Please change our billing contact to our finance team. Thank you.', priority: 'low' },
  ],
  bug: [
    { subject: 'Dashboard charts not loading', description: 'Since this morning the revenue dashboard shows a spinner forever. This is a problem for our team, please take a look.', priority: 'normal' },
    { subject: 'Wrong totals in the MRR report', description: 'The MRR report shows a different total than the sum of our contracts. Something seems broken.', priority: 'high' },
    { subject: 'Still broken after the update', description: 'The export is still broken, this is the third time we report it. Unacceptable.', priority: 'high' },
    { subject: 'Sync keeps failing', description: 'The nightly sync failed again and our numbers are wrong. This is frustrating and wastes our time.', priority: 'high' },
    { subject: 'Reports are painfully slow', description: 'Every report takes minutes to load. The team is annoyed and has stopped using it. Terrible experience.', priority: 'normal' },
    { subject: 'Data missing after import', description: "Half of our customers are missing after yesterday's import. This is a serious problem for us.", priority: 'high' },
  ],
  outage: [
    { subject: 'Service down for our whole team', description: 'Nobody on our team can log in, we get 503 errors. This is urgent: our finance close is today.', priority: 'urgent' },
    { subject: 'API returning errors', description: 'All our API calls fail since 9:00 with service unavailable. Production sync is down.', priority: 'urgent' },
    { subject: 'Login broken again', description: 'We cannot log in again today. This keeps happening and it is really disappointing.', priority: 'urgent' },
  ],
  billing: [
    { subject: 'Charged twice this month', description: 'We were charged twice for the same invoice. This is frustrating, please fix it and refund the duplicate charge.', priority: 'high' },
    { subject: 'Invoice amount is wrong', description: 'The latest invoice does not match our contract, we were overcharged. We dispute this invoice.', priority: 'high' },
    { subject: 'Late fee is unfair', description: 'You charged us a late fee although we paid. We are unhappy and dispute this charge.', priority: 'high' },
  ],
  cancellation: [
    { subject: 'Cancel our subscription', description: 'We have decided to cancel our subscription and will not renew. Please confirm the end date.', priority: 'normal' },
    { subject: 'Not renewing', description: "We won't be renewing our contract this year; we are disappointed with the product. Please send us instructions to export all our data.", priority: 'normal' },
    { subject: 'Ending our contract', description: 'Sadly we have decided not to renew. Please cancel the subscription at the end of the term and confirm.', priority: 'normal' },
  ],
  competitor: [
    { subject: 'Evaluating alternatives', description: 'Our team is unhappy and evaluating alternatives, considering switching to a cheaper option. What can you offer?', priority: 'normal' },
    { subject: 'Moving to another vendor', description: 'We are disappointed with the product and plan to switch to a competitor next quarter.', priority: 'normal' },
    { subject: 'Competitor offer', description: 'A competitor offered us a lower price. Frankly we are unhappy with the poor support here. Can you match it?', priority: 'normal' },
  ],
  downgrade: [
    { subject: 'Reduce our seats', description: 'Budget cuts hit us hard: we need to downgrade to a cheaper plan and reduce our seats. Disappointing, but how do we do that?', priority: 'normal' },
    { subject: 'Too expensive for us', description: 'The product is too expensive for what we use and adoption is poor. We want to downgrade to fewer seats.', priority: 'normal' },
  ],
  refund: [
    { subject: 'Refund for unused seats', description: 'We are not happy: we paid for seats nobody uses. We want a refund for the unused seats.', priority: 'high' },
    { subject: 'Please refund last invoice', description: 'The service was down for days last month. We demand a refund, this was a bad experience.', priority: 'high' },
  ],
  praise: [
    { subject: 'Thanks for the quick fix', description: 'That fixed it, works great now. Thank you for the fast help!', priority: 'low' },
    { subject: 'Great onboarding', description: 'The onboarding session was excellent, the team loves the new reports. Thanks!', priority: 'low' },
    { subject: 'Love the new forecast view', description: 'The new forecast view is great, our board loved it. Thanks to the team!', priority: 'low' },
  ],
  feature: [
    { subject: 'Feature request: Slack alerts', description: 'It would be great to get a Slack notification when an invoice becomes overdue.', priority: 'low' },
    { subject: 'Feature request: quarterly targets', description: 'It would be nice to set quarterly targets per segment in the dashboard.', priority: 'low' },
  ],
};

/** The moods of complaints; the rest is ordinary. */
export const NEGATIVE_MOODS: readonly Mood[] = ['bug', 'outage', 'billing', 'cancellation', 'competitor', 'downgrade', 'refund'];

/** The mood of a ticket from a customer of health `h` (a notice's ticket is asked for by name). */
export function moodFor(random: Random, h: number): Mood {
  if (!random.chance(signals.negative(h))) return random.pick(['howto', 'howto', 'feature', 'praise'] as const);
  if (random.chance(signals.leaving(h))) return random.pick(['competitor', 'downgrade', 'refund'] as const);
  return random.pick(['bug', 'bug', 'outage', 'billing'] as const);
}

const REQUESTERS = ['alex', 'billing', 'finance', 'it', 'jamie', 'ops', 'priya', 'sam'] as const;

const DAY_MS = 86_400_000;

/** The analysis of each template by the number of recent contacts: the texts are few, the tickets
 * many (an analysis takes ~60 µs; a 100,000-customer demo has about a million tickets). */
const analyses = new Map<Template, TicketIntelligence[]>();
function analysed(template: Template, recentContacts: number): TicketIntelligence {
  let byContacts = analyses.get(template);
  if (!byContacts) analyses.set(template, (byContacts = []));
  return (byContacts[recentContacts] ??= analyseTicket({ subject: template.subject, description: template.description, priority: template.priority }, { recentContacts }));
}

/** A ticket to write: when (epoch ms) and in which mood. */
export interface TicketDraft {
  at: number;
  mood: Mood;
}

export interface TicketContext {
  orgId: string;
  connectorId: string;
  today: string;
  customerId: string;
  /** The customer's position (its external ids). */
  index: number;
  domain: string;
  ticketId: (n: number) => string;
}

/** A customer's tickets from its drafts, oldest first. */
export function ticketRows(random: Random, drafts: TicketDraft[], context: TicketContext): TicketInsert[] {
  // Today's start: no ticket, nor its last update, comes after it.
  const todayMs = Date.parse(`${context.today}T00:00:00Z`);
  const sorted = [...drafts].sort((a, b) => a.at - b.at);
  return sorted.map(({ at: createdAt, mood }, n) => {
    const template: Template = random.pick(TEMPLATES[mood]);
    const ageDays = (todayMs - createdAt) / DAY_MS;
    const status: TicketStatus = ageDays > 14 ? random.pick(['solved', 'closed'] as const) : ageDays > 3 ? random.pick(['pending', 'solved'] as const) : 'open';
    const updatedAt = Math.min(todayMs, createdAt + random.int(1, 72) * 3_600_000);
    let recentContacts = 0;
    for (let k = n - 1; k >= 0 && createdAt - sorted[k]!.at <= 7 * DAY_MS; k--) recentContacts++;
    for (let k = n + 1; k < sorted.length && sorted[k]!.at - createdAt <= 7 * DAY_MS; k++) recentContacts++;
    const intelligence = analysed(template, recentContacts);
    return {
      id: context.ticketId(n),
      orgId: context.orgId,
      connectorId: context.connectorId,
      externalId: `DEMO-${context.index + 1}-${n + 1}`,
      customerId: context.customerId,
      subject: template.subject,
      description: template.description,
      status,
      statusNormalised: status,
      priority: template.priority,
      priorityNormalised: template.priority,
      requesterEmail: `${random.pick(REQUESTERS)}@${context.domain}`,
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

/** Every template of the moods, for tests. */
export const templatesOf = (mood: Mood): readonly Template[] => TEMPLATES[mood];
