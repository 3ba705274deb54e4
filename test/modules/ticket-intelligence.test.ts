import { describe, expect, test } from 'bun:test';
import {
  analyseTicket,
  CHURN_SIGNALS,
  INTELLIGENCE_METHOD,
  INTELLIGENCE_VERSION,
  MAX_ANALYSED_CHARS,
  TOPICS,
  type TicketText,
} from '../../src/modules/tickets/intelligence.ts';
import type { TicketPriority } from '../../src/modules/tickets/adapters/types.ts';

/** A ticket with only a description, no priority, no recent contacts unless given. */
function analyse(description: string, options: { subject?: string; priority?: TicketPriority | null; recentContacts?: number } = {}) {
  const text: TicketText = { subject: options.subject ?? null, description, priority: options.priority ?? null };
  return analyseTicket(text, { recentContacts: options.recentContacts ?? 0 });
}

describe('churn signals', () => {
  // For each signal: phrasings that must raise it, and phrasings that must not.
  const cases: Record<(typeof CHURN_SIGNALS)[number], { match: string[]; noMatch: string[] }> = {
    cancellation: {
      match: [
        'Please cancel my subscription at the end of the month.',
        'We want to cancel.',
        'We would like to terminate our contract with you.',
        'Kindly close our account.',
        "I'd like to cancel our annual plan.",
        'How do I cancel my account?',
        'We are not happy and want to cancel our subscription.',
        'I cannot cancel my subscription, the button does nothing.',
      ],
      noMatch: [
        "We don't want to cancel, we just need the export fixed.",
        'We will not cancel our subscription over this.',
        'No need to cancel the plan, it works now.',
        'Can you cancel the import job that is stuck?',
      ],
    },
    non_renewal: {
      match: [
        "We won't be renewing next year.",
        'We will not renew the contract.',
        'Management decided not to renew.',
        "We're not going to renew in March.",
        'We will let our subscription lapse.',
        'Please turn off auto-renewal on our account.',
      ],
      noMatch: [
        'We plan to renew for another two years.',
        'Why did my subscription not renew? It did not renew automatically.',
        'When is our renewal date?',
      ],
    },
    competitor: {
      match: [
        'We are switching to Zendesk next quarter.',
        "We're seriously considering moving to HubSpot.",
        'We are evaluating alternatives.',
        'Your competitor offers this for half the price.',
        'We found a cheaper option elsewhere.',
        'We will be moving to another vendor.',
      ],
      noMatch: [
        'How do I switch to the new dashboard?',
        'We are moving to the annual plan.',
        'We are not looking at other vendors, we just need this fixed.',
        'We are moving to a new office next week, please update the address.',
      ],
    },
    refund: {
      match: [
        'I want a refund.',
        'We expect our money back for the downtime.',
        'We will file a chargeback with our bank.',
        'Please refund the last invoice.',
      ],
      noMatch: ['Is the setup fee refundable?', "We don't need a refund, just a working export."],
    },
    downgrade: {
      match: [
        'We need to downgrade to the starter tier.',
        'We want to reduce our seats from 50 to 20.',
        'Is there a cheaper plan?',
        'Please lower the number of licenses on our account.',
        'We would like to move to the free plan.',
      ],
      noMatch: ['No need to downgrade, we found the setting.', 'We want to add 10 more seats.', 'Scroll down to the bottom of the page.'],
    },
    outage: {
      match: [
        'The site is down!',
        'Is there an outage right now?',
        'The dashboard is not loading for anyone.',
        'We are getting 503 errors from the API.',
        'Service unavailable when we open the app.',
        'The server went down an hour ago.',
      ],
      noMatch: ['Our prices went down last year.', 'Please scroll down to the settings.', 'There was no outage, it was our firewall.'],
    },
    billing_dispute: {
      match: [
        'We were overcharged this month.',
        'You charged us twice for March.',
        'This is the wrong invoice.',
        'We dispute this charge.',
        'There is a duplicate charge on my card.',
      ],
      noMatch: ['Please send the invoice to finance@example.com.', 'We do not dispute the amount, we just need a PO number on it.'],
    },
    escalation: {
      match: [
        'I want to speak to your manager.',
        'Please escalate this immediately.',
        'We will take legal action.',
        'Our lawyers will be in touch.',
        'I am filing a formal complaint.',
      ],
      noMatch: ['No need to escalate, all good now.', 'What is the legal entity name for the invoice?'],
    },
    data_export: {
      match: [
        'How can we export all our data?',
        'We need a full data export before the contract ends.',
        'Please send us a copy of all our data.',
        'We want to export our customer data.',
      ],
      noMatch: ['Export the report to PDF.', "We don't want to export our data, just delete the test records."],
    },
  };

  for (const [signal, { match, noMatch }] of Object.entries(cases)) {
    for (const phrase of match) {
      test(`${signal}: "${phrase}" matches`, () => {
        expect(analyse(phrase).churnSignals).toContain(signal);
      });
    }
    for (const phrase of noMatch) {
      test(`${signal}: "${phrase}" does not match`, () => {
        expect(analyse(phrase).churnSignals).not.toContain(signal);
      });
    }
  }

  test('several signals, sorted, each once', () => {
    const result = analyse(
      'The site is down again. We were overcharged, we want a refund, and we are switching to a cheaper option. Cancel our subscription.',
    );
    expect(result.churnSignals).toEqual(['billing_dispute', 'cancellation', 'competitor', 'outage', 'refund']);
  });

  test('signals are read in the subject too, and case does not matter', () => {
    expect(analyse('', { subject: 'CANCEL MY SUBSCRIPTION' }).churnSignals).toEqual(['cancellation']);
  });

  test('every signal returned is from the fixed list', () => {
    const result = analyse('downgrade refund outage dispute escalate competitor cancellation data export');
    for (const signal of result.churnSignals) expect(CHURN_SIGNALS as readonly string[]).toContain(signal);
  });
});

