// One process's timing of a ticket intelligence (bench/tickets.ts, phase "intelligence"): imports
// analyseTicket from MODULE (this checkout's by default, or an older checkout's, run in a process of
// its own so the two never share the `sentiment` package's language registry), reads the texts
// from the NDJSON file TEXTS ({"subject","description"} a line), and prints the µs per ticket of
// each of PASSES passes over all of them, after one warm-up pass, as JSON: CPU time of this process
// (user + system), not wall time, so other work on a busy machine does not count.
//
// Usage: bun bench/intelligence-timing.ts TEXTS [MODULE] [PASSES]
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const [textsFile, modulePath = resolve(import.meta.dir, '../src/modules/tickets/intelligence.ts'), passesArg = '5'] = process.argv.slice(2);
if (!textsFile) throw new Error('usage: bun bench/intelligence-timing.ts TEXTS [MODULE] [PASSES]');
const { analyseTicket } = (await import(resolve(modulePath))) as typeof import('../src/modules/tickets/intelligence.ts');
const texts = readFileSync(textsFile, 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line) as { subject: string | null; description: string | null });

function pass(): number {
  const started = process.cpuUsage();
  for (const text of texts)
    analyseTicket({ subject: text.subject, description: text.description, priority: 'normal' }, { recentContacts: 0 });
  const spent = process.cpuUsage(started);
  return (spent.user + spent.system) / texts.length;
}
pass();
const us = Array.from({ length: Number(passesArg) }, pass);
console.log(JSON.stringify({ tickets: texts.length, us }));
