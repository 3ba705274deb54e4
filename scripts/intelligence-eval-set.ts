// Builds the churn-signal and sentiment evaluation sets in test/fixtures/intelligence/ from public
// corpora of real customer messages (docs/tickets.md "Ticket intelligence: how it is measured"). Run once
// with the sources checked out in one directory:
//   bun scripts/intelligence-eval-set.ts SOURCES_DIR
// where SOURCES_DIR holds banking77/{train,test}.csv (PolyAI-LDN/task-specific-datasets,
// banking_data), nlupp/{banking,hotels}_N.json (same repository, nlupp/data/<domain>/foldN.json),
// clinc/data_full.json (clinc/oos-eval) and uci/{amazon_cells,yelp}_labelled.txt (UCI "Sentiment
// Labelled Sentences").
// Labels come from each corpus's own intent labels, mapped below once, before any rule was run on
// them; the split into a development part and a held-out part is a hash of the text, so it is
// fixed whatever order the sources come in and no message is in both parts.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';

const sources = process.argv[2];
if (!sources) throw new Error('usage: bun scripts/intelligence-eval-set.ts SOURCES_DIR');
const out = join(import.meta.dir, '..', 'test', 'fixtures', 'intelligence');
mkdirSync(out, { recursive: true });

interface Labelled {
  text: string;
  signals: string[];
  source: string;
}

/** FNV-1a of the lower-cased text: 3 in 10 messages go to the held-out part. */
function heldOut(text: string): boolean {
  let hash = 0x811c9dc5;
  for (const ch of text.toLowerCase()) {
    hash ^= ch.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % 10 < 3;
}

const signalSet: Labelled[] = [];

// BANKING77: online-banking customers' messages, one of 77 intents each.
const BANKING77_SIGNALS: Record<string, string[]> = {
  terminate_account: ['cancellation'],
  request_refund: ['refund'],
  Refund_not_showing_up: ['refund'],
};
for (const part of ['train', 'test']) {
  const rows = parse(readFileSync(join(sources, 'banking77', `${part}.csv`)), { columns: true }) as Array<{
    text: string;
    category: string;
  }>;
  for (const row of rows)
    signalSet.push({ text: row.text.trim(), signals: BANKING77_SIGNALS[row.category] ?? [], source: `banking77:${row.category}` });
}

// NLU++: banking and hotel customers' messages with several intents each. Its one intent
// `cancel_close_leave_freeze` joins closing with freezing: with `account` (and no card, payment
// or appointment) it is a cancellation unless the text says freeze/block/suspend/lock, which the
// label cannot tell apart, so those are left out. Hotel messages are bookings, stays and
// check-outs: no churn signal ("I want to leave" there means the room).
const NOT_THE_RELATIONSHIP = [
  'card',
  'transfer_payment_deposit',
  'direct_debit',
  'standing_order',
  'appointment',
  'cheque',
  'loan',
  'mortgage',
  'overdraft',
  'booking',
];
for (const domain of ['banking', 'hotels']) {
  for (let fold = 0; fold < 20; fold++) {
    const items = JSON.parse(readFileSync(join(sources, 'nlupp', `${domain}_${fold}.json`), 'utf8')) as Array<{
      text: string;
      intents?: string[];
    }>;
    for (const item of items) {
      const intents = item.intents ?? [];
      const text = item.text.trim();
      const signals: string[] = [];
      if (domain === 'banking' && intents.includes('cancel_close_leave_freeze')) {
        if (/\b(?:freez|block|suspend|lock|pause|hold)/i.test(text)) continue;
        if (intents.includes('account') && !intents.some((i) => NOT_THE_RELATIONSHIP.includes(i))) signals.push('cancellation');
        else if (!intents.some((i) => NOT_THE_RELATIONSHIP.includes(i) || i === 'account')) continue; // "I want to leave": object unknown
      }
      if (domain === 'banking' && intents.includes('refund')) signals.push('refund');
      if (domain === 'hotels' && intents.includes('cancel_close_leave_freeze') && !intents.includes('booking')) continue;
      signalSet.push({ text, signals, source: `nlupp-${domain}:${intents.join('+') || 'none'}` });
    }
  }
}

// CLINC150: requests to a banking, travel, work and home assistant; none is a churn signal. Its
// `cancel` intent ("cancel that", "never mind") is an instruction to the assistant with no object
// and is left out; so are its out-of-scope queries.
const clinc = JSON.parse(readFileSync(join(sources, 'clinc', 'data_full.json'), 'utf8')) as Record<string, Array<[string, string]>>;
for (const part of ['train', 'val', 'test']) {
  for (const [text, intent] of clinc[part] ?? []) {
    if (intent === 'cancel') continue;
    signalSet.push({ text: text.trim(), signals: [], source: `clinc150:${intent}` });
  }
}

const seen = new Set<string>();
const unique = signalSet.filter((m) => {
  const key = m.text.toLowerCase().replace(/\s+/g, ' ');
  if (key === '' || seen.has(key)) return false;
  seen.add(key);
  return true;
});

function write(name: string, rows: object[]) {
  writeFileSync(join(out, name), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
}
write(
  'signals.dev.ndjson',
  unique.filter((m) => !heldOut(m.text)),
);
write(
  'signals.heldout.ndjson',
  unique.filter((m) => heldOut(m.text)),
);

// UCI Sentiment Labelled Sentences: customers' review sentences of phones (Amazon) and of
// restaurants (Yelp), 1 positive, 0 negative.
const sentiment: Array<{ text: string; signals: string[]; sentiment: number; source: string }> = [];
for (const [file, source] of [
  ['amazon_cells_labelled.txt', 'uci-amazon'],
  ['yelp_labelled.txt', 'uci-yelp'],
] as const) {
  for (const line of readFileSync(join(sources, 'uci', file), 'utf8').split('\n')) {
    const match = /^(.*)\t([01])\s*$/.exec(line);
    if (!match) continue;
    sentiment.push({ text: match[1]!.trim(), signals: [], sentiment: match[2] === '1' ? 1 : -1, source });
  }
}
write(
  'sentiment.dev.ndjson',
  sentiment.filter((m) => !heldOut(m.text)),
);
write(
  'sentiment.heldout.ndjson',
  sentiment.filter((m) => heldOut(m.text)),
);
console.log(`signals: ${unique.length} messages; sentiment: ${sentiment.length} sentences`);
