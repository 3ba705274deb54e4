// Trains the learned half of ticket sentiment (src/modules/tickets/sentiment-model.ts) and writes its
// weights to src/modules/tickets/sentiment-model.json (docs/tickets.md "Sentiment: how to retrain"):
//   bun scripts/train-sentiment.ts [--out FILE] [--l2 X --min-messages N]
// With --l2 and --min-messages the cross-validated search is skipped and that one setting trained
// (the test that checks the shipped weights are this script's output uses the shipped setting).
// Reads ONLY the development part, test/fixtures/intelligence/sentiment.dev.ndjson: the held-out part
// is fixed by a hash of the text (scripts/intelligence-eval-set.ts) and this script never opens it, so
// nothing here — weights, vocabulary, regularisation — is tuned on the figure we report.
// Deterministic: full-batch gradient descent from zero weights for a fixed number of steps, messages
// and features in file order, cross-validation folds by a hash of the text; the same file gives the
// same JSON byte for byte.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sentimentLexiconScore } from '../src/modules/tickets/intelligence.ts';
import { sentimentFeatures } from '../src/modules/tickets/sentiment-model.ts';

const root = join(import.meta.dir, '..');
const DEV = join(root, 'test', 'fixtures', 'intelligence', 'sentiment.dev.ndjson');
const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: { out: { type: 'string' }, l2: { type: 'string' }, 'min-messages': { type: 'string' } },
});
const OUT = args.out ?? join(root, 'src', 'modules', 'tickets', 'sentiment-model.json');

/** The word-list score enters the model divided by this, so that its weight learns at the pace of the
 * others (a message's word-list score is often ±5, a feature's value 1). */
const LEXICON_SCALE = 5;
const STEPS = 1500;
const LEARNING_RATE = 2;
/** Tried by 5-fold cross-validation on the development part; the best pair trains the shipped model. */
const L2_GRID = [0.0003, 0.001, 0.003, 0.01];
const MIN_MESSAGES_GRID = [2, 3];
const FOLDS = 5;

