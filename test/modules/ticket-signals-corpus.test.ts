// Churn signals and sentiment on what customers write: a golden set of short messages per signal and
// per non-signal, the figures on the development part of the evaluation set of real customer
// messages (test/fixtures/intelligence, see its NOTICE; the held-out part is for the figures
// of docs/tickets.md only and is not read here), and `revintel intelligence eval` on a small file.
import { describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evaluateIntelligence, parseLabelledMessages } from '../../src/modules/tickets/evaluation.ts';
import { analyseTicket, INTELLIGENCE_METHOD, INTELLIGENCE_VERSION } from '../../src/modules/tickets/intelligence.ts';

const signalsOf = (text: string) => analyseTicket({ subject: null, description: text, priority: null }, { recentContacts: 0 }).churnSignals;

const GOLDEN: Record<string, string[]> = {
  cancellation: [
    'We will cancel',
    'We will cancel at renewal',
    'cancel',
    'Please close our account.',
    'Please cancel our subscription at the end of the term.',
    'How do I terminate my account?',
    'Delete my account',
    "We're moving off your platform next quarter.",
    'We have decided not to renew our contract.',
    "We're thinking of cancelling because the sync keeps breaking.",
    'Our account should be closed by the end of March.',
    'I no longer want this account, what should I do?',
    "I can't cancel my subscription from the billing page, please do it for us.",
  ],
  competitor: [
    "We're switching to Zendesk next month.",
    'We are evaluating HubSpot as an alternative.',
    'Management asked us to look at cheaper alternatives.',
    'We are considering other vendors for next year.',
    'We got a better offer from another provider.',
  ],
  downgrade: [
    'We would like to reduce our seats from 40 to 25.',
    'Can we move to the basic plan?',
    'Please downgrade us to the starter tier.',
    'We need fewer licences next year.',
  ],
  refund: [
    'We want our money back for last month.',
    'Please refund the annual fee, we were charged after cancelling.',
    'I still have not received my refund.',
    'We expect to be reimbursed for the downtime.',
  ],
};

const NOT_SIGNALS: Record<string, string[]> = {
  transactions: [
    'I need to cancel a payment I made yesterday.',
    'Please cancel the meeting on Friday.',
    'Can you cancel ticket #4411? It was opened by mistake.',
    'Please cancel invoice INV-2231, it was a duplicate.',
    'Cancel my order please',
    'How do I cancel a transfer?',
    'I have a reservation that I need to cancel',
    'We want to turn off the Slack alerts feature.',
    'Please cancel the scheduled export job.',
    'My card was stolen, please cancel it.',
  ],
  negation: [
    'We do not plan to cancel.',
    "We don't want to close our account, just fix the export.",
    'We are not going to switch vendors.',
    "I don't want a refund, just fix it.",
  ],
  resolved: [
    'We are no longer thinking of leaving.',
    'We were planning to cancel but you fixed the sync, so we will stay.',
    'We have decided to stay with you after the call.',
    'Please disregard our cancellation notice.',
  ],
  quoted: [
    'Your help centre says "To cancel your subscription, go to Settings > Billing". Where is Billing?',
    'The docs read "Account owners can close the account from the admin page" but I only want to rename it.',
    'Thanks for the fix!\n\nOn Mon, 3 Mar 2026 at 10:02, Support wrote:\n> We will cancel the duplicate charge.',
  ],
};

describe('golden set', () => {
  for (const [signal, messages] of Object.entries(GOLDEN)) {
    test(`${signal} fires`, () => {
      for (const message of messages)
        expect({ message, signals: signalsOf(message) }).toEqual({ message, signals: expect.arrayContaining([signal]) });
    });
  }
  for (const [kind, messages] of Object.entries(NOT_SIGNALS)) {
    test(`${kind}: no signal of leaving`, () => {
      for (const message of messages) {
        const leaving = signalsOf(message).filter((s) => ['cancellation', 'competitor', 'downgrade', 'refund', 'non_renewal'].includes(s));
        expect({ message, leaving }).toEqual({ message, leaving: [] });
      }
    });
  }
});

const fixture = (name: string) => readFileSync(join(import.meta.dir, '..', 'fixtures', 'intelligence', name), 'utf8');

