// Ticket intelligence (docs/tickets.md "Processing" and "Ticket intelligence: how it is measured"):
// sentiment, urgency, topics and churn signals of one ticket, from its text plus how often the same
// requester or customer wrote lately. Pure functions, no database: the caller stores the result
// next to the ticket, with `method` and `version` so that rows scored by older rules can be found
// and scored again (revintel tickets reanalyze).
//
// Sentiment comes from the `sentiment` package (AFINN-165 word list, MIT): its dictionary, tokenizer
// and scorer, with changes made through its own language API (a ticket "language"): a few words
// that are neutral in a support ticket lose their score, a few words customers use about what they
// bought gain one, and negation looks three words back instead of one. A few phrase rules add
// support-ticket wording that single words cannot carry ("still broken", "third time"). A small
// learned model (sentiment-model.ts: logistic regression over words and word pairs, trained on the
// development part of the sentiment evaluation set with this score as one input) adds what the word
// list misses: most review-style sentences name no word it knows ("the battery lasts two days").
// Churn signals, topics and urgency wording are phrase rules: regular expressions with word
// boundaries, case-insensitive, built from literal alternatives and bounded gaps only (no nested
// or unbounded quantifiers), so each runs in time linear in the text, which is capped as well.
// Cancellation is a small grammar over them (a verb of ending and its object, see below), and every
// churn signal is read from the customer's own words only (quoted text left out).
import Sentiment from 'sentiment';
import type { TicketPriority } from './adapters/types.ts';
import { learnedSentimentScore } from './sentiment-model.ts';

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

export const INTELLIGENCE_METHOD = 'afinn-165+ngram-logreg+phrase-grammar';
/** Bump when a rule, a word list or the score mapping changes: stored results carry it. */
export const INTELLIGENCE_VERSION = '3';

export const URGENCIES = ['low', 'normal', 'high', 'critical'] as const;
export type Urgency = (typeof URGENCIES)[number];

export const TOPICS = [
  'account',
  'billing',
  'bug',
  'cancellation',
  'data',
  'feature_request',
  'integration',
  'onboarding',
  'outage',
  'performance',
  'security',
] as const;
export type Topic = (typeof TOPICS)[number];

export const CHURN_SIGNALS = [
  'billing_dispute',
  'cancellation',
  'competitor',
  'data_export',
  'downgrade',
  'escalation',
  'non_renewal',
  'outage',
  'refund',
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
  const churnMatches = matchChurnRules(ownWords(analysed).replace(/\s+/g, ' '));
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
  'not',
  'no',
  'never',
  "don't",
  'dont',
  "doesn't",
  'doesnt',
  "didn't",
  'didnt',
  "won't",
  'wont',
  "wouldn't",
  "isn't",
  "aren't",
  "wasn't",
  "weren't",
  "shouldn't",
  'without',
  'nor',
  'neither',
]);
/** A negation does not reach across these: "we are not happy and want to cancel" is a cancellation. */
const CLAUSE_JOINERS = new Set(['and', 'but', 'so', 'because', 'however', 'then', 'or']);
const NEGATION_WINDOW_WORDS = 3;

/** Whether one of the three words before `index`, in the same clause, is a negator. Reads at most
 * 80 characters back, so checking every match stays linear. */
function isNegated(phrases: string, index: number): boolean {
  const before = phrases.slice(Math.max(0, index - 80), index);
  const clause = before.split(/[.!?;:,()\n]/).pop() ?? '';
  const words = clause
    .toLowerCase()
    .split(' ')
    .filter((word) => word !== '');
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
  /** Lower-case fragments of which the text must hold one for the pattern to be tried at all: a
   * regular expression that starts with alternatives is tried at every position of the text, a
   * substring search is not (a 1 KB ticket without any went from 200 to ~40 µs for all rules). */
  needs: readonly string[] | null;
}

/** A word that may stand between a determiner and a noun: "cancel our *annual* subscription". */
const W = "[\\w'-]{1,30}";
const rule = (signal: ChurnSignal, source: string, negatable = true): ChurnRule => ({
  signal,
  pattern: new RegExp(source, 'gi'),
  negatable,
  needs: null,
});
const needs = (fragments: readonly string[], churnRule: ChurnRule): ChurnRule => ({ ...churnRule, needs: fragments });

/** Nouns that, when down or unreachable, are an outage: "the site is down" but not "prices went down". */
const SERVICE_NOUNS =
  'site|website|server|servers|service|app|application|api|system|platform|dashboard|portal|everything|it|login|instance|workspace|webhooks?|integration|sync|database';

