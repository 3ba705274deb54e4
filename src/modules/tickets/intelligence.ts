// Ticket intelligence (README "Processing"): sentiment, urgency, topics and churn signals of one
// ticket, from its text plus how often the same requester or customer wrote lately. Pure functions,
// no database: the caller stores the result next to the ticket, with `method` and `version` so that
// rows scored by older rules can be found and scored again.
//
// Sentiment comes from the `sentiment` package (AFINN-165 word list, MIT): its dictionary, tokenizer
// and scorer, with two changes made through its own language API (a ticket "language"): a few words
// that are neutral in a support ticket lose their score, and negation looks three words back instead
// of one. A few phrase rules add support-ticket wording that single words cannot carry ("still
// broken", "third time").
// Churn signals, topics and urgency wording are phrase rules: regular expressions with word
// boundaries, case-insensitive, built from literal alternatives and bounded gaps only (no nested
// or unbounded quantifiers), so each runs in time linear in the text, which is capped as well.
import Sentiment from 'sentiment';
import type { TicketPriority } from './adapters/types.ts';

// The package's own English dictionary and negators. `require` with a literal path, not `import`:
// Bun makes a JSON file imported as a module read-only, and the package adds its emoji scores to
// that same object when it loads, which then throws. The paths are literal, so `bun build
// --compile` bundles both files: nothing is read from disk at run time.
const englishLabels = require('sentiment/languages/en/labels.json') as Record<string, number>;
const englishNegators = require('sentiment/languages/en/negators.json') as Record<string, number>;

export interface TicketText {
  subject: string | null;
  description: string | null;
  priority: TicketPriority | null;
}

export interface TicketContext {
  /** other tickets from the same requester or customer in the last 7 days */
  recentContacts: number;
}

export interface TicketIntelligence {
  /** -1..1, rounded to 3 decimals. */
  sentiment: number;
  urgency: Urgency;
  /** Sorted, from TOPICS. */
  topics: string[];
  /** Sorted, from CHURN_SIGNALS. */
  churnSignals: string[];
  method: string;
  version: string;
}

export const INTELLIGENCE_METHOD = 'afinn-165+rules';
/** Bump when a rule, a word list or the score mapping changes: stored results carry it. */
export const INTELLIGENCE_VERSION = '1';

export const URGENCIES = ['low', 'normal', 'high', 'critical'] as const;
export type Urgency = (typeof URGENCIES)[number];

export const TOPICS = [
  'account', 'billing', 'bug', 'cancellation', 'data', 'feature_request', 'integration', 'onboarding',
  'outage', 'performance', 'security',
] as const;
export type Topic = (typeof TOPICS)[number];

export const CHURN_SIGNALS = [
  'billing_dispute', 'cancellation', 'competitor', 'data_export', 'downgrade', 'escalation', 'non_renewal',
  'outage', 'refund',
] as const;
export type ChurnSignal = (typeof CHURN_SIGNALS)[number];

/** Only the start of a ticket is read: a pasted log or a long quoted e-mail thread adds nothing the
 * first 20,000 characters (about 3,000 words) do not say, and the cap bounds the time every rule
 * takes whatever a platform sends. The subject comes first, so it is always read. */
export const MAX_ANALYSED_CHARS = 20_000;

export function analyseTicket(text: TicketText, context: TicketContext): TicketIntelligence {
  const analysed = analysedText(text);
  // Phrase rules see one space between words, so a pattern's literal space matches any run of
  // whitespace without a `\s+` (a `\s+` over a long run of blanks is where regexes go quadratic).
  const phrases = analysed.replace(/\s+/g, ' ');
  const churnMatches = matchChurnRules(phrases);
  const churnSignals = CHURN_SIGNALS.filter((signal) => churnMatches.get(signal)?.unnegated);
  const sentiment = scoreSentiment(analysed, phrases);
  return {
    sentiment,
    urgency: decideUrgency(text.priority, phrases, churnSignals, sentiment, context.recentContacts),
    topics: findTopics(phrases, churnMatches),
    churnSignals,
    method: INTELLIGENCE_METHOD,
    version: INTELLIGENCE_VERSION,
  };
}