describe('sentiment', () => {
  const positive = [
    'Thanks, works great now!',
    'Great support, thank you so much, really appreciate it.',
    'That fixed it, you are awesome.',
    'Not bad at all, the new report is useful.',
  ];
  const negative = [
    'The export is still broken.',
    'This is the third time I am reporting this.',
    'This is unacceptable.',
    'I am not happy with the service.',
    'I am not very happy with the new release.',
    'The dashboard is terrible and slow, a waste of time.',
    'It still does not work. Kind regards, Anna',
    'No, it is still broken.',
  ];
  const neutral = [
    'How do I reset my password?',
    'Please update the billing address on our account.',
    'Can you add a column for the renewal date to the export?',
    'We would like to invite two new users to the workspace.',
  ];

  for (const sentence of positive) {
    test(`positive: "${sentence}"`, () => {
      expect(analyse(sentence).sentiment).toBeGreaterThan(0.2);
    });
  }
  for (const sentence of negative) {
    test(`negative: "${sentence}"`, () => {
      expect(analyse(sentence).sentiment).toBeLessThan(-0.1);
    });
  }
  for (const sentence of neutral) {
    test(`neutral: "${sentence}"`, () => {
      expect(Math.abs(analyse(sentence).sentiment)).toBeLessThanOrEqual(0.2);
    });
  }

  test('negation turns a positive sentence negative', () => {
    expect(analyse('The support was good.').sentiment).toBeGreaterThan(0);
    expect(analyse('The support was not good.').sentiment).toBeLessThan(0);
  });

  test('several complaints are more negative than one, and stay within -1..1', () => {
    const one = analyse('The export is broken.').sentiment;
    const many = analyse(
      'The export is still broken. This is the third time I report it. Unacceptable. Terrible service, we are fed up.',
    ).sentiment;
    expect(many).toBeLessThan(one);
    expect(many).toBeGreaterThanOrEqual(-1);
    expect(analyse('great '.repeat(5000)).sentiment).toBeLessThanOrEqual(1);
  });

  test('rounded to 3 decimals, 0 for an empty ticket', () => {
    const { sentiment } = analyse('I am not happy with the service.');
    expect(Math.round(sentiment * 1000) / 1000).toBe(sentiment);
    expect(analyseTicket({ subject: null, description: null, priority: null }, { recentContacts: 0 }).sentiment).toBe(0);
  });

  test('words that are object properties do not break the score', () => {
    // The same as the sentence with plain unknown words in their places: nothing is read off Object.prototype.
    expect(analyse('The constructor calls toString and hasOwnProperty on __proto__.').sentiment).toBe(
      analyse('The xyzzy calls plugh and frobnitz on quux.').sentiment,
    );
  });
});