const CHURN_RULES: ChurnRule[] = [
  // cancellation: see findCancellation below; these rules add nothing but the non-renewal wording,
  // which is a cancellation as well (a signal of its own too, for the rules that act on it).

  // non_renewal: "won't be renewing", "will not renew", "decided not to renew", "let the contract lapse"
  needs(
    ['renew'],
    rule(
      'non_renewal',
      "\\b(?:will not|shall not|would not|do not|won't|wont|wouldn't|don't|dont|no longer) (?:be )?(?:(?:going|planning|intending|looking) to |planning on |plan to |intend to |want to |wish to )?renew(?:ing)?\\b",
      false,
    ),
  ),
  needs(
    ['renew'],
    rule(
      'non_renewal',
      '\\bnot (?:be )?(?:(?:going|planning|intending|looking) to |planning on |plan to |intend to |want to |wish to )renew\\b|\\bnot (?:be )?renewing\\b|\\bnot to renew\\b',
      false,
    ),
  ),
  needs(
    ['lapse', 'expire'],
    rule('non_renewal', `\\b(?:let|letting) (?:our|my|the) (?:${W} )?(?:contract|subscription|licen[cs]e|plan)s? (?:lapse|expire)\\b`),
  ),
  needs(
    ['auto'],
    rule(
      'non_renewal',
      '\\b(?:opt(?:ing)? out of|turn(?:ing)? off|disabl(?:e|ing)|cancel(?:l?ing)?|stop(?:ping)?) (?:the |our |my )?auto[- ]?renew(?:al|s)?\\b',
    ),
  ),

  // competitor: "switching to <X>", "moving to another vendor", "evaluating alternatives", "a cheaper option"
  needs(
    ['another', 'different', 'other', 'alternative', 'competing', 'cheaper'],
    rule(
      'competitor',
      '\\b(?:switch(?:ing|ed)?|mov(?:e|ing)|migrat(?:e|ing)|go(?:ing)?|chang(?:e|ing)) (?:over )?to (?:a |an )?(?:another|different|other|alternative|competing|cheaper) (?:provider|vendor|tool|platform|solution|service|product|company|system|supplier|crm|bank|software)s?\\b',
    ),
  ),
  // "we are switching to Zendesk" names the competitor; what follows "to" is unknown, so the
  // common upgrades and housekeeping moves are ruled out instead.
  needs(
    ['switch', 'mov', 'migrat'],
    rule(
      'competitor',
      "\\b(?:we|we're|we'll|we've|i'm|i'll|company|team|management) (?:are |will |have |is |be |been |now |probably |seriously |considering |thinking about |planning on |going to |about to |looking at ){0,3}(?:switching|moving|migrating|switch|move|migrate) (?:over )?(?:to|away from)\\b(?! (?:the |a |an |your )?(?:new|latest|next|annual|yearly|monthly|higher|bigger|larger|premium|pro|enterprise|business|version|v\\d|office|api|plan|tier|dashboard|ui|beta|basic|starter|free|lite|standard|cheaper|smaller|lower|whisper|male|female|voice|mode|direct deposit)\\b)",
    ),
  ),
  needs(['switch'], rule('competitor', '\\bswitch(?:ing)? (?:providers|vendors|tools|platforms|suppliers|banks)\\b')),
  needs(
    ['other', 'alternative', 'different', 'competing', 'better', 'cheaper'],
    rule(
      'competitor',
      '\\b(?:evaluating|looking at|looking for|considering|exploring|reviewing|testing|trialing|trialling|comparing|assessing|found|chose|chosen|signed up with|going with) (?:some |a few |several )?(?:other|alternative|different|competing|better|cheaper) (?:options|vendors|providers|solutions|tools|platforms|products|suppliers|vendor|provider|solution|tool|platform|product|supplier)\\b',
    ),
  ),
  needs(
    ['alternatives', 'competitors'],
    rule(
      'competitor',
      '\\b(?:evaluating|looking at|looking for|considering|exploring|reviewing|testing|trialing|trialling|comparing|assessing) (?:some |the |other )?(?:alternatives|competitors)\\b',
    ),
  ),
  needs(
    ['alternative', 'replacement', 'instead of'],
    rule(
      'competitor',
      `\\b(?:evaluating|trialing|trialling|testing|trying|looking at|considering|piloting) (?:${W} ){1,3}?(?:as an alternative|as a replacement|instead of (?:you|your))\\b`,
    ),
  ),
  needs(['competitor'], rule('competitor', '\\bcompetitors?\\b')),
  needs(['cheaper'], rule('competitor', '\\bcheaper (?:option|alternative|solution|provider|vendor|tool|offer|deal)s?\\b')),
  needs(
    ['better', 'cheaper'],
    rule('competitor', '\\b(?:better|cheaper) (?:deal|offer|price|pricing|rates?) (?:from|elsewhere|with|at)\\b'),
  ),
  needs(
    ['elsewhere', 'shop'],
    rule(
      'competitor',
      '\\b(?:go|going|take (?:our|my) business|taking (?:our|my) business|look|looking|shop(?:ping)? around|shop) elsewhere\\b|\\bshop(?:ping)? around\\b',
    ),
  ),

  // refund: money back. Its own negation only ("we don't need a refund", below): "I have not
  // received my refund" is still about a refund.
  needs(['refund'], rule('refund', '\\brefund(?:s|ed|ing)?\\b', false)),
  needs(
    ['back'],
    rule(
      'refund',
      '\\bmoney back\\b|\\b(?:want|need|give me|get) (?:all )?(?:my|our|the|this|those|that) (?:money|[£$€]?\\d[\\d.,]*(?: (?:pounds|dollars|euros))?) back\\b',
      false,
    ),
  ),
  needs(['charge'], rule('refund', '\\bcharge[- ]?backs?\\b', false)),
  needs(['reimburs'], rule('refund', '\\breimburs(?:e|ed|ement|ements)\\b', false)),
  needs(
    ['return'],
    rule(
      'refund',
      `\\breturn(?:ing)? (?:an|the|my|this|these|our|a) (?:${W} )?(?:items?|products?|purchases?|orders?)\\b|\\bcan i return it\\b`,
      false,
    ),
  ),

  // downgrade: "downgrade", "reduce our seats", "a cheaper plan"
  needs(['downgrad', 'downsiz'], rule('downgrade', '\\bdowngrad(?:e|ed|es|ing)\\b|\\bdownsiz(?:e|ed|es|ing)\\b')),
  needs(
    ['seat', 'licen', 'user', 'tier', 'plan', 'subscription'],
    rule(
      'downgrade',
      `\\b(?:reduce|reducing|cut|cutting|lower|lowering|decrease|decreasing|drop|dropping|remove|removing) (?:the )?(?:number of |our |my |the |some |a few |\\d{1,5} )?(?:${W} )?(?:seats|licen[cs]es|users|seat count|user count|tier|plan|subscription)\\b`,
    ),
  ),
  needs(
    ['fewer', 'scal'],
    rule(
      'downgrade',
      '\\bfewer (?:seats|licen[cs]es|users)\\b|\\bscal(?:e|ing) (?:back|down) (?:our |the |my )?(?:plan|subscription|seats|licen[cs]es|usage|contract)\\b',
    ),
  ),
  needs(
    ['plan', 'tier', 'package', 'edition', 'subscription'],
    rule('downgrade', '\\b(?:cheaper|smaller|lower|less expensive) (?:plan|tier|package|edition|subscription)\\b'),
  ),
  needs(
    ['basic', 'free', 'starter', 'lite', 'standard', 'entry'],
    rule(
      'downgrade',
      '\\b(?:move|moving|switch|switching|change|changing|go|going|drop|dropping) (?:us |our (?:account|plan|subscription) )?(?:back )?(?:down )?to (?:a |the )?(?:basic|free|starter|lite|standard|entry[- ]level) (?:plan|tier|package|edition|version)\\b',
    ),
  ),

  // outage: "the site is down", "outage", "not loading", "503 errors", "service unavailable"
  needs(['outage', 'downtime'], rule('outage', '\\b(?:outages?|downtime)\\b')),
  needs(
    ['down'],
    rule(
      'outage',
      `\\b(?:${SERVICE_NOUNS}) (?:is |are |was |were |went |has been |have been |keeps going |is still |still |seems |seems to be |is completely |is totally )?down\\b`,
    ),
  ),
  needs(['load'], rule('outage', "\\b(?:not|isn't|won't|wont|doesn't|stopped|fails? to|failing to) (?:load|loading)\\b", false)),
  needs(
    ['50'],
    rule(
      'outage',
      '\\b50[234] (?:errors?|responses?|bad gateway|service unavailable|gateway time-?out)\\b|\\b(?:http|error|status|code|getting|returns?|returning|throwing) 50[234]\\b|\\b50[234]s\\b',
    ),
  ),
  needs(['unavailable', 'bad gateway', 'gateway time'], rule('outage', '\\b(?:service unavailable|bad gateway|gateway time-?out)\\b')),
  needs(
    ['unreachable', 'offline', 'inaccessible'],
    rule('outage', `\\b(?:${SERVICE_NOUNS}) (?:is |was |are |seems )?(?:unreachable|offline|inaccessible)\\b`),
  ),

  // billing_dispute: "overcharged", "charged twice", "wrong invoice", "dispute"
  needs(['charg'], rule('billing_dispute', '\\bover-?charg(?:e|ed|es|ing)\\b')),
  needs(
    ['charged', 'billed'],
    rule(
      'billing_dispute',
      '\\b(?:charged|billed) (?:us |me )?(?:twice|double|two times|multiple times|incorrectly|wrongly|too much|more than)\\b',
    ),
  ),
  needs(['double'], rule('billing_dispute', '\\bdouble[- ]?(?:charged|charge|charging|billed|billing)\\b')),
  needs(
    ['wrong', 'incorrect', 'inaccurate', 'duplicat', 'erroneous'],
    rule(
      'billing_dispute',
      '\\b(?:wrong|incorrect|inaccurate|duplicate|duplicated|erroneous) (?:invoices?|charges?|bills?|amounts?|payments?)\\b',
    ),
  ),
  needs(
    ['wrong', 'incorrect', 'too high'],
    rule('billing_dispute', '\\b(?:invoice|bill|charge) (?:is|was|looks|seems) (?:wrong|incorrect|too high)\\b'),
  ),
  needs(['disput'], rule('billing_dispute', '\\bdisput(?:e|es|ed|ing)\\b')),
  needs(['unauthori'], rule('billing_dispute', '\\bunauthori[sz]ed (?:charges?|payments?|transactions?)\\b')),

  // escalation: "speak to your manager", "escalate", "legal action"
  needs(
    ['speak', 'talk', 'put me through'],
    rule(
      'escalation',
      "\\b(?:speak|talk|speaking|talking|put me through) (?:to|with) (?:your |a |the |someone'?s? )?(?:manager|supervisor|boss|superior|ceo|management|someone senior|someone more senior|someone in charge)\\b",
    ),
  ),
  needs(['escalat'], rule('escalation', '\\bescalat(?:e|ed|es|ing|ion)\\b')),
  needs(
    ['legal', 'lawyer', 'attorney', 'solicitor', 'lawsuit', 'sue ', 'court'],
    rule(
      'escalation',
      '\\blegal (?:action|steps|proceedings|team|counsel|department|dispute)\\b|\\b(?:our|my) (?:lawyers?|attorneys?|solicitors?)\\b|\\blawsuit\\b|\\bsue (?:you|your company)\\b|\\bto court\\b',
    ),
  ),
  needs(['complaint'], rule('escalation', '\\bformal complaint\\b|\\b(?:file|filing|lodge|lodging|raise|raising) a complaint\\b')),

  // data_export: "export all our data", "data export", "a copy of all our data"
  needs(
    ['export'],
    rule('data_export', `\\bexport(?:ing)? (?:all (?:of )?)?(?:our|my|the) (?:${W} )?data\\b|\\bexport(?:ing)? everything\\b`),
  ),
  needs(['export', 'dump'], rule('data_export', '\\bdata exports?\\b|\\b(?:full|complete|bulk) (?:data )?(?:export|dump)\\b')),
  needs(
    ['data'],
    rule(
      'data_export',
      '\\b(?:download|retrieve|get|extract|take) (?:all )?(?:of )?(?:our|my) data\\b|\\bcopy of (?:all )?(?:of )?(?:our|my) data\\b',
    ),
  ),
];