interface Example {
  features: string[];
  lexicon: number;
  /** 1 positive, 0 negative */
  label: number;
  fold: number;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const ch of text) {
    hash ^= ch.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

const examples: Example[] = readFileSync(DEV, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as { text: string; sentiment: number })
  .filter((row) => row.sentiment === 1 || row.sentiment === -1)
  .map((row) => ({
    features: sentimentFeatures(row.text),
    lexicon: sentimentLexiconScore(row.text) / LEXICON_SCALE,
    label: row.sentiment === 1 ? 1 : 0,
    fold: fnv1a(row.text.toLowerCase()) % FOLDS,
  }));

/** Features seen in at least `minMessages` training messages, in first-seen order. */
function vocabulary(train: Example[], minMessages: number): Map<string, number> {
  const seenIn = new Map<string, number>();
  for (const example of train) for (const feature of new Set(example.features)) seenIn.set(feature, (seenIn.get(feature) ?? 0) + 1);
  const index = new Map<string, number>();
  for (const [feature, count] of seenIn) if (count >= minMessages) index.set(feature, index.size);
  return index;
}

interface Trained {
  vocabulary: Map<string, number>;
  weights: Float64Array;
  lexiconWeight: number;
}

/** Logistic regression without intercept (a message with no known feature and a word-list score of 0
 * scores 0: neutral), L2 on the word weights only, by full-batch gradient descent. */
function train(trainSet: Example[], l2: number, minMessages: number): Trained {
  const vocab = vocabulary(trainSet, minMessages);
  const rows = trainSet.map((example) => ({
    indices: example.features.map((f) => vocab.get(f)).filter((i): i is number => i !== undefined),
    lexicon: example.lexicon,
    label: example.label,
  }));
  const weights = new Float64Array(vocab.size);
  let lexiconWeight = 0;
  const gradient = new Float64Array(vocab.size);
  const n = rows.length;
  for (let step = 0; step < STEPS; step++) {
    gradient.fill(0);
    let lexiconGradient = 0;
    for (const row of rows) {
      let logit = lexiconWeight * row.lexicon;
      for (const i of row.indices) logit += weights[i]!;
      const error = 1 / (1 + Math.exp(-logit)) - row.label;
      lexiconGradient += error * row.lexicon;
      for (const i of row.indices) gradient[i]! += error;
    }
    lexiconWeight -= (LEARNING_RATE * lexiconGradient) / n;
    for (let i = 0; i < weights.length; i++) weights[i]! -= LEARNING_RATE * (gradient[i]! / n + l2 * weights[i]!);
  }
  return { vocabulary: vocab, weights, lexiconWeight };
}

/** Sign agreement as the evaluation counts it: a score of 0 is wrong. */
function agreement(model: Trained, set: Example[]): number {
  let agreeing = 0;
  for (const example of set) {
    let logit = model.lexiconWeight * example.lexicon;
    for (const f of example.features) {
      const i = model.vocabulary.get(f);
      if (i !== undefined) logit += model.weights[i]!;
    }
    if ((logit > 0 && example.label === 1) || (logit < 0 && example.label === 0)) agreeing++;
  }
  return agreeing / set.length;
}

/** Mean sign agreement over the 5 folds, each trained on the other four. */
function crossValidated(l2: number, minMessages: number): number {
  let sum = 0;
  for (let fold = 0; fold < FOLDS; fold++) {
    const model = train(
      examples.filter((e) => e.fold !== fold),
      l2,
      minMessages,
    );
    sum += agreement(
      model,
      examples.filter((e) => e.fold === fold),
    );
  }
  return sum / FOLDS;
}

let best = { l2: L2_GRID[0]!, minMessages: MIN_MESSAGES_GRID[0]!, accuracy: -1 };
const fixed = args.l2 !== undefined && args['min-messages'] !== undefined;
if (fixed) {
  const l2 = Number(args.l2);
  const minMessages = Number(args['min-messages']);
  best = { l2, minMessages, accuracy: crossValidated(l2, minMessages) };
}
for (const minMessages of fixed ? [] : MIN_MESSAGES_GRID) {
  for (const l2 of L2_GRID) {
    const accuracy = crossValidated(l2, minMessages);
    console.log(`min messages ${minMessages}, L2 ${l2}: cross-validated sign agreement ${accuracy.toFixed(3)}`);
    if (accuracy > best.accuracy) best = { l2, minMessages, accuracy };
  }
}

const model = train(examples, best.l2, best.minMessages);
// Rounded to 4 decimals (a change of at most 0.00005 per feature), zeros dropped: a smaller asset
// whose numbers read the same on every platform.
const weights: Record<string, number> = {};
for (const [feature, i] of model.vocabulary) {
  const weight = Math.round(model.weights[i]! * 10_000) / 10_000;
  if (weight !== 0) weights[feature] = weight;
}
const about =
  `logistic regression over words and word pairs plus the word-list score, trained on ${examples.length} ` +
  `development sentences (sentiment.dev.ndjson), L2 ${best.l2}, features in at least ${best.minMessages} ` +
  `messages; 5-fold cross-validated sign agreement ${best.accuracy.toFixed(3)}`;
const lexiconWeight = Math.round((model.lexiconWeight / LEXICON_SCALE) * 10_000) / 10_000;
// Laid out as the formatter lays out JSON (two spaces, one weight a line), so formatting never changes it.
writeFileSync(OUT, `${JSON.stringify({ about, l2: best.l2, minMessages: best.minMessages, lexiconWeight, weights }, null, 2)}\n`);
console.log(
  `${about}\n${Object.keys(weights).length} weights, word-list weight ${lexiconWeight}; training agreement ${agreement(model, examples).toFixed(3)}`,
);
console.log(`wrote ${OUT}`);