/** Subject, then description, capped, with typographic apostrophes made plain ("don’t" → "don't")
 * so that the negators and the patterns see one spelling. The description is cut before it is
 * joined: a 5 MB body is never copied whole. */
function analysedText(text: TicketText): string {
  const parts = [text.subject ?? '', (text.description ?? '').slice(0, MAX_ANALYSED_CHARS)];
  return parts
    .filter((part) => part.trim() !== '')
    .join('\n')
    .slice(0, MAX_ANALYSED_CHARS)
    .replace(/[\u2018\u2019\u02BC]/g, "'");
}

// ---------------------------------------------------------------------------------------------
// Negation of a phrase rule's match

/** Words that turn a following phrase around: "don't want to cancel", "no need to downgrade", "not
 * looking for alternatives". "can't"/"cannot" are left out on purpose: "I can't cancel my
 * subscription" still says the customer wants to cancel. */
const PHRASE_NEGATORS = new Set([
  'not', 'no', 'never', "don't", 'dont', "doesn't", 'doesnt', "didn't", 'didnt', "won't", 'wont', "wouldn't",
  "isn't", "aren't", "wasn't", "weren't", "shouldn't", 'without', 'nor', 'neither',
]);
/** A negation does not reach across these: "we are not happy and want to cancel" is a cancellation. */
const CLAUSE_JOINERS = new Set(['and', 'but', 'so', 'because', 'however', 'then', 'or']);
const NEGATION_WINDOW_WORDS = 3;

/** Whether one of the three words before `index`, in the same clause, is a negator. Reads at most
 * 80 characters back, so checking every match stays linear. */
function isNegated(phrases: string, index: number): boolean {
  const before = phrases.slice(Math.max(0, index - 80), index);
  const clause = before.split(/[.!?;:,()\n]/).pop() ?? '';
  const words = clause.toLowerCase().split(' ').filter((word) => word !== '');
  for (let back = 1; back <= NEGATION_WINDOW_WORDS && back <= words.length; back++) {
    const word = words[words.length - back] as string;
    if (CLAUSE_JOINERS.has(word)) return false;
    if (PHRASE_NEGATORS.has(word)) return true;
  }
  return false;
}

/** Whether the pattern matches at all, and whether at least one match is not negated. */
function matchPhrase(phrases: string, pattern: RegExp, negatable: boolean): { any: boolean; unnegated: boolean } {
  let any = false;
  for (const match of phrases.matchAll(pattern)) {
    any = true;
    if (!negatable || !isNegated(phrases, match.index)) return { any, unnegated: true };
  }
  return { any, unnegated: false };
}

/** How many matches are not negated. */
function countPhrase(phrases: string, pattern: RegExp, negatable: boolean): number {
  let count = 0;
  for (const match of phrases.matchAll(pattern)) {
    if (!negatable || !isNegated(phrases, match.index)) count++;
  }
  return count;
}

// ---------------------------------------------------------------------------------------------
// Churn signals

interface ChurnRule {
  signal: ChurnSignal;
  pattern: RegExp;
  /** False where the phrase carries its own negation ("won't be renewing", "not loading"). */
  negatable: boolean;
}

/** A word that may stand between a determiner and a noun: "cancel our *annual* subscription". */
const W = "[\\w'-]{1,30}";
const rule = (signal: ChurnSignal, source: string, negatable = true): ChurnRule => ({
  signal,
  pattern: new RegExp(source, 'gi'),
  negatable,
});

/** Nouns that, when down or unreachable, are an outage: "the site is down" but not "prices went down". */
const SERVICE_NOUNS = 'site|website|server|servers|service|app|application|api|system|platform|dashboard|portal|everything|it|login|instance|workspace|webhooks?|integration|sync|database';