type ChurnMatches = Map<ChurnSignal, { any: boolean; unnegated: boolean }>;

/** For each signal: whether any of its rules matched, and whether one matched without a negation.
 * A non-renewal is a cancellation too; a statement that the customer stays ("we've decided to
 * stay", "we withdraw our cancellation", "we were going to cancel but…") takes back the signals
 * of leaving; "we don't need a refund" takes back the refund. */
function matchChurnRules(phrases: string): ChurnMatches {
  const matches: ChurnMatches = new Map();
  const lower = phrases.toLowerCase();
  for (const { signal, pattern, negatable, needs: fragments } of CHURN_RULES) {
    const seen = matches.get(signal) ?? { any: false, unnegated: false };
    if (seen.unnegated) continue;
    if (fragments && !fragments.some((fragment) => lower.includes(fragment))) {
      matches.set(signal, seen);
      continue;
    }
    const found = matchPhrase(phrases, pattern, negatable);
    matches.set(signal, { any: seen.any || found.any, unnegated: found.unnegated });
  }
  const cancellation = findCancellation(phrases);
  const nonRenewal = matches.get('non_renewal');
  matches.set('cancellation', {
    any: cancellation.any || Boolean(nonRenewal?.any),
    unnegated: cancellation.unnegated || Boolean(nonRenewal?.unnegated),
  });
  const leaving = (['cancellation', 'non_renewal', 'competitor', 'downgrade'] as const).some((signal) => matches.get(signal)?.unnegated);
  if (leaving && STAYS.test(phrases)) {
    for (const signal of ['cancellation', 'non_renewal', 'competitor', 'downgrade'] as const) {
      const seen = matches.get(signal);
      if (seen) seen.unnegated = false;
    }
  }
  const refund = matches.get('refund');
  if (refund?.unnegated && NO_REFUND.test(phrases)) refund.unnegated = false;
  return matches;
}

