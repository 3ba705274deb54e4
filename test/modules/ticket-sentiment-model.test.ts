// The learned half of ticket sentiment: its features, its arithmetic, that the shipped weights are what
// scripts/train-sentiment.ts makes from the development part (and from nothing else), and what it adds
// to the word list on sentences the word list cannot read. The figures on the evaluation set are in
// ticket-signals-corpus.test.ts.
import { describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyseTicket, sentimentLexiconScore } from '../../src/modules/tickets/intelligence.ts';
import {
  compileSentimentModel,
  learnedSentimentScore,
  SENTIMENT_MODEL,
  sentimentFeatures,
} from '../../src/modules/tickets/sentiment-model.ts';

const sentimentOf = (text: string) => analyseTicket({ subject: null, description: text, priority: null }, { recentContacts: 0 }).sentiment;
const ROOT = join(import.meta.dir, '..', '..');
const SHIPPED = join(ROOT, 'src', 'modules', 'tickets', 'sentiment-model.json');
const TRAINER = join(ROOT, 'scripts', 'train-sentiment.ts');

describe('features', () => {
  test('words but function words, pairs but pairs of function words, per clause', () => {
    expect(sentimentFeatures('The export is broken. Please help!')).toEqual([
      'w:export',
      'p:the export',
      'p:export is',
      'w:broken',
      'p:is broken',
      'w:please',
      'w:help',
      'p:please help',
    ]);
  });

  test('a negator marks the next three words of its clause, "but" ends it', () => {
    expect(sentimentFeatures("It doesn't really work well, great support")).toEqual([
      "p:it doesn't",
      'n:really',
      "p:doesn't really",
      'n:work',
      'p:really work',
      'n:well',
      'p:work well',
      'w:great',
      'w:support',
      'p:great support',
    ]);
    expect(sentimentFeatures('not fast but stable').filter((f) => !f.startsWith('p:'))).toEqual(['n:fast', 'n:but', 'w:stable']);
  });

  test('typographic apostrophes and case read as plain ones', () => {
    expect(sentimentFeatures('We DON’T like it')).toEqual(sentimentFeatures("we don't like it"));
  });
});

describe('score', () => {
  test('the sum of the weights of the features found, in word-list units; 0 when none is known', () => {
    const model = compileSentimentModel({ lexiconWeight: 2, weights: { 'w:slow': -1.5, 'p:very slow': -0.5, 'n:slow': 0.75 } });
    expect(learnedSentimentScore('Very slow, slow.', model)).toBe((-0.5 - 1.5 - 1.5) / 2);
    expect(learnedSentimentScore('not slow', model)).toBe(0.75 / 2);
    expect(learnedSentimentScore('xyzzy plugh', model)).toBe(0);
    expect(learnedSentimentScore('constructor __proto__ toString hasOwnProperty')).toBe(0);
  });

  test('deterministic: the same text scores the same, call after call', () => {
    const text = 'The sync stopped again after the update and nobody called back. Third time this month.';
    const first = sentimentOf(text);
    for (let i = 0; i < 5; i++) expect(sentimentOf(text)).toBe(first);
  });

  test('it gives a sign where the word list has none, and agrees with what the customer says', () => {
    for (const text of ['We waited two weeks for an answer.', 'The integration stopped syncing after the update and nobody called back.']) {
      expect({ text, lexicon: sentimentLexiconScore(text) <= 0, sentiment: sentimentOf(text) < 0 }).toEqual({
        text,
        lexicon: true,
        sentiment: true,
      });
    }
    const praise = 'Setup was quick and the reports are exactly what we needed.';
    expect(sentimentLexiconScore(praise)).toBe(0);
    expect(sentimentOf(praise)).toBeGreaterThan(0);
  });
});

describe('training', () => {
  test('the shipped weights are the trainer’s output on the development part, byte for byte', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sentiment-model-')), 'model.json');
    const shipped = JSON.parse(readFileSync(SHIPPED, 'utf8')) as { l2: number; minMessages: number };
    const run = Bun.spawnSync(['bun', TRAINER, '--out', out, '--l2', String(shipped.l2), '--min-messages', String(shipped.minMessages)]);
    expect(run.exitCode).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(SHIPPED, 'utf8'));
    expect(SENTIMENT_MODEL.about).toContain('sentiment.dev.ndjson');
  });

  test('the trainer reads the development part only: it never names the held-out file', () => {
    const source = readFileSync(TRAINER, 'utf8');
    expect(source).toContain("'sentiment.dev.ndjson'");
    expect(source).not.toContain('heldout');
  });
});
