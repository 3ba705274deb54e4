// The learned half of ticket sentiment (docs/tickets.md "Sentiment"): a logistic regression over the
// words and word pairs of a message, trained by scripts/train-sentiment.ts on the development part of
// the sentiment evaluation set only, with the word-list score as one more input. Its weights are a
// JSON asset bundled into the binary; reading a ticket is a tokenizer and one Map lookup per word and
// word pair, so it adds a few microseconds to the word list's pass.
//
// Pure and deterministic: the same text gives the same features in the same order, and the weights
// are fixed numbers, so the same text always scores the same.
import trained from './sentiment-model.json' with { type: 'json' };

export interface SentimentModel {
  /** What `trained` was trained on and how, for docs and the eval output. */
  about: string;
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

const CLAUSE = /[.!?;:,()\n\r"]+/;
const WORD = /[a-z0-9]+(?:'[a-z]+)?/g;

/** The features of one text: for each clause, each word that is not a function word (`w:happy`,
 * or `n:happy` when a negator came up to three words before it), and each pair of neighbouring words
 * but pairs of two function words (`p:not happy`, not `p:to the`). In text order, repeated ones repeated: a long ticket counts what it says twice. */
export function sentimentFeatures(text: string): string[] {
  const features: string[] = [];
  for (const clause of text
    .toLowerCase()
    .replace(/[\u2018\u2019\u02BC]/g, "'")
    .split(CLAUSE)) {
    const words = clause.match(WORD);
    if (!words) continue;
    let negatedFor = 0;
    let previous: string | null = null;
    let previousGrammar = false;
    for (const word of words) {
      const negator = NEGATORS.has(word) || word.endsWith("n't");
      const grammar = FUNCTION_WORDS.has(word);
      if (!grammar && !negator) features.push(negatedFor > 0 ? `n:${word}` : `w:${word}`);
      if (previous !== null && !(grammar && previousGrammar)) features.push(`p:${previous} ${word}`);
      previous = word;
      previousGrammar = grammar;
      if (negator) negatedFor = NEGATION_WINDOW;
      else if (word === 'but') negatedFor = 0;
      else if (negatedFor > 0) negatedFor--;
    }
  }
  return features;
}

/** The model as shipped. A Map, not the JSON object: a word such as "constructor" or "__proto__" must
 * find nothing, not an object property. */
export const SENTIMENT_MODEL: SentimentModel = trained as SentimentModel;
const WEIGHTS = new Map(Object.entries(SENTIMENT_MODEL.weights));

/** What the words and pairs add to the word-list score, in its units (AFINN's ±5 scale): the model's
 * logit without the word-list term, divided by that term's weight. 0 for a text none of whose features
 * the model has seen. */
export function learnedSentimentScore(text: string, model: { lexiconWeight: number; weights: Map<string, number> } = DEFAULT): number {
  let logit = 0;
  for (const feature of sentimentFeatures(text)) logit += model.weights.get(feature) ?? 0;
  return logit / model.lexiconWeight;
}

const DEFAULT = { lexiconWeight: SENTIMENT_MODEL.lexiconWeight, weights: WEIGHTS };