/** The customer's own words: what it quotes is left out of the churn signals. Lines quoted in an
 * e-mail reply ("> …"), the thread below "On … wrote:" or "-----Original Message-----", and text in
 * double quotes (a help-centre article pasted as "To cancel your subscription, go to…"). */
function ownWords(text: string): string {
  const reply = /^(?:on .{1,200} wrote:|-{2,} ?original message ?-{2,}|from: .{1,200}\bsent: )/im.exec(text);
  const own = reply ? text.slice(0, reply.index) : text;
  return own.replace(/^[ \t]*>.*$/gm, ' ').replace(/"[^"\n]{0,600}"|\u201C[^\u201D\n]{0,600}\u201D/g, ' ');
}

// ---------------------------------------------------------------------------------------------
// Cancellation: intent to end or not renew the relationship (account, subscription, contract,
// service), not a transaction. Read as a verb of ending and its object:
//  - "cancel / close / terminate / delete / deactivate / end / discontinue … my|our|the|this (annual)
//    subscription|account|contract|membership|plan|licence|service" ("stop" only with a
//    subscription, contract, membership or service: "put a stop on my account" is a freeze);
//  - the object first: "my account should be closed", "account closure", "termination of our contract";
//  - "cancel" with no object ("we will cancel", "we will cancel at renewal", "how do I cancel?",
//    "Cancel."), or with "it"/"that" when the last thing named before it is an account;
//  - leaving the vendor: "we're moving off your platform", "thinking about leaving", "no longer want
//    to be a customer", "I don't want this account anymore".
// A named object that is not the relationship ("cancel my transfer / order / reservation / card /
// meeting / the export") is not a cancellation, whatever the verb; neither is a negated phrase
// ("we do not plan to cancel").

/** What a customer ends when it leaves. */
const RELATIONSHIP =
  'accounts?|subscriptions?|contracts?|memberships?|licen[cs]es?|workspaces?|services|service|plans?|agreements?|relationship|partnership';
/** Things that get cancelled without leaving: a named one of these makes "cancel" a transaction. */
const NOT_RELATIONSHIP = new Set(
  (
    'payment payments transfer transfers transaction transactions order orders purchase purchases invoice invoices bill ' +
    'meeting meetings call calls ticket tickets reservation reservations booking bookings appointment appointments card cards ' +
    'top-up top-ups topup debit debits cheque cheques check checks loan flight flights request requests ' +
    'delivery deliveries shipment refund charge charges withdrawal deposit feature features trial demo event webinar session ' +
    'room rooms spa dinner lunch breakfast table party pedicure item items export import job sync report alert alerts notification ' +
    'notifications email emails invite invitation upgrade add-on addon integration user users seat seats trip holiday vacation meal ' +
    'travel insurance phone number tour class lesson ride taxi uber slot'
  ).split(' '),
);
/** Verbs of ending that take the relationship as object. */
const ENDING_VERBS =
  'cancel|cancell?ing|cancell?ed|cancels|close|closing|close out|closing out|close down|closing down|terminate|terminating|delete|deleting|deactivate|deactivating|disable|disabling|end|ending|discontinue|discontinuing|remove|removing|kill|shut down|shutting down|get rid of|getting rid of|invalidate|finish up with|finishing up with|be done with';
