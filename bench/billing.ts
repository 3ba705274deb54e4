// bun run bench:billing [-- --events N --customers N --database-url URL] — billing sync figures,
// through the server in-process (startServer: HTTP server, worker thread and, on PGlite, the
// database's owner thread), on PGlite (a temp dir) and PostgreSQL (--database-url, default
// TEST_DATABASE_URL). Reported, never asserted:
// 1. webhook ingest: N/2 signed Stripe events (~3 KB) POSTed to /api/webhooks/billing, 16 at a
//    time, against N/2 GitHub-signed issues (~1 KB, as bench:tickets) to the ticket webhook in the
//    same run, in 4 rounds each, the order alternating, each round with the worker idle; medians
//    (target >= 0.9x);
// 2. events applied a second: from the first POST until the worker's billing.apply has applied them;
// 3. backfill: customers a second of `billing sync` against the fake Stripe at BILLING_MAX_RPS
//    (customers, subscriptions and invoices: three objects per customer), and this process's RSS
//    before and at its peak meanwhile (sampled every 100 ms): the server's, since the fake Stripe
//    runs in a process of its own (billing-fake-stripe.ts; its own peak is reported apart).
// Options: --events N (4,000: rounds of 500), --customers N (300; 100,000 for the issue's memory figure),
// --max-rps N (BILLING_MAX_RPS, 25), --database-url URL, --embedded-only, --postgres-only.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { queryText } from '../src/db/client.ts';
import { localRunner } from '../src/db/units-of-work.ts';
import { adminUnits } from '../src/admin/cli-units.ts';
import { newConnectorId } from '../src/lib/ids.ts';
import { createLogger } from '../src/lib/log.ts';
import { sealSecret } from '../src/lib/secret-box.ts';
import { newBillingConnectorId } from '../src/modules/billing/connectors.ts';
import { stripeSignature } from '../src/modules/billing/signatures.ts';
import { runBackfill, startSync, syncUnits } from '../src/modules/billing/sync.ts';
import { startServer } from '../src/server.ts';
import { billingFixture } from '../test/helpers/billing.ts';
import { testConfig } from '../test/helpers/harness.ts';
import { cleanupAll, fmtInt, fmtRatio, makeTempDir, median, positiveOption, printHeaderAndExit, table } from './lib.ts';
import { DEFAULT_SETTINGS } from '../src/settings.ts';

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    events: { type: 'string' },
    customers: { type: 'string' },
    'max-rps': { type: 'string' },
    'database-url': { type: 'string' },
    'embedded-only': { type: 'boolean', default: false },
    'postgres-only': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) await printHeaderAndExit(import.meta.path);
const events = positiveOption(opts.events, 4_000);
const customers = positiveOption(opts.customers, 300);
const maxRps = positiveOption(opts['max-rps'], 25);
const databaseUrl = opts['embedded-only'] ? undefined : (opts['database-url'] ?? process.env.TEST_DATABASE_URL);
const SECRET_KEY = 'bench-secret-key-0123456789abcdefghijklmnop';
const WEBHOOK_SECRET = 'whsec_bench_0123456789abcdef';
const TICKET_SECRET = 'bench-ticket-secret-0123456789';
const API_KEY = 'rk_test_bench_0123456789';
const CONCURRENCY = 16;
/** Ingest rounds of each webhook. */
const ROUNDS = 4;

/** Sends `count` requests made by `request(i)`, CONCURRENCY at a time; requests a second. */
async function drive(count: number, request: (i: number) => Request): Promise<{ perSecond: number; failed: number }> {
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const response = await fetch(request(next++));
        await response.arrayBuffer();
        if (response.status !== 200) failed++;
      }
    }),
  );
  return { perSecond: count / ((performance.now() - started) / 1000), failed };
}