describe('urgency', () => {
  test('from the priority alone', () => {
    expect(analyse('Question about the report.', { priority: 'low' }).urgency).toBe('low');
    expect(analyse('Question about the report.', { priority: 'normal' }).urgency).toBe('normal');
    expect(analyse('Question about the report.', { priority: 'high' }).urgency).toBe('high');
    expect(analyse('Question about the report.', { priority: 'urgent' }).urgency).toBe('critical');
    expect(analyse('Question about the report.', { priority: null }).urgency).toBe('normal');
  });

  test('severe wording makes it at least high', () => {
    expect(analyse('The site is down.', { priority: 'low' }).urgency).toBe('high');
    expect(analyse("Our users can't log in.", { priority: 'low' }).urgency).toBe('high');
    expect(analyse('We had data loss after the sync.', { priority: 'normal' }).urgency).toBe('high');
    expect(analyse('We think there was a security breach.').urgency).toBe('high');
    expect(analyse('This happens in production.').urgency).toBe('high');
    // already above high: kept
    expect(analyse('The site is down.', { priority: 'urgent' }).urgency).toBe('critical');
  });

  test('hurry wording raises one step, unless negated', () => {
    expect(analyse('Please look at the report asap.', { priority: 'low' }).urgency).toBe('normal');
    expect(analyse('Please fix the report immediately.').urgency).toBe('high');
    expect(analyse('URGENT: report totals look off').urgency).toBe('high');
    expect(analyse('Not urgent: the report totals look off.').urgency).toBe('normal');
  });

  test('three or more recent contacts raise one step', () => {
    expect(analyse('Question about the report.', { recentContacts: 2 }).urgency).toBe('normal');
    expect(analyse('Question about the report.', { recentContacts: 3 }).urgency).toBe('high');
    expect(analyse('Question about the report.', { priority: 'low', recentContacts: 7 }).urgency).toBe('normal');
  });

  test('strongly negative sentiment raises one step', () => {
    const angry = analyse('The export is still broken. This is the third time I report it. Unacceptable.');
    expect(angry.sentiment).toBeLessThan(-0.5);
    expect(angry.urgency).toBe('high');
    // one complaint is not strongly negative
    expect(analyse('I am not happy with the report.').urgency).toBe('normal');
  });

  test('capped at critical', () => {
    const result = analyse('Production is down, we need this fixed ASAP. Third time this week, unacceptable, terrible.', {
      priority: 'urgent',
      recentContacts: 10,
    });
    expect(result.urgency).toBe('critical');
    expect(analyse('The site is down, fix it immediately!', { recentContacts: 5 }).urgency).toBe('critical');
  });
});

describe('topics', () => {
  test('keywords map to the fixed vocabulary, sorted', () => {
    expect(analyse('The invoice shows the wrong VAT amount.').topics).toEqual(['billing']);
    expect(analyse('The app crashes with an error when I save.').topics).toEqual(['bug']);
    expect(analyse('The dashboard is really slow, pages take forever.').topics).toEqual(['performance']);
    expect(analyse('Our Salesforce sync stopped, the webhook returns an error.').topics).toEqual(['bug', 'integration']);
    expect(analyse('Can you help us with getting started? We need training for new users.').topics).toEqual(['onboarding']);
    expect(analyse('It would be great if you could add dark mode. Feature request!').topics).toEqual(['feature_request']);
    expect(analyse('I forgot my password and cannot reset it.').topics).toEqual(['account']);
    expect(analyse('We found a vulnerability and suspect phishing.').topics).toEqual(['security']);
    expect(analyse('The CSV import drops rows from the database.').topics).toEqual(['data']);
  });

  test('churn rules imply their topics, even negated', () => {
    expect(analyse('The site is down.').topics).toEqual(['outage']);
    expect(analyse("We don't want to cancel.").topics).toEqual(['cancellation']);
    expect(analyse('We want our money back.').topics).toEqual(['billing']);
    expect(analyse('We need a full data export.').topics).toContain('data');
  });

  test('a ticket about nothing in particular has no topic', () => {
    expect(analyse('Hello, quick question.').topics).toEqual([]);
  });

  test('every topic returned is from the fixed list', () => {
    const result = analyse('billing bug outage slow api onboarding feature request password security data cancel my subscription');
    expect(result.topics.length).toBe(TOPICS.length);
    for (const topic of result.topics) expect(TOPICS as readonly string[]).toContain(topic);
    expect([...result.topics].sort()).toEqual(result.topics);
  });
});

describe('large and hostile input', () => {
  test('a 5 MB description returns', () => {
    const description = 'The export is still broken and we want to cancel our subscription. '.repeat(80_000);
    expect(description.length).toBeGreaterThan(5_000_000);
    const result = analyse(description);
    expect(result.churnSignals).toContain('cancellation');
    expect(result.sentiment).toBeLessThan(0);
  });

  test('5 MB without spaces, of spaces, and of near-misses return', () => {
    for (const description of ['a'.repeat(5_000_000), ' '.repeat(5_000_000), 'cancel our '.repeat(500_000), 'still '.repeat(900_000)]) {
      const result = analyse(description);
      expect(result.method).toBe(INTELLIGENCE_METHOD);
    }
  });

  test('only the first MAX_ANALYSED_CHARS characters are read', () => {
    const padding = 'Hello there. '.repeat(Math.ceil(MAX_ANALYSED_CHARS / 13));
    expect(analyse(`${padding} Cancel my subscription.`).churnSignals).toEqual([]);
    expect(analyse(padding, { subject: 'Cancel my subscription' }).churnSignals).toEqual(['cancellation']);
  });
});

test('method and version are present', () => {
  const result = analyse('Hello');
  expect(result.method).toBe('afinn-165+ngram-logreg+phrase-grammar');
  expect(result.version).toBe(INTELLIGENCE_VERSION);
  expect(result.version.length).toBeGreaterThan(0);
});
