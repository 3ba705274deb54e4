// The learned half of ticket sentiment (docs/tickets.md "Ticket intelligence: how it is measured"): a
// logistic regression over the words and word pairs of a message, trained by scripts/train-sentiment.ts
// on the development part of the sentiment evaluation set only, with the word-list score as one more
// input. Its weights are a JSON asset bundled into the binary; reading a ticket is one scan of its
// characters and a Map lookup or two per word (about 20 µs for a 1 KB ticket, a tenth of the rest).
//
// Pure and deterministic: the same text gives the same features in the same order, and the weights
// are fixed numbers, so the same text always scores the same.
import trained from './sentiment-model.json' with { type: 'json' };

export interface SentimentModel {
  /** What it was trained on and how, with its cross-validated agreement: for whoever reads the asset. */
  about: string;
  /** The training setting the cross-validation chose (scripts/train-sentiment.ts retrains it). */
  l2: number;
  minMessages: number;
  /** Weight of the word-list score (AFINN units) in the logit: turns the other weights into AFINN units. */
  lexiconWeight: number;
  /** feature → weight (logit units), features as `sentimentFeatures` writes them */
  weights: Record<string, number>;
}

/** Words that are a message's grammar, not its tone: alone they are no feature (a ticket saying "how do
 * I" is not negative because review sentences that say it often are). They still make word pairs
 * ("not good", "no help"). */
const FUNCTION_WORDS = new Set(
  (
    "a an the and or of to in on at for with by from as is are was were be been being am it its it's this that these those " +
    "i i'm i've i'd i'll me my we we're we've our us you your you're he she they them their there here " +
    'do does did have has had will would can could should shall may might must what which who whom when where why how ' +
    'if then so than too very just also only about into over after before up out down off again all any both each ' +
    'few more most other some such own same s t don now one two get got ' +
    // "we would like to", "like the one we had": a request or a comparison in a ticket, as the word
    // list also has it (its pairs, "really like", "didn't like", still count).
    'like'
  ).split(' '),
);

/** A word that turns the next words' meaning around, until the clause ends or "but" comes. */
const NEGATORS = new Set(['not', 'no', 'never', 'nothing', 'nobody', 'none', 'neither', 'nor', 'cannot', 'without', 'hardly', 'barely']);
/** How many words after a negator are read as negated: "not very happy", "never really worked". */
const NEGATION_WINDOW = 3;

/** Clause punctuation: ends the negation window and the pair. */
const CLAUSE_ENDS = new Set([...'.!?;:,()"\n\r'].map((ch) => ch.charCodeAt(0)));
const APOSTROPHE = 39;
const isWordChar = (code: number) => (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
const isLetter = (code: number) => code >= 97 && code <= 122;

/** Calls `word` for each word that is not a function word (negated: a negator came up to three words
 * before it in its clause) and `pair` for each two neighbouring words of a clause but two function
 * words. A word is a run of a-z and 0-9, with one apostrophe inside ("don't", "it's"); anything else
 * separates words. The one definition of the features, shared by the trainer (`sentimentFeatures`)
 * and the scorer, which looks the weights up without building a string per feature; a scan of char
 * codes rather than a regular expression, because it runs on every ticket. */
function walkFeatures(text: string, word: (w: string, negated: boolean) => void, pair: (first: string, second: string) => void) {
  const lower = text.toLowerCase().replace(/[\u2018\u2019\u02BC]/g, "'");
  let negatedFor = 0;
  let previous: string | null = null;
  let previousGrammar = false;
  let i = 0;
  while (i < lower.length) {
    const code = lower.charCodeAt(i);
    if (!isWordChar(code)) {
      if (CLAUSE_ENDS.has(code)) {
        negatedFor = 0;
        previous = null;
      }
      i++;
      continue;
    }
    const start = i;
    while (i < lower.length && isWordChar(lower.charCodeAt(i))) i++;
    if (lower.charCodeAt(i) === APOSTROPHE && isLetter(lower.charCodeAt(i + 1))) {
      i++;
      while (i < lower.length && isLetter(lower.charCodeAt(i))) i++;
    }
    const token = lower.slice(start, i);
    const negator = NEGATORS.has(token) || token.endsWith("n't");
    const grammar = FUNCTION_WORDS.has(token);
    if (!grammar && !negator) word(token, negatedFor > 0);
    if (previous !== null && !(grammar && previousGrammar)) pair(previous, token);
    previous = token;
    previousGrammar = grammar;
    if (negator) negatedFor = NEGATION_WINDOW;
    else if (token === 'but') negatedFor = 0;
    else if (negatedFor > 0) negatedFor--;
  }
}

/** The features of one text, as the weights name them: for each clause, each word that is not a
 * function word (`w:happy`, or `n:happy` when a negator came up to three words before it), and each
 * pair of neighbouring words but pairs of two function words (`p:not happy`, not `p:to the`). In text
 * order, repeated ones repeated: a long ticket counts what it says twice. */
export function sentimentFeatures(text: string): string[] {
  const features: string[] = [];
  walkFeatures(
    text,
    (w, negated) => features.push(negated ? `n:${w}` : `w:${w}`),
    (first, second) => features.push(`p:${first} ${second}`),
  );
  return features;
}

/** The model as shipped. */
export const SENTIMENT_MODEL: SentimentModel = trained as SentimentModel;

/** Weights looked up by word (and first word, then second, for pairs) instead of by feature name: no
 * string is built per word. Maps, not the JSON object: a word such as "constructor" or "__proto__"
 * must find nothing, not an object property. */
export interface CompiledSentimentModel {
  lexiconWeight: number;
  words: Map<string, number>;
  negated: Map<string, number>;
  pairs: Map<string, Map<string, number>>;
}

export function compileSentimentModel(model: { lexiconWeight: number; weights: Record<string, number> }): CompiledSentimentModel {
  const compiled: CompiledSentimentModel = { lexiconWeight: model.lexiconWeight, words: new Map(), negated: new Map(), pairs: new Map() };
  for (const [feature, weight] of Object.entries(model.weights)) {
    const name = feature.slice(2);
    if (feature.startsWith('w:')) compiled.words.set(name, weight);
    else if (feature.startsWith('n:')) compiled.negated.set(name, weight);
    else if (feature.startsWith('p:')) {
      const [first, second] = name.split(' ') as [string, string];
      let seconds = compiled.pairs.get(first);
      if (!seconds) compiled.pairs.set(first, (seconds = new Map()));
      seconds.set(second, weight);
    }
  }
  return compiled;
}

const SHIPPED = compileSentimentModel(SENTIMENT_MODEL);

/** What the words and pairs add to the word-list score, in its units (AFINN's ±5 scale): the model's
 * logit without the word-list term, divided by that term's weight. 0 for a text none of whose features
 * the model has seen. */
export function learnedSentimentScore(text: string, model: CompiledSentimentModel = SHIPPED): number {
  let logit = 0;
  walkFeatures(
    text,
    (w, negated) => {
      logit += (negated ? model.negated : model.words).get(w) ?? 0;
    },
    (first, second) => {
      logit += model.pairs.get(first)?.get(second) ?? 0;
    },
  );
  return logit / model.lexiconWeight;
}