const DETERMINERS = "(?:(?:all|both|of|my|our|the|this|that|these|those|an|a|entire|whole|current|existing|company|company's) ){0,3}";
const VERB_OBJECT = new RegExp(`\\b(?:${ENDING_VERBS}) ${DETERMINERS}((?:${W} ){0,2}?)(?:${RELATIONSHIP})\\b`, 'gi');
const OBJECT_FIRST = new RegExp(
  `\\b(?:${RELATIONSHIP}) (?:cancell?ation|closure|termination|deletion|deactivation)s?\\b` +
    `|\\b(?:${RELATIONSHIP}) (?:to be|be|being|needs to be|need to be|should be|must be|has to be|have to be) (?:cancell?ed|closed|deleted|terminated|deactivated|discontinued|removed|shut down)\\b` +
    `|\\b(?:want|need|like|wish)(?:s|ed)? (?:my|our|the|this) (?:${W} )?(?:${RELATIONSHIP}) (?:cancell?ed|closed|deleted|terminated|deactivated)\\b` +
    `|\\b(?:cancell?ation|closure|closing|termination|deletion|deactivation) of ${DETERMINERS}(?:${W} )?(?:${RELATIONSHIP})\\b`,
  'gi',
);
/** "cancel" where an intent or a sentence start comes before it: the object is decided below. */
const CANCEL_VERB =
  /(?:^|[.!?;:]\s?|\b(?:will|'ll|shall|want to|wants to|wanted to|would like to|'d like to|like to|need to|needs to|have to|has to|going to|gonna|plan to|planning to|decided to|intend to|wish to|ready to|about to|how to|how (?:do|can|could|would|should) (?:i|we)|please|pls|can you|could you|you can|you may|let me|help me|considering|thinking (?:about|of)|planning on)\s)cancel(?:l?ing)?\b/gi;
const PRONOUN = /^(?:it|that|this|them|those|these|everything)\b/i;
/** Ending the relationship by leaving the vendor rather than ending an object. */
const LEAVING = new RegExp(
  `\\b(?:leav(?:e|ing)|quit(?:ting)?|exit(?:ing)?|mov(?:e|ing) (?:off|away from)|get(?:ting)? out of|stop(?:ping)? using|done with|finished with|walk(?:ing)? away from) (?:your|this|the) (?:${W} )?(?:service|platform|product|software|tool|app|bank|company|business|system|solution|vendor|provider)s?\\b` +
    '|\\b(?:thinking (?:about|of)|considering|planning (?:on|to)|decided to|going to|want to) (?:leav(?:e|ing)|quit(?:ting)?)(?= ?(?:$|[.!?,;]|you\\b|for good|altogether|as customers?|the (?:bank|company|platform|service)))' +
    "|\\b(?:we are|we're|i am|i'm|we will be) (?:leav(?:e|ing)|quit(?:ting)?)(?= (?:you\\b|for good|altogether|as customers?|the (?:bank|company|platform|service)))" +
    `|\\bstop(?:ping)? (?:my|our|the|this) (?:${W} )?(?:subscription|contract|membership|service)\\b` +
    `|\\bno longer (?:want|wish|need) to be (?:a |your )?customers?\\b|\\bno longer (?:want|need|use) (?:to (?:keep|have|use) )?(?:this|my|our|the) (?:${W} )?(?:account|subscription|service|platform|contract)\\b` +
    `|\\b(?:don't|do not) (?:want|need) (?:this|my|our|the|that) (?:${W} )?(?:account|subscription|service|platform|contract) any ?(?:more|longer)\\b` +
    '|\\bend (?:our|the|this) (?:relationship|partnership)\\b|\\bpart ways\\b|\\bstop being (?:a |your )?customers?\\b',
  'gi',
);

/** Statements that the customer stays after all. */
const STAYS = new RegExp(
  "\\b(?:decided|decide|chose|choose|going|plan|planning|happy|glad|will) to (?:stay|remain)\\b|\\bwe(?:'ll| will) stay\\b" +
    `|\\b(?:withdraw|withdrawing|retract|retracting|revoke|revoking|rescind|rescinding|disregard|ignore|take back) (?:our|my|the|this|that) (?:${W} )?(?:cancell?ation|termination|notice|request to cancel)\\b` +
    '|\\bchanged (?:our|my) minds?\\b' +
    '|\\b(?:were|was|had been|had) (?:going|planning|thinking|considering|about|ready|set)(?: to| of| about| on)? (?:cancel|leav|switch|downgrad|terminat|clos|mov)[a-z]*\\b[^.!?]{0,80}?\\bbut (?:you|your|the|it|now|after|since|that|this|we)\\b' +
    '|\\bno longer (?:need|want|plan|planning|going) to (?:cancel|leave|switch|downgrade|close|terminate)\\b',
  'i',
);
const NO_REFUND =
  /\b(?:don't|do not|didn't|did not|won't|will not|not) (?:want|need|ask(?:ing)? for|expect(?:ing)?|looking for|requesting) (?:a |any |the |my )?(?:refund|money back|reimbursement)\b|\bno (?:refund|reimbursement) (?:is )?(?:needed|necessary|required)\b/i;

/** Whether `words` (the gap between a verb and its object) names something that is not the
 * relationship: "cancel my *dinner* plans", "close the *card* account"… */
function namesAnotherThing(words: string): boolean {
  return words
    .toLowerCase()
    .split(' ')
    .some((word) => NOT_RELATIONSHIP.has(word));
}

/** The object after "cancel": the relationship (true), another thing (false) or none named (null). */
function cancelObject(phrases: string, after: number): boolean | null {
  const rest = phrases.slice(after, after + 60).replace(/^[\s]+/, '');
  if (rest === '' || /^[.!?,;:)]/.test(rest)) return namedEarlier(phrases, after);
  if (PRONOUN.test(rest)) return pronounMeansRelationship(phrases, after);
  const words = rest
    .toLowerCase()
    .split(/[\s.!?,;:]+/)
    .slice(0, 4);
  const first = words[0] ?? '';
  // "a cancellation for the dinner plans", "cancellation of our contract": the object follows.
  if (first === 'for' || first === 'of') {
    if (RELATIONSHIP_NEXT.test(rest.slice(first.length + 1)) && !namesAnotherThing(words.slice(1, 3).join(' '))) return true;
    return words.slice(1).some((word) => NOT_RELATIONSHIP.has(word)) ? false : null;
  }
  // Words that start no object: a time, a condition, a reason ("cancel at renewal", "cancel now").
  if (
    /^(?:at|by|before|on|after|when|if|unless|effective|from|as|now|today|tomorrow|immediately|asap|please|then|and|but|altogether|entirely|completely|anyway|soon|in|next|end|or|so|because|since|once|right)$/.test(
      first,
    )
  )
    return null;
  if (RELATIONSHIP_NEXT.test(rest) && !namesAnotherThing(words.slice(0, 3).join(' '))) return true;
  return false;
}