const CHURN_RULES: ChurnRule[] = [
  // cancellation: "cancel my subscription", "we want to cancel", "terminate our contract", "close our account"
  rule('cancellation', `\\bcancel(?:l?ing|l?ed|s)? (?:my|our|the|this|your) (?:${W} )?(?:subscriptions?|accounts?|plans?|contracts?|memberships?|licen[cs]es?|workspaces?|services?)\\b`),
  rule('cancellation', "\\b(?:want|wants|wanted|like|wish|need|needs|going|plan|planning|decided|intend|intending|how|ready|request) to cancel\\b"),
  rule('cancellation', '\\bhow (?:do|can|could) (?:i|we) cancel\\b|\\b(?:considering|thinking (?:about|of)|planning on) cancel(?:l?ing)?\\b'),
  rule('cancellation', `\\bterminat(?:e|ing|ion of) (?:my|our|the|this) (?:${W} )?(?:contracts?|agreements?|subscriptions?|accounts?|services?)\\b`),
  rule('cancellation', `\\bclos(?:e|ing) (?:down )?(?:my|our|the) (?:${W} )?account\\b`),
  rule('cancellation', `\\b(?:end|ending|stop|stopping|discontinue|discontinuing) (?:my|our|the|this) (?:${W} )?(?:subscription|contract|membership)\\b`),
  rule('cancellation', '\\bcancell?ations?\\b'),

  // non_renewal: "won't be renewing", "will not renew", "decided not to renew", "let the contract lapse"
  rule('non_renewal', "\\b(?:will not|shall not|would not|do not|won't|wont|wouldn't|don't|dont|no longer) (?:be )?(?:(?:going|planning|intending|looking) to |planning on |plan to |intend to |want to |wish to )?renew(?:ing)?\\b", false),
  rule('non_renewal', '\\bnot (?:be )?(?:(?:going|planning|intending|looking) to |planning on |plan to |intend to |want to |wish to )renew\\b|\\bnot (?:be )?renewing\\b|\\bnot to renew\\b', false),
  rule('non_renewal', `\\b(?:let|letting) (?:our|my|the) (?:${W} )?(?:contract|subscription|licen[cs]e|plan)s? (?:lapse|expire)\\b`),
  rule('non_renewal', '\\b(?:opt(?:ing)? out of|turn(?:ing)? off|disabl(?:e|ing)|cancel(?:l?ing)?|stop(?:ping)?) (?:the |our |my )?auto[- ]?renew(?:al|s)?\\b'),

  // competitor: "switching to <X>", "moving to another vendor", "evaluating alternatives", "a cheaper option"
  rule('competitor', '\\b(?:switch(?:ing|ed)?|mov(?:e|ing)|migrat(?:e|ing)|go(?:ing)?) (?:over )?to (?:a |an )?(?:another|different|other|alternative|competing|cheaper) (?:provider|vendor|tool|platform|solution|service|product|company|system|supplier|crm)s?\\b'),
  // "we are switching to Zendesk" names the competitor; what follows "to" is unknown, so the
  // common upgrades and housekeeping moves are ruled out instead.
  rule('competitor', "\\b(?:we|we're|we'll|we've|i'm|i'll|company|team|management) (?:are |will |have |is |be |been |now |probably |seriously |considering |thinking about |planning on |going to |about to |looking at ){0,3}(?:switching|moving|migrating|switch|move|migrate) (?:over )?(?:to|away from)\\b(?! (?:the |a |an |your )?(?:new|latest|next|annual|yearly|monthly|higher|bigger|larger|premium|pro|enterprise|business|version|v\\d|office|api|plan|tier|dashboard|ui|beta)\\b)"),
  rule('competitor', '\\bswitch(?:ing)? (?:providers|vendors|tools|platforms|suppliers)\\b'),
  rule('competitor', '\\b(?:evaluating|looking at|looking for|considering|exploring|reviewing|testing|trialing|trialling|comparing|assessing) (?:other|alternative|different|competing) (?:options|vendors|providers|solutions|tools|platforms|products|suppliers)\\b'),
  rule('competitor', '\\b(?:evaluating|looking at|looking for|considering|exploring|reviewing|testing|trialing|trialling|comparing|assessing) (?:some |the |other )?(?:alternatives|competitors)\\b'),
  rule('competitor', '\\bcompetitors?\\b'),
  rule('competitor', '\\bcheaper (?:option|alternative|solution|provider|vendor|tool|offer|deal)s?\\b'),
  rule('competitor', '\\b(?:better|cheaper) (?:deal|offer|price|pricing) (?:from|elsewhere|with|at)\\b'),
  rule('competitor', '\\b(?:go|going|take (?:our|my) business|look|looking) elsewhere\\b'),

  // refund: "refund", "money back", "chargeback" ("refundable" is not a request)
  rule('refund', '\\brefund(?:s|ed|ing)?\\b'),
  rule('refund', '\\bmoney back\\b'),
  rule('refund', '\\bcharge[- ]?backs?\\b'),
  rule('refund', '\\breimburse(?:d|ment|ments)?\\b'),

  // downgrade: "downgrade", "reduce our seats", "a cheaper plan"
  rule('downgrade', '\\bdowngrad(?:e|ed|es|ing)\\b'),
  rule('downgrade', `\\b(?:reduce|reducing|cut|cutting|lower|lowering|decrease|decreasing) (?:the )?(?:number of |our |my |the )?(?:${W} )?(?:seats|licen[cs]es|users|seat count|user count)\\b`),
  rule('downgrade', '\\b(?:cheaper|smaller|lower|less expensive) (?:plan|tier|package|edition|subscription)\\b'),
  rule('downgrade', '\\b(?:move|moving|switch|switching|change|changing|go|going) (?:back )?(?:down )?to (?:a |the )?(?:basic|free|starter|lite) (?:plan|tier|package|edition)\\b'),

  // outage: "the site is down", "outage", "not loading", "503 errors", "service unavailable"
  rule('outage', '\\b(?:outages?|downtime)\\b'),
  rule('outage', `\\b(?:${SERVICE_NOUNS}) (?:is |are |was |were |went |has been |have been |keeps going |is still |still |seems |seems to be |is completely |is totally )?down\\b`),
  rule('outage', "\\b(?:not|isn't|won't|wont|doesn't|stopped|fails? to|failing to) (?:load|loading)\\b", false),
  rule('outage', '\\b50[234] (?:errors?|responses?|bad gateway|service unavailable|gateway time-?out)\\b|\\b(?:http|error|status|code|getting|returns?|returning|throwing) 50[234]\\b|\\b50[234]s\\b'),
  rule('outage', '\\b(?:service unavailable|bad gateway|gateway time-?out)\\b'),
  rule('outage', `\\b(?:${SERVICE_NOUNS}) (?:is |was |are |seems )?(?:unreachable|offline|inaccessible)\\b`),

  // billing_dispute: "overcharged", "charged twice", "wrong invoice", "dispute"
  rule('billing_dispute', '\\bover-?charg(?:e|ed|es|ing)\\b'),
  rule('billing_dispute', '\\b(?:charged|billed) (?:us |me )?(?:twice|double|two times|multiple times|incorrectly|wrongly|too much|more than)\\b'),
  rule('billing_dispute', '\\bdouble[- ]?(?:charged|charge|charging|billed|billing)\\b'),
  rule('billing_dispute', '\\b(?:wrong|incorrect|inaccurate|duplicate|duplicated|erroneous) (?:invoices?|charges?|bills?|amounts?|payments?)\\b'),
  rule('billing_dispute', '\\b(?:invoice|bill|charge) (?:is|was|looks|seems) (?:wrong|incorrect|too high)\\b'),
  rule('billing_dispute', '\\bdisput(?:e|es|ed|ing)\\b'),
  rule('billing_dispute', '\\bunauthori[sz]ed (?:charges?|payments?|transactions?)\\b'),

  // escalation: "speak to your manager", "escalate", "legal action"
  rule('escalation', "\\b(?:speak|talk|speaking|talking|put me through) (?:to|with) (?:your |a |the |someone'?s? )?(?:manager|supervisor|boss|superior|ceo|management|someone senior|someone more senior|someone in charge)\\b"),
  rule('escalation', '\\bescalat(?:e|ed|es|ing|ion)\\b'),
  rule('escalation', '\\blegal (?:action|steps|proceedings|team|counsel|department|dispute)\\b|\\b(?:our|my) (?:lawyers?|attorneys?|solicitors?)\\b|\\blawsuit\\b|\\bsue (?:you|your company)\\b|\\bto court\\b'),
  rule('escalation', '\\bformal complaint\\b|\\b(?:file|filing|lodge|lodging|raise|raising) a complaint\\b'),

  // data_export: "export all our data", "data export", "a copy of all our data"
  rule('data_export', `\\bexport(?:ing)? (?:all (?:of )?)?(?:our|my|the) (?:${W} )?data\\b|\\bexport(?:ing)? everything\\b`),
  rule('data_export', '\\bdata exports?\\b|\\b(?:full|complete|bulk) (?:data )?(?:export|dump)\\b'),
  rule('data_export', '\\b(?:download|retrieve|get|extract|take) (?:all )?(?:of )?(?:our|my) data\\b|\\bcopy of (?:all )?(?:of )?(?:our|my) data\\b'),
];