describe('development part of the real-message evaluation set', () => {
  test('cancellation and refund meet their targets; competitor and downgrade rarely fire on messages without them', () => {
    const report = evaluateIntelligence(parseLabelledMessages(fixture('signals.dev.ndjson')), 0);
    const by = Object.fromEntries(report.signals.map((s) => [s.signal, s]));
    expect(report.messages).toBeGreaterThan(20_000);
    expect(by.cancellation!.support).toBeGreaterThan(100);
    expect(by.cancellation!.precision!).toBeGreaterThanOrEqual(0.85);
    expect(by.cancellation!.recall!).toBeGreaterThanOrEqual(0.85);
    expect(by.refund!.precision!).toBeGreaterThanOrEqual(0.75);
    expect(by.refund!.recall!).toBeGreaterThanOrEqual(0.75);
    // The corpora label no competitor or downgrade message: every one that fires is a false alarm.
    expect(by.competitor!.false_positives).toBeLessThanOrEqual(5);
    expect(by.downgrade!.false_positives).toBeLessThanOrEqual(5);
  });

  test('sentiment: it gives a sign, and the sign agrees with the customer', () => {
    const { sentiment } = evaluateIntelligence(parseLabelledMessages(fixture('sentiment.dev.ndjson')), 0);
    expect(sentiment.labelled).toBeGreaterThan(1000);
    expect(sentiment.agreeing / (sentiment.labelled - sentiment.neutral)).toBeGreaterThanOrEqual(0.85);
    // The learned model was trained on this part (its cross-validated figure is in the asset's `about`),
    // so this guards against a broken asset or tokenizer, not an estimate of accuracy.
    expect(sentiment.neutral).toBeLessThan(sentiment.labelled / 20);
    expect(sentiment.agreement!).toBeGreaterThanOrEqual(0.9);
  });
});

describe('revintel intelligence eval', () => {
  const dir = mkdtempSync(join(tmpdir(), 'intelligence-eval-'));
  const run = (...args: string[]) => {
    const result = Bun.spawnSync(['bun', join(import.meta.dir, '..', '..', 'src', 'index.ts'), 'intelligence', 'eval', ...args]);
    return { code: result.exitCode, out: result.stdout.toString(), err: result.stderr.toString() };
  };

  test('a CSV file: per-signal figures, the confusion, the misses and sentiment', () => {
    const file = join(dir, 'labelled.csv');
    writeFileSync(
      file,
      [
        'text,signals,sentiment',
        '"We will cancel at renewal",cancellation,-1',
        '"Please cancel the transfer I made",,',
        '"We are switching to Zendesk",competitor|cancellation,-1',
        '"Great support, thanks!",none,positive',
      ].join('\n'),
    );
    const json = run(file, '--json');
    expect(json.code).toBe(0);
    const report = JSON.parse(json.out);
    expect(report.messages).toBe(4);
    const cancellation = report.signals.find((s: { signal: string }) => s.signal === 'cancellation');
    expect(cancellation).toMatchObject({
      support: 2,
      true_positives: 1,
      false_negatives: 1,
      false_positives: 0,
      true_negatives: 2,
      precision: 1,
      recall: 0.5,
      f1: 0.667,
    });
    expect(report.signals.find((s: { signal: string }) => s.signal === 'competitor')).toMatchObject({
      support: 1,
      true_positives: 1,
      precision: 1,
      recall: 1,
    });
    expect(report.misses).toEqual([
      {
        text: 'We are switching to Zendesk',
        kind: 'missed',
        signal: 'cancellation',
        expected: ['competitor', 'cancellation'],
        found: ['competitor'],
      },
    ]);
    expect(report.sentiment).toMatchObject({ labelled: 3 });

    const human = run(file);
    expect(human.code).toBe(0);
    expect(human.out).toContain('cancellation  2         1.000      0.500   0.667');
    expect(human.out).toContain('missed      cancellation "We are switching to Zendesk"');
  });

  test('sentiment of sentences the word list cannot read: the learned model gives their sign', () => {
    const file = join(dir, 'tone.ndjson');
    const rows = [
      { text: 'We waited two weeks for an answer.', signals: [], sentiment: -1 },
      { text: 'The integration stopped syncing after the update and nobody called back.', signals: [], sentiment: 'negative' },
      { text: 'Setup was quick and the reports are exactly what we needed.', signals: [], sentiment: 1 },
    ];
    writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n'));
    const json = run(file, '--json');
    expect(json.code).toBe(0);
    const report = JSON.parse(json.out);
    expect(report).toMatchObject({ method: INTELLIGENCE_METHOD, version: INTELLIGENCE_VERSION });
    expect(report.method).toContain('ngram-logreg');
    expect(report.sentiment).toEqual({ labelled: 3, agreeing: 3, neutral: 0, agreement: 1 });
    const human = run(file);
    expect(human.out).toContain(`intelligence ${INTELLIGENCE_METHOD} version ${INTELLIGENCE_VERSION}`);
    expect(human.out).toContain('sentiment: sign agrees on 3 of 3 (1.000); 0 scored 0 (no sign)');
  });

  test('NDJSON, and a label that is not a signal is refused by name', () => {
    const file = join(dir, 'labelled.ndjson');
    writeFileSync(
      file,
      `${JSON.stringify({ text: 'Please close our account.', signals: ['cancellation'] })}\n${JSON.stringify({ text: 'Where is the invoice?', signals: [] })}\n`,
    );
    const ok = run(file, '--json');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out).signals[0]).toMatchObject({ signal: 'cancellation', precision: 1, recall: 1 });
    const bad = join(dir, 'bad.ndjson');
    writeFileSync(bad, `${JSON.stringify({ text: 'hello', signals: ['churn'] })}\n`);
    const refused = run(bad);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('"churn" is not a churn signal');
  });
});