/** "I have a reservation that I need to cancel": with no object after it, "cancel" ends the last
 * thing its sentence named before it; false when that is not the relationship, else null. */
function namedEarlier(phrases: string, at: number): false | null {
  const sentence =
    phrases
      .slice(Math.max(0, at - 150), at)
      .split(/[.!?;]/)
      .pop() ?? '';
  return lastNamed(sentence) === 'other' ? false : null;
}

function lastNamed(text: string): 'relationship' | 'other' | null {
  const last = [...text.toLowerCase().matchAll(NAMED_THINGS)].at(-1)?.[0];
  if (last === undefined) return null;
  return RELATIONSHIP_WORD.test(last) ? 'relationship' : 'other';
}

/** "… close it": true when the last thing named in the 150 characters before is the relationship. */
function pronounMeansRelationship(phrases: string, at: number): boolean {
  return lastNamed(phrases.slice(Math.max(0, at - 150), at)) === 'relationship';
}
const RELATIONSHIP_NEXT = new RegExp(`^${DETERMINERS}(?:${W} ){0,2}?(?:${RELATIONSHIP})\\b`, 'i');
const RELATIONSHIP_WORD = new RegExp(`^(?:${RELATIONSHIP})$`);
const NAMED_THINGS = new RegExp(`\\b(?:${RELATIONSHIP}|${[...NOT_RELATIONSHIP].filter((w) => /^[a-z-]+$/.test(w)).join('|')})\\b`, 'g');

/** Fragments one of which each part of findCancellation needs (see ChurnRule.needs). */
const RELATIONSHIP_FRAGMENTS = [
  'account',
  'subscri',
  'contract',
  'member',
  'licen',
  'workspace',
  'service',
  'plan',
  'agreement',
  'relationship',
  'partnership',
];
const LEAVING_FRAGMENTS = [
  'any more',
  'anymore',
  'any longer',
  'leav',
  'quit',
  'exit',
  'mov',
  'get out',
  'getting out',
  'stop',
  'done with',
  'finished with',
  'walk',
  'no longer',
  'part ways',
  'relationship',
  'partnership',
  'customer',
];

function findCancellation(phrases: string): { any: boolean; unnegated: boolean } {
  const lower = phrases.toLowerCase();
  const hasRelationship = RELATIONSHIP_FRAGMENTS.some((fragment) => lower.includes(fragment));
  const hasLeaving = LEAVING_FRAGMENTS.some((fragment) => lower.includes(fragment));
  const hasCancel = lower.includes('cancel');
  let any = false;
  const found = (index: number) => {
    any = true;
    return !isNegated(phrases, index);
  };
  if (hasRelationship) {
    for (const match of phrases.matchAll(VERB_OBJECT)) {
      if (namesAnotherThing(match[1] ?? '')) continue;
      if (found(match.index)) return { any, unnegated: true };
    }
    for (const match of phrases.matchAll(OBJECT_FIRST)) if (found(match.index)) return { any, unnegated: true };
  }
  if (hasLeaving) {
    for (const match of phrases.matchAll(LEAVING)) if (found(match.index)) return { any, unnegated: true };
  }
  if (!hasCancel) return { any, unnegated: false };
  for (const match of phrases.matchAll(CANCEL_VERB)) {
    const object = cancelObject(phrases, match.index + match[0].length);
    if (object === false) continue;
    const verbAt = match.index + match[0].toLowerCase().lastIndexOf('cancel');
    if (found(verbAt)) return { any, unnegated: true };
  }
  for (const match of phrases.matchAll(NOMINAL_CANCELLATION)) {
    if (cancelObject(phrases, match.index + match[0].length) === false) continue;
    const before = phrases
      .slice(Math.max(0, match.index - 30), match.index)
      .toLowerCase()
      .split(/[\s.!?,;:]+/)
      .filter((w) => w !== '');
    const previous = before.at(-1);
    if (
      previous !== undefined &&
      !/^(?:a|an|the|my|our|your|this|for|about|regarding|re|request|requesting|notice|formal|submit|confirm|process|of|in|put|written|official|immediate|send|sent|subscription|account|contract|membership)$/.test(
        previous,
      )
    )
      continue;
    if (found(match.index)) return { any, unnegated: true };
  }
  return { any, unnegated: false };
}
/** "Cancellation request", "Re: cancellation", "please confirm our cancellation". */
const NOMINAL_CANCELLATION =
  /\bcancell?ations?\b(?! (?:error|code|status|fee|fees|charge|policy|policies|number|reference|confirmation email)\b)/gi;

