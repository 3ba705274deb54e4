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

// Written the way customers write to a help desk (short, a question or a request first, the reason
// after, often informal), in the styles of the real messages the intelligence is measured on (docs/tickets.md
// "Ticket intelligence"): "how do I close our account?", "we will cancel at renewal", a transfer or
// a meeting to cancel that is no churn signal at all.
const TEMPLATES: Record<Mood, Template[]> = {
  howto: [
    { subject: 'export invoices?', description: "hi, where do I export last quarter's invoices as a CSV?", priority: 'low' },
    { subject: 'New admin', description: 'How do I give our new finance lead admin rights? Thanks in advance.', priority: 'low' },
    {
      subject: 'API rate limit',
      description: "What's the rate limit on our plan? We're building an integration and want to know how many calls a minute we get.",
      priority: 'normal',
    },
    {
      subject: 'Connecting Salesforce',
      description: 'is there a guide for connecting our Salesforce account? could not find one in the docs',
      priority: 'low',
    },
    { subject: 'Billing contact', description: 'Please change our billing contact to our finance team. Thank you.', priority: 'low' },
    {
      subject: 'Scheduled export',
      description: 'How do I cancel the scheduled export I set up last week? We only need it once a month.',
      priority: 'low',
    },
    { subject: "Thursday's call", description: "Can we cancel Thursday's onboarding call and do it next week instead?", priority: 'low' },
  ],
  bug: [
    {
      subject: 'dashboard not loading',
      description: "The revenue dashboard just spins since this morning. Can you take a look? It's a problem for the whole team.",
      priority: 'normal',
    },
    {
      subject: 'MRR total wrong',
      description: "The MRR total doesn't match the sum of our contracts. Looks broken to me.",
      priority: 'high',
    },
    {
      subject: 'Still broken after the update',
      description: 'Export is still broken after the update. Third time we report this, unacceptable.',
      priority: 'high',
    },
    {
      subject: 'Sync failed again',
      description: 'The nightly sync failed again and our numbers are off. Frustrating, it wastes hours every week.',
      priority: 'high',
    },
    {
      subject: 'Reports are painfully slow',
      description: 'every report takes minutes to load and people have stopped using it. terrible experience',
      priority: 'normal',
    },
    {
      subject: 'Customers missing after import',
      description: "Half of our customers are missing after yesterday's import?? This is a serious problem for us.",
      priority: 'high',
    },
  ],
  outage: [
    {
      subject: 'Service down for our whole team',
      description: 'Nobody on our team can log in, we get 503 errors. This is urgent: our finance close is today.',
      priority: 'urgent',
    },
    {
      subject: 'API returning errors',
      description: 'All our API calls fail since 9:00 with service unavailable. Production sync is down.',
      priority: 'urgent',
    },
    {
      subject: 'Login broken again',
      description: 'We cannot log in again today. This keeps happening and it is really disappointing.',
      priority: 'urgent',
    },
  ],
  billing: [
    {
      subject: 'Charged twice',
      description: 'We were charged twice for the same invoice this month. Frustrating. Please fix it and refund the duplicate.',
      priority: 'high',
    },
    {
      subject: 'Invoice is wrong',
      description: "The latest invoice doesn't match our contract, we were overcharged. We dispute it.",
      priority: 'high',
    },
    {
      subject: 'Late fee?',
      description: 'Why is there a late fee? We paid on time. Not happy, please remove it and dispute it internally.',
      priority: 'high',
    },
  ],
  cancellation: [
    {
      subject: 'Close our account',
      description:
        "Hi, how do I close our account? The tool never took off with the team and we're disappointed. Please confirm the end date.",
      priority: 'normal',
    },
    {
      subject: 'Renewal',
      description:
        "We will cancel at renewal. Please make sure nothing renews automatically. Sorry, it just didn't work out for us and the team is disappointed.",
      priority: 'normal',
    },
    {
      subject: 'Not renewing',
      description: "We won't be renewing this year, disappointed with the product. Can you send instructions to export all our data?",
      priority: 'normal',
    },
    {
      subject: 'Terminate contract',
      description: "We'd like to terminate our contract at the end of the term. Unhappy with the support lately. Who gets the notice?",
      priority: 'normal',
    },
  ],
  competitor: [
    {
      subject: 'Switching tools',
      description: "Heads up: we're switching to another vendor next quarter, the sync problems are too frustrating.",
      priority: 'normal',
    },
    {
      subject: 'Competitor offer',
      description: "A competitor offered us the same for 30% less. Honestly we're unhappy with support here. Can you match it?",
      priority: 'normal',
    },
    {
      subject: 'Evaluating alternatives',
      description: 'Management asked us to start evaluating alternatives, people are unhappy with the reports. What can you offer?',
      priority: 'normal',
    },
  ],
  downgrade: [
    {
      subject: 'Fewer seats',
      description: 'Budget cuts hit us hard, we need fewer seats at renewal. Disappointing, but how do we do that?',
      priority: 'normal',
    },
    {
      subject: 'Basic plan?',
      description: 'Adoption is poor and we barely use the advanced features, frankly disappointing. Can we downgrade to the basic plan?',
      priority: 'normal',
    },
  ],
  refund: [
    {
      subject: 'Unused seats',
      description: 'We paid for 15 seats nobody uses. Not happy about it, we want our money back for those.',
      priority: 'high',
    },
    {
      subject: 'Refund for the downtime',
      description: 'The service was down for days last month. We expect a refund, that was a bad experience.',
      priority: 'high',
    },
  ],
  praise: [
    { subject: 'Thanks for the quick fix', description: 'That fixed it, works great now. Thank you for the fast help!', priority: 'low' },
    {
      subject: 'Great onboarding',
      description: 'The onboarding session was excellent, the team loves the new reports. Thanks!',
      priority: 'low',
    },
    {
      subject: 'love the forecast view',
      description: 'the new forecast view is great, our board loved it. thanks to the team!',
      priority: 'low',
    },
  ],
  feature: [
    {
      subject: 'Slack alerts?',
      description: 'Would be great to get a Slack notification when an invoice becomes overdue.',
      priority: 'low',
    },
    {
      subject: 'Quarterly targets',
      description: 'It would be nice to set quarterly targets per segment in the dashboard.',
      priority: 'low',
    },
  ],
};

/** The ticket `revintel demo` shows how to post to the demo help desk: it carries a churn signal. */
export const EXAMPLE_TICKET = { id: 'T-1', subject: 'We will cancel', requester_email: 'cfo@example.com' } as const;

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
  return (byContacts[recentContacts] ??= analyseTicket(
    { subject: template.subject, description: template.description, priority: template.priority },
    { recentContacts },
  ));
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
    const status: TicketStatus =
      ageDays > 14 ? random.pick(['solved', 'closed'] as const) : ageDays > 3 ? random.pick(['pending', 'solved'] as const) : 'open';
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