type ChurnMatches = Map<ChurnSignal, { any: boolean; unnegated: boolean }>;

/** For each signal: whether any of its rules matched, and whether one matched without a negation. */
function matchChurnRules(phrases: string): ChurnMatches {
  const matches: ChurnMatches = new Map();
  for (const { signal, pattern, negatable } of CHURN_RULES) {
    const seen = matches.get(signal) ?? { any: false, unnegated: false };
    if (seen.unnegated) continue;
    const found = matchPhrase(phrases, pattern, negatable);
    matches.set(signal, { any: seen.any || found.any, unnegated: found.unnegated });
  }
  return matches;
}

// ---------------------------------------------------------------------------------------------
// Topics

/** What a ticket is about, by keyword: unlike churn signals a negation does not remove a topic
 * ("this is not a billing question, but…" is still about billing). */
const TOPIC_PATTERNS: Record<Topic, RegExp | null> = {
  account: /\b(?:accounts?|log ?in|logins?|log-in|logged (?:in|out)|sign ?in|signing in|passwords?|2fa|mfa|two[- ]factor|usernames?|profile|locked out|permissions?|user roles?|invit(?:e|es|ation)|sso|single sign-on)\b/i,
  billing: /\b(?:invoices?|invoiced|invoicing|billing|billed|bills?|charges|charged|payments?|paid|credit card|receipts?|pricing|prices?|vat|tax(?:es)?|overcharged|refunds?|subscription fee)\b/i,
  bug: /\b(?:bugs?|buggy|errors?|crash(?:es|ed|ing)?|broken|exceptions?|stack ?traces?|glitch(?:es)?|not working|doesn't work|does not work|stopped working|fails?|failed|failing|defects?|regression)\b/i,
  // From the churn rules (below): a separate keyword list would only disagree with them.
  cancellation: null,
  data: /\b(?:data|database|csv|exports?|exported|exporting|imports?|imported|importing|backups?|restore|missing (?:rows|entries|records)|duplicate records)\b/i,
  feature_request: /\b(?:feature requests?|would be (?:great|nice|helpful|useful)|would love|it would help|please add|can you add|could you add|add (?:support|an option|the ability) (?:for|to)|wish (?:list|there was|it could|you had)|suggestions?|roadmap|is there (?:a way|any way|an option)|any plans to|feature idea|enhancement)\b/i,
  integration: /\b(?:integrations?|integrat(?:e|ed|ing)|apis?|webhooks?|sync(?:s|ed|ing)?|synchroni[sz](?:e|ed|ing|ation)|connectors?|plugins?|zapier|salesforce|hubspot|slack|jira|zendesk|oauth|sdk|endpoints?|third[- ]party)\b/i,
  onboarding: /\b(?:onboarding|onboard|getting started|get started|set ?up|setting up|initial setup|new (?:user|customer|account)s?|training|walkthrough|tutorial|demo|kick-?off|implementation|first steps)\b/i,
  outage: null,
  performance: /\b(?:slow(?:ly|ness|er|s)?|latency|lag(?:s|gy|ging)?|time ?outs?|timed out|takes (?:forever|ages|minutes)|performance|sluggish|load(?:ing)? times?|response times?|high cpu|memory usage|freez(?:e|es|ing))\b/i,
  security: /\b(?:security|breach(?:ed)?|hacked|hack|vulnerabilit(?:y|ies)|phishing|compromised|unauthori[sz]ed access|malware|gdpr|soc ?2|iso ?27001|pen(?:etration)? tests?|leak(?:ed|s)?|suspicious|encryption)\b/i,
};

/** Topics that churn rules also imply, negated or not ("we don't want to cancel" is about cancelling). */
const TOPICS_FROM_SIGNALS: Array<[ChurnSignal, Topic]> = [
  ['cancellation', 'cancellation'],
  ['non_renewal', 'cancellation'],
  ['refund', 'billing'],
  ['billing_dispute', 'billing'],
  ['downgrade', 'billing'],
  ['outage', 'outage'],
  ['data_export', 'data'],
];

function findTopics(phrases: string, churnMatches: ChurnMatches): Topic[] {
  const topics = new Set<Topic>();
  for (const topic of TOPICS) {
    const pattern = TOPIC_PATTERNS[topic];
    if (pattern?.test(phrases)) topics.add(topic);
  }
  for (const [signal, topic] of TOPICS_FROM_SIGNALS) {
    if (churnMatches.get(signal)?.any) topics.add(topic);
  }
  return [...topics].sort();
}

// ---------------------------------------------------------------------------------------------
// Sentiment

/** AFINN words that carry no feeling in a support ticket: requests and greetings ("Dear support,
 * please help", "I would like to", "feel free", "does the API support…", "please resolve", "share
 * the link", "clear the cache") and words of pasted code and logs ("true", "false", "kill the
 * process"), and "charged" (AFINN: -3, as in a crime), the plain verb of every billing question
 * (the billing-dispute rules catch the complaints). Left in, they make every request look pleased
 * and every stack trace upset. */
const TICKET_NEUTRAL_WORDS: Record<string, number> = {
  please: 0, help: 0, helps: 0, helping: 0, support: 0, supports: 0, supported: 0, supporting: 0, like: 0,
  want: 0, free: 0, kind: 0, hope: 0, yes: 0, dear: 0, resolve: 0, share: 0, clear: 0, true: 0, false: 0,
  kill: 0, killed: 0, charged: 0,
};

/** The package's negators plus the usual others. The package flips a word's score only when the
 * word right before it is a negator ("not happy"); ours looks up to three words back ("not very
 * happy", "never really worked well"), stopping at "but". */
const SENTIMENT_NEGATORS = new Set([
  ...Object.keys(englishNegators),
  'no', 'never', 'cannot', "didn't", 'didnt', "wasn't", 'wasnt', "aren't", 'arent', "weren't", "couldn't",
  "wouldn't", "shouldn't", "haven't", "hasn't", "hadn't", 'nothing', 'without', 'nor', 'neither', 'hardly',
]);

const TICKET_LANGUAGE = 'en-support-ticket';
/** A token no text contains (the library lower-cases and splits on spaces): a clause boundary. */
const CLAUSE_BREAK = 'xclausebreakx';
const analyser = new Sentiment();
analyser.registerLanguage(TICKET_LANGUAGE, {
  labels: { ...englishLabels, ...TICKET_NEUTRAL_WORDS },
  scoringStrategy: {
    apply(tokens, cursor, tokenScore) {
      for (let back = 1; back <= NEGATION_WINDOW_WORDS && cursor - back >= 0; back++) {
        const token = tokens[cursor - back] as string;
        if (token === 'but' || token === CLAUSE_BREAK) break;
        if (SENTIMENT_NEGATORS.has(token)) return -tokenScore;
      }
      return tokenScore;
    },
  },
});

/** E-mail closings say nothing about the ticket: "Best regards" alone would add AFINN's +3. */
const SIGN_OFFS = /\b(?:(?:best|kind|warm|warmest|many) regards|best wishes|thanks in advance|thank you in advance)\b/gi;

/** Support-ticket wording that AFINN scores 0 or too little, in AFINN's units (a word such as
 * "problem" is -2). Each match counts. */
const SENTIMENT_RULES: Array<{ pattern: RegExp; score: number; negatable: boolean }> = [
  // Frustration: the problem persists or repeats, or nobody answers.
  { score: -2, negatable: false, pattern: /\bstill (?:not|no|broken|failing|failed|crashing|down|waiting|happening|an issue|a problem|the same|doesn't|does not|isn't|is not|can't|cannot|unable|having|seeing|getting|stuck|missing|wrong)\b/gi },
  { score: -2, negatable: false, pattern: /\b(?:second|third|fourth|fifth|sixth|\d{1,2}(?:nd|rd|th)) time\b|\b(?:two|three|four|five|multiple|several|numerous|countless|so many) times\b|\byet again\b|\bagain and again\b/gi },
  // As much as AFINN's "broken" (-1): it says the same thing.
  { score: -1, negatable: false, pattern: /\b(?:not|isn't|is not|doesn't|does not|don't|do not|won't|will not|stopped|never|no longer) (?:[\w'-]{1,20} ){0,2}?work(?:s|ing|ed)?\b/gi },
  { score: -2, negatable: false, pattern: /\bno (?:response|reply|answer|one (?:has )?(?:responded|replied|answered|gotten back|got back))\b|\b(?:nobody|no one) (?:has )?(?:responded|replied|answered|got back|gotten back)\b|\b(?:haven't|have not|never) (?:heard|gotten|received) (?:back|a response|a reply|an answer|anything)\b/gi },
  // As much as "broken": the outage itself already raises urgency, this is only the tone.
  { score: -1, negatable: false, pattern: new RegExp(`\\b(?:${SERVICE_NOUNS}) (?:is |are |was |were |went |has been |have been |keeps going |is still |still )?down\\b|\\boutages?\\b`, 'gi') },
  { score: -2, negatable: false, pattern: /\bwaste of (?:time|money)\b|\bfed up\b|\bsick of\b|\bunusable\b/gi },
  // Resolution: the customer says it works now.
  { score: 2, negatable: true, pattern: /\b(?:works|working|worked) (?:great|fine|perfectly|again|now)\b/gi },
  { score: 2, negatable: true, pattern: /\b(?:that|this|it|you) (?:fixed|solved|resolved) (?:it|the (?:issue|problem))\b|\b(?:issue|problem) (?:is |has been )?(?:fixed|solved|resolved)\b/gi },
];

/** How far the summed score is squashed into -1..1: score / sqrt(score² + 30). This is VADER's
 * normalisation (it uses 15 for its ±4 word scale); 30 suits AFINN's ±5 scale and keeps one strongly
 * negative word ("terrible", "not happy": -3 → -0.48) above the -0.5 that raises urgency, while
 * two or three complaints pass it ("still broken … third time … unacceptable": -7 → -0.79).
 * Reference points: ±1 → ±0.18, ±2 → ±0.34, ±5 → ±0.67, ±10 → ±0.88. A sum rather than AFINN's
 * per-token average ("comparative") because an average fades to 0 in a long ticket that
 * complains in two sentences out of twenty. */
const SATURATION = 30;

/** AFINN score of each clause (negation does not reach across punctuation: "No, it is still broken")
 * plus the support-wording rules, squashed into -1..1 and rounded to 3 decimals. */
function scoreSentiment(analysed: string, phrases: string): number {
  // One pass of the library over the whole text, with each clause boundary written as a word that
  // ends the negation window (CLAUSE_BREAK): the same score as a pass per clause, and a 1 KB ticket
  // analysed in 148 µs instead of 187 (the library tokenises its input with four regular
  // expressions on every call).
  let score = analyser.analyze(analysed.replace(SIGN_OFFS, ' ').replace(/[.!?;:,()\n\r]+/g, ` ${CLAUSE_BREAK} `), { language: TICKET_LANGUAGE }).score;
  for (const { pattern, score: ruleScore, negatable } of SENTIMENT_RULES) {
    score += ruleScore * countPhrase(phrases, pattern, negatable);
  }
  const squashed = score / Math.sqrt(score * score + SATURATION);
  return Math.round(squashed * 1000) / 1000 + 0; // + 0 turns -0 into 0
}

// ---------------------------------------------------------------------------------------------
// Urgency

/** Wording that makes a ticket at least high whatever its priority, besides an outage signal. */
const SEVERE_WORDING = [
  /\b(?:can't|cannot|can not|unable to|not able to|couldn't|could not) (?:log ?in|login|sign ?in|access)\b|\blocked out\b/gi,
  /\bdata loss\b|\blost (?:all (?:of )?)?(?:our |my |the )?data\b|\bdata (?:is |was |has been |got |were |have been )?(?:lost|deleted|wiped|corrupted|gone)\b|\b(?:deleted|wiped|corrupted) (?:all )?(?:of )?(?:our|my|the) data\b/gi,
  /\b(?:security|data) (?:breach|incident)\b|\bbreach(?:ed)?\b|\bhacked\b|\bcompromised\b|\bunauthori[sz]ed access\b/gi,
  /\bproduction\b|\bprod (?:is )?down\b/gi,
];
/** Wording that raises urgency one step. */
const HURRY_WORDING = /\b(?:asap|urgent(?:ly)?|immediately|right away|as soon as possible|emergency)\b/gi;

const PRIORITY_URGENCY: Record<TicketPriority, Urgency> = { low: 'low', normal: 'normal', high: 'high', urgent: 'critical' };
const REPEAT_CONTACTS = 3;
const STRONGLY_NEGATIVE = -0.5;

/**
 * The urgency rule, in one place:
 *  1. start from the normalised priority: urgent → critical, high → high, normal or none → normal,
 *     low → low;
 *  2. raise to at least high on an outage signal or severe wording: can't log in / locked out, data
 *     loss, a security breach, production;
 *  3. then one step up for each of: hurry wording (asap, urgent, immediately, right away,
 *     emergency), 3 or more recent contacts from the same requester or customer, sentiment below
 *     -0.5;
 *  4. never above critical.
 * Wording that is negated ("no data loss", "not urgent") does not count.
 */
function decideUrgency(
  priority: TicketPriority | null,
  phrases: string,
  churnSignals: ChurnSignal[],
  sentiment: number,
  recentContacts: number,
): Urgency {
  let level = URGENCIES.indexOf(priority ? PRIORITY_URGENCY[priority] : 'normal');
  const severe = churnSignals.includes('outage') || SEVERE_WORDING.some((pattern) => matchPhrase(phrases, pattern, true).unnegated);
  if (severe) level = Math.max(level, URGENCIES.indexOf('high'));
  if (matchPhrase(phrases, HURRY_WORDING, true).unnegated) level++;
  if (recentContacts >= REPEAT_CONTACTS) level++;
  if (sentiment < STRONGLY_NEGATIVE) level++;
  return URGENCIES[Math.min(level, URGENCIES.length - 1)] as Urgency;
}