// ---------------------------------------------------------------------------------------------
// Topics

/** What a ticket is about, by keyword: unlike churn signals a negation does not remove a topic
 * ("this is not a billing question, but…" is still about billing). */
const TOPIC_PATTERNS: Record<Topic, RegExp | null> = {
  account:
    /\b(?:accounts?|log ?in|logins?|log-in|logged (?:in|out)|sign ?in|signing in|passwords?|2fa|mfa|two[- ]factor|usernames?|profile|locked out|permissions?|user roles?|invit(?:e|es|ation)|sso|single sign-on)\b/i,
  billing:
    /\b(?:invoices?|invoiced|invoicing|billing|billed|bills?|charges|charged|payments?|paid|credit card|receipts?|pricing|prices?|vat|tax(?:es)?|overcharged|refunds?|subscription fee)\b/i,
  bug: /\b(?:bugs?|buggy|errors?|crash(?:es|ed|ing)?|broken|exceptions?|stack ?traces?|glitch(?:es)?|not working|doesn't work|does not work|stopped working|fails?|failed|failing|defects?|regression)\b/i,
  // From the churn rules (below): a separate keyword list would only disagree with them.
  cancellation: null,
  data: /\b(?:data|database|csv|exports?|exported|exporting|imports?|imported|importing|backups?|restore|missing (?:rows|entries|records)|duplicate records)\b/i,
  feature_request:
    /\b(?:feature requests?|would be (?:great|nice|helpful|useful)|would love|it would help|please add|can you add|could you add|add (?:support|an option|the ability) (?:for|to)|wish (?:list|there was|it could|you had)|suggestions?|roadmap|is there (?:a way|any way|an option)|any plans to|feature idea|enhancement)\b/i,
  integration:
    /\b(?:integrations?|integrat(?:e|ed|ing)|apis?|webhooks?|sync(?:s|ed|ing)?|synchroni[sz](?:e|ed|ing|ation)|connectors?|plugins?|zapier|salesforce|hubspot|slack|jira|zendesk|oauth|sdk|endpoints?|third[- ]party)\b/i,
  onboarding:
    /\b(?:onboarding|onboard|getting started|get started|set ?up|setting up|initial setup|new (?:user|customer|account)s?|training|walkthrough|tutorial|demo|kick-?off|implementation|first steps)\b/i,
  outage: null,
  performance:
    /\b(?:slow(?:ly|ness|er|s)?|latency|lag(?:s|gy|ging)?|time ?outs?|timed out|takes (?:forever|ages|minutes)|performance|sluggish|load(?:ing)? times?|response times?|high cpu|memory usage|freez(?:e|es|ing))\b/i,
  security:
    /\b(?:security|breach(?:ed)?|hacked|hack|vulnerabilit(?:y|ies)|phishing|compromised|unauthori[sz]ed access|malware|gdpr|soc ?2|iso ?27001|pen(?:etration)? tests?|leak(?:ed|s)?|suspicious|encryption)\b/i,
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
 * (the billing-dispute rules catch the complaints), and "quality" (+2: the topic, not a judgement:
 * "poor quality"). Left in, they make every request look pleased
 * and every stack trace upset. */
const TICKET_NEUTRAL_WORDS: Record<string, number> = {
  please: 0,
  help: 0,
  helps: 0,
  helping: 0,
  support: 0,
  supports: 0,
  supported: 0,
  supporting: 0,
  like: 0,
  want: 0,
  free: 0,
  kind: 0,
  hope: 0,
  yes: 0,
  dear: 0,
  resolve: 0,
  share: 0,
  clear: 0,
  true: 0,
  false: 0,
  kill: 0,
  killed: 0,
  charged: 0,
  quality: 0,
};

/** Words customers use about a product or a service that AFINN lacks, in AFINN's units: what a
 * review or a ticket calls the thing it bought. */
const CUSTOMER_WORDS: Record<string, number> = {
  junk: -3,
  trash: -3,
  rubbish: -3,
  lacking: -2,
  unreliable: -2,
  mediocre: -2,
  flimsy: -2,
  cheaply: -2,
  beware: -2,
  unusable: -3,
  overpriced: -2,
  laggy: -2,
  buggy: -2,
  glitchy: -2,
  clunky: -2,
  unresponsive: -2,
  disappointment: -2,
  sturdy: 2,
  smoothly: 2,
  flawlessly: 3,
  incredible: 3,
  reliable: 2,
  intuitive: 2,
  seamless: 2,
  seamlessly: 2,
  unhelpful: -2,
  lacks: -2,
  bland: -2,
  tasteless: -2,
  slow: -1,
  freezes: -2,
  crashes: -2,
  crashing: -2,
  overcharge: -2,
  painless: 2,
  delighted: 3,
  superb: 3,
  fabulous: 4,
  responsive: 2,
  knowledgeable: 2,
  prompt: 2,
  timely: 1,
};

/** The package's negators plus the usual others. The package flips a word's score only when the
 * word right before it is a negator ("not happy"); ours looks up to three words back ("not very
 * happy", "never really worked well"), stopping at "but". */
const SENTIMENT_NEGATORS = new Set([
  ...Object.keys(englishNegators),
  'no',
  'never',
  'cannot',
  "didn't",
  'didnt',
  "wasn't",
  'wasnt',
  "aren't",
  'arent',
  "weren't",
  "couldn't",
  "wouldn't",
  "shouldn't",
  "haven't",
  "hasn't",
  "hadn't",
  'nothing',
  'without',
  'nor',
  'neither',
  'hardly',
]);

const TICKET_LANGUAGE = 'en-support-ticket';
/** A token no text contains (the library lower-cases and splits on spaces): a clause boundary. */
const CLAUSE_BREAK = 'xclausebreakx';
const analyser = new Sentiment();
analyser.registerLanguage(TICKET_LANGUAGE, {
  labels: { ...englishLabels, ...CUSTOMER_WORDS, ...TICKET_NEUTRAL_WORDS },
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
  {
    score: -2,
    negatable: false,
    pattern:
      /\bstill (?:not|no|broken|failing|failed|crashing|down|waiting|happening|an issue|a problem|the same|doesn't|does not|isn't|is not|can't|cannot|unable|having|seeing|getting|stuck|missing|wrong)\b/gi,
  },
  {
    score: -2,
    negatable: false,
    pattern:
      /\b(?:second|third|fourth|fifth|sixth|\d{1,2}(?:nd|rd|th)) time\b|\b(?:two|three|four|five|multiple|several|numerous|countless|so many) times\b|\byet again\b|\bagain and again\b/gi,
  },
  // As much as AFINN's "broken" (-1): it says the same thing.
  {
    score: -1,
    negatable: false,
    pattern:
      /\b(?:not|isn't|is not|doesn't|does not|don't|do not|didn't|did not|won't|will not|stopped|never|no longer) (?:[\w'-]{1,20} ){0,2}?work(?:s|ing|ed)?\b/gi,
  },
  {
    score: -2,
    negatable: false,
    pattern:
      /\bno (?:response|reply|answer|one (?:has )?(?:responded|replied|answered|gotten back|got back))\b|\b(?:nobody|no one) (?:has )?(?:responded|replied|answered|got back|gotten back)\b|\b(?:haven't|have not|never) (?:heard|gotten|received) (?:back|a response|a reply|an answer|anything)\b/gi,
  },
  // As much as "broken": the outage itself already raises urgency, this is only the tone.
  {
    score: -1,
    negatable: false,
    pattern: new RegExp(
      `\\b(?:${SERVICE_NOUNS}) (?:is |are |was |were |went |has been |have been |keeps going |is still |still )?down\\b|\\boutages?\\b`,
      'gi',
    ),
  },
  { score: -2, negatable: false, pattern: /\bwaste of (?:time|money)\b|\bfed up\b|\bsick of\b/gi },
  // Advice to others and giving up: "don't buy it", "look elsewhere", "I'm giving up", "sending it back".
  {
    score: -2,
    negatable: false,
    pattern:
      /\b(?:don't|do not|never) (?:buy|purchase|waste)\b|\blook elsewhere\b|\bstay away\b|\bsteer clear\b|\bgiv(?:e|ing) up\b|\b(?:sending|send|sent|returned|returning) (?:it|them|this) back\b/gi,
  },
  // A negated comparative that praises: "couldn't be happier" (the negation flip made it -2).
  { score: 5, negatable: false, pattern: /\b(?:couldn't|could not|can't|cannot) (?:be|have been|ask for) (?:happier|better|more)\b/gi },
  // Resolution: the customer says it works now.
  {
    score: 2,
    negatable: true,
    pattern: /\b(?:works|working|worked) (?:great|fine|perfectly|again|now|well|as (?:described|expected|advertised|intended))\b/gi,
  },
  {
    score: 2,
    negatable: true,
    pattern:
      /\b(?:that|this|it|you) (?:fixed|solved|resolved) (?:it|the (?:issue|problem))\b|\b(?:issue|problem) (?:is |has been )?(?:fixed|solved|resolved)\b/gi,
  },
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
 * plus the support-wording rules, in AFINN units. */
function lexiconScore(analysed: string, phrases: string): number {
  // One pass of the library over the whole text, with each clause boundary written as a word that
  // ends the negation window (CLAUSE_BREAK): the same score as a pass per clause, and a 1 KB ticket
  // analysed in 148 µs instead of 187 (the library tokenises its input with four regular
  // expressions on every call).
  let score = analyser.analyze(analysed.replace(SIGN_OFFS, ' ').replace(/[.!?;:,()\n\r]+/g, ` ${CLAUSE_BREAK} `), {
    language: TICKET_LANGUAGE,
  }).score;
  for (const { pattern, score: ruleScore, negatable } of SENTIMENT_RULES) {
    score += ruleScore * countPhrase(phrases, pattern, negatable);
  }
  return score;
}

/** The word-list score of a message as `analyseTicket` computes it (its description alone): what the
 * trainer of the learned half (scripts/train-sentiment.ts) feeds the model as one input. */
export function sentimentLexiconScore(message: string): number {
  const analysed = analysedText({ subject: null, description: message, priority: null });
  return lexiconScore(analysed, analysed.replace(/\s+/g, ' '));
}

/** The word-list score plus what the learned model adds (both in AFINN units), squashed into -1..1
 * and rounded to 3 decimals. */
function scoreSentiment(analysed: string, phrases: string): number {
  const score = lexiconScore(analysed, phrases) + learnedSentimentScore(analysed);
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