/** The fake Stripe in a child process (billing-fake-stripe.ts): its URL, its peak RSS, stop. */
async function startStripeProcess() {
  const child = Bun.spawn(['bun', join(import.meta.dir, 'billing-fake-stripe.ts'), String(customers), API_KEY], {
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const reader = child.stdout.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the fake Stripe exited before it served');
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    url: text.trim(),
    /** VmHWM: the most the process has held. */
    peakRss: () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024,
    stop: () => child.kill(),
  };
}

async function measure(backend: 'embedded' | 'postgres') {
  const stripe = await startStripeProcess();
  const config = testConfig({
    port: 0,
    host: '127.0.0.1',
    dataDir: join(makeTempDir('bench-billing'), 'data'),
    databaseUrl: backend === 'postgres' ? databaseUrl! : null,
    secretKey: SECRET_KEY,
    stripeApiBase: stripe.url,
    billingMaxRps: maxRps,
    allowInsecurePlatformUrls: true,
    anonLimitPerMinute: 10_000_000,
    anonLimitPerDay: 1_000_000_000,
    webhookLimitPerMinute: 10_000_000,
    webhookLimitPerDay: 1_000_000_000,
    shutdownTimeoutMs: 5_000,
  });
  const server = await startServer(config, { workerUrl: new URL('../src/jobs/worker.ts', import.meta.url), log: createLogger('silent') });
  const rssStarted = process.memoryUsage().rss;
  const admin = localRunner(server.database.db, adminUnits, DEFAULT_SETTINGS);
  const base = server.url.href.replace(/\/$/, '');
  const org = (await admin.run('orgs.create', {
    name: `bench-billing-${crypto.randomUUID().slice(0, 8)}`,
    plan: 'enterprise',
    actor: 'bench',
  } as never)) as { id: string };
  const ticketId = newConnectorId();
  await admin.run('connectors.create', {
    id: ticketId,
    org: org.id,
    name: 'bench tickets',
    platform: 'github',
    secretSealed: sealSecret(TICKET_SECRET, SECRET_KEY, ticketId),
    tokenHash: null,
    actor: 'bench',
  });
  const billingId = newBillingConnectorId();
  const seal = (secret: string) => sealSecret(secret, SECRET_KEY, billingId);
  await admin.run('billing.add', {
    id: billingId,
    org: org.id,
    name: 'bench stripe',
    platform: 'stripe',
    mode: 'test',
    webhookSecretSealed: seal(WEBHOOK_SECRET),
    apiKeySealed: seal(API_KEY),
    actor: 'bench',
  });

  // 1. Ingest: ROUNDS rounds of each webhook, the order alternating (tickets first, then billing
  // first, …), each round starting with the worker idle — the other webhook's events processed or
  // applied — so neither is measured against the other's processing. The ticket is a GitHub issue
  // of about 1 KB, as bench:tickets sends; a Stripe event is about 3 KB.
  const subscription = billingFixture('stripe/customer.subscription.created.json');
  const billingBody = (i: number, round: number) => {
    const n = `${round}${String(i).padStart(7, '0')}`;
    const object = { ...subscription.data.object, id: `sub_bench${n}`, customer: `cus_bench${n}` };
    return JSON.stringify({ ...subscription, id: `evt_bench${n}`, data: { object } });
  };
  const issue = JSON.stringify({
    action: 'opened',
    issue: {
      number: 1,
      title: 'Export fails after the upgrade',
      body: 'Since the upgrade on Monday the CSV export of the invoices page times out after about thirty seconds for every account with more than a few hundred invoices. '.repeat(
        6,
      ),
    },
  });
  const ticketHeaders = {
    'content-type': 'application/json',
    'x-github-event': 'issues',
    'x-hub-signature-256': `sha256=${createHmac('sha256', TICKET_SECRET).update(issue).digest('hex')}`,
  };
  const count = async (text: string, id: string) => (await queryText<{ n: number }>(server.database.db, text, [id]))[0]!.n;
  const idle = async () => {
    while (
      (await count(
        `select count(*)::int as n from ticket_events where connector_id = $1 and status in ('pending', 'processing')`,
        ticketId,
      )) +
        (await count(`select count(*)::int as n from billing_events where connector_id = $1 and state = 'pending'`, billingId)) >
      0
    )
      await Bun.sleep(100);
  };
  const perRound = Math.max(1, Math.floor(events / (2 * ROUNDS)));
  const rates = { billing: [] as number[], tickets: [] as number[] };
  let failed = 0;
  const appliedFrom = performance.now();
  const ticketRound = async (round: number) => {
    await idle();
    const sent = await drive(
      perRound,
      (i) =>
        new Request(`${base}/api/webhooks/tickets?connectorId=${ticketId}`, {
          method: 'POST',
          headers: { ...ticketHeaders, 'x-github-delivery': `bench-${round}-${i}` },
          body: issue,
        }),
    );
    rates.tickets.push(sent.perSecond);
    failed += sent.failed;
  };
  const billingRound = async (round: number) => {
    // Made and signed before the clock starts, as the ticket webhook's body is: the bench's own
    // work is not the server's.
    const t = Math.floor(Date.now() / 1000);
    const signed = Array.from({ length: perRound }, (_, i) => {
      const body = billingBody(i, round);
      return { body, signature: `t=${t},v1=${stripeSignature(body, WEBHOOK_SECRET, t)}` };
    });
    await idle();
    const sent = await drive(
      perRound,
      (i) =>
        new Request(`${base}/api/webhooks/billing?connectorId=${billingId}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': signed[i]!.signature },
          body: signed[i]!.body,
        }),
    );
    rates.billing.push(sent.perSecond);
    failed += sent.failed;
  };
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      await ticketRound(round);
      await billingRound(round);
    } else {
      await billingRound(round);
      await ticketRound(round);
    }
  }
  // 2. Applied: every stored event applied by the worker.
  const pending = async () =>
    (
      await queryText<{ n: number }>(
        server.database.db,
        `select count(*)::int as n from billing_events where connector_id = $1 and state = 'pending'`,
        [billingId],
      )
    )[0]!.n;
  while ((await pending()) > 0) await Bun.sleep(100);
  const appliedPerSecond = events / ((performance.now() - appliedFrom) / 1000);

  // 3. Backfill, as `revintel billing sync` runs it, with the process's RSS sampled.
  const rssBefore = process.memoryUsage().rss;
  let peakRss = rssBefore;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 100);
  const units = localRunner(server.database.db, syncUnits, DEFAULT_SETTINGS);
  const { sync } = await server.database.db.transaction((tx) => startSync(tx as never, { connectorId: billingId }));
  const backfillFrom = performance.now();
  const done = await runBackfill({
    syncId: sync.id,
    settings: { stripeApiBase: stripe.url, chargebeeApiBase: stripe.url, maxRps },
    secretKey: SECRET_KEY,
    run: (unit, args) => units.run(unit, args as never) as never,
  });
  const backfillSeconds = (performance.now() - backfillFrom) / 1000;
  clearInterval(sampler);
  const stripePeakRss = stripe.peakRss();
  if (done.error) console.error(`backfill ${done.state}: ${done.error}`);
  await server.stop();
  stripe.stop();

  console.log(`\n${backend}: ${fmtInt(events)} webhook events, ${fmtInt(customers)} customers backfilled at BILLING_MAX_RPS=${maxRps}`);
  console.log(
    table(
      ['figure', 'value', 'target'],
      [
        [`ticket webhook ingest (median of ${ROUNDS} rounds of ${perRound})`, `${fmtInt(median(rates.tickets))} req/s`, ''],
        [`billing webhook ingest (median of ${ROUNDS})`, `${fmtInt(median(rates.billing))} req/s`, ''],
        ['billing / ticket (medians)', fmtRatio(median(rates.billing) / median(rates.tickets)), '>= 0.90x'],
        ['non-200 answers', fmtInt(failed), '0'],
        ['events applied', `${fmtInt(appliedPerSecond)} /s (ingest included)`, ''],
        [
          `backfill (${done.state}, ${done.pages} pages, ${done.rateLimited} 429)`,
          `${fmtInt(customers / backfillSeconds)} customers/s (${backfillSeconds.toFixed(1)} s)`,
          `${fmtInt((maxRps / 3) * 100)} customers/s at most (3 lists)`,
        ],
        [
          'server RSS started, before the backfill, peak during it',
          `${Math.round(rssStarted / 1e6)}, ${Math.round(rssBefore / 1e6)}, ${Math.round(peakRss / 1e6)} MB`,
          '',
        ],
        ['peak RSS of the fake Stripe (own process)', `${Math.round(stripePeakRss / 1e6)} MB`, ''],
      ],
    ),
  );
}

try {
  if (!opts['postgres-only']) await measure('embedded');
  if (databaseUrl) await measure('postgres');
} finally {
  await cleanupAll();
}
