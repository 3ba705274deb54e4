// bun run bench:whatsapp [-- --statuses N] — one large signed WhatsApp delivery through the server
// in-process (startServer: the HTTP server, the worker thread and, on PGlite, the database's owner
// thread, as `serve` runs them), on PGlite (a temp dir) and PostgreSQL (--database-url, default
// TEST_DATABASE_URL). From a process of its own (this file with --poll), another organisation
// polls, every 20 ms, GET /healthz and GET /api/customers?limit=50: first idle (the baseline, same
// run), then from the delivery's POST until every job it made is done. Reported: the acknowledgement's time, the jobs the delivery made, how
// long their processing took, and both polls' p50 / p99 / max beside the idle ones.
// Target (reported, never asserted): /healthz p99 < 100 ms and the other tenant's list p99 < 250 ms.
// Options: --statuses N (41,975), --idle-ms N (3,000), --database-url URL, --embedded-only.
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from '../src/server.ts';
import { queryText } from '../src/db/client.ts';
import { localRunner } from '../src/db/units-of-work.ts';
import { adminUnits } from '../src/admin/cli-units.ts';
import { createLogger } from '../src/lib/log.ts';
import { sealSecret } from '../src/lib/secret-box.ts';
import { testConfig } from '../test/helpers/harness.ts';
import { cleanupAll, fmtInt, makeTempDir, positiveOption, printHeaderAndExit, quantile, table } from './lib.ts';
import { DEFAULT_SETTINGS } from '../src/settings.ts';

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    statuses: { type: 'string' },
    'idle-ms': { type: 'string' },
    'database-url': { type: 'string' },
    'embedded-only': { type: 'boolean', default: false },
    poll: { type: 'string' },
    key: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) await printHeaderAndExit(import.meta.path);

// The poller: one line per answer (which, when it was asked, how long it took), until killed.
if (opts.poll) {
  const poll = async (path: string, name: string, headers: Record<string, string> = {}) => {
    for (;;) {
      const at = Date.now();
      const started = performance.now();
      await fetch(`${opts.poll}${path}`, { headers }).then((r) => r.arrayBuffer());
      console.log(`${name},${at},${(performance.now() - started).toFixed(2)}`);
      await Bun.sleep(20);
    }
  };
  await Promise.all([poll('/healthz', 'healthz'), poll('/api/customers?limit=50', 'customers', { authorization: `Bearer ${opts.key}` })]);
}
const statuses = positiveOption(opts.statuses, 41_975);
const idleMs = positiveOption(opts['idle-ms'], 3_000);
const databaseUrl = opts['embedded-only'] ? undefined : (opts['database-url'] ?? process.env.TEST_DATABASE_URL);
const APP_SECRET = 'bench-whatsapp-app-secret';
const SECRET_KEY = 'bench-secret-key-0123456789abcdefghijklmnop';

async function measure(backend: 'embedded' | 'postgres') {
  const config = testConfig({
    port: 0,
    host: '127.0.0.1',
    dataDir: join(makeTempDir('bench-wa'), 'data'),
    databaseUrl: backend === 'postgres' ? databaseUrl! : null,
    secretKey: SECRET_KEY,
    whatsappAppSecret: APP_SECRET,
    whatsappApiBase: 'http://127.0.0.1:9/v21.0',
    allowInsecurePlatformUrls: true,
    anonLimitPerMinute: 10_000_000,
    anonLimitPerDay: 1_000_000_000,
    shutdownTimeoutMs: 5_000,
  });
  const server = await startServer(config, { workerUrl: new URL('../src/jobs/worker.ts', import.meta.url), log: createLogger('silent') });
  const admin = localRunner(server.database.db, adminUnits, DEFAULT_SETTINGS);
  const base = server.url.href.replace(/\/$/, '');
  const org = (name: string) =>
    admin.run('orgs.create', {
      name: `${name}-${crypto.randomUUID().slice(0, 8)}`,
      plan: 'enterprise',
      rateLimitPerMinute: 10_000_000,
      rateLimitPerDay: 1_000_000_000,
      actor: 'bench',
    } as never) as Promise<{ id: string }>;
  const sender = await org('bench-wa');
  const other = await org('bench-other');
  const { plaintext: key } = await admin.run('keys.create', { org: other.id, name: 'bench', expiresAt: null, actor: 'bench' });
  for (let i = 0; i < 100; i++) {
    await fetch(`${base}/api/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Other ${i}`, currency: 'EUR' }),
    });
  }
  const phoneNumberId = `8${Date.now()}`;
  const chatId = `chi_bench${crypto.randomUUID().slice(0, 8)}`;
  await admin.run('chat.add', {
    id: chatId,
    org: sender.id,
    platform: 'whatsapp',
    externalId: phoneNumberId,
    credentialsSealed: sealSecret('EAAG-bench-token-000000', SECRET_KEY, chatId),
    actor: 'bench',
  });

  const poller = Bun.spawn([process.execPath, import.meta.path, '--poll', base, '--key', key], { stdout: 'pipe', stderr: 'inherit' });
  const idleFrom = Date.now();
  await Bun.sleep(idleMs);

  const wamid = (i: number) => `wamid.HBgL${String(i).padStart(16, '0')}`;
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550000000', phone_number_id: phoneNumberId },
              statuses: Array.from({ length: statuses }, (_, i) => ({
                id: wamid(i),
                status: 'delivered',
                timestamp: String(Math.floor(Date.now() / 1000)),
                recipient_id: '15551234567',
              })),
            },
          },
        ],
      },
    ],
  });
  const loadedFrom = Date.now();
  const sent = performance.now();
  const answer = await fetch(`${base}/api/webhooks/messaging`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
    },
    body,
  });
  await answer.arrayBuffer();
  const ackMs = performance.now() - sent;
  const jobsOf = async (state: string) =>
    (
      await queryText<{ n: number }>(
        server.database.db,
        `select count(*)::int as n from jobs where org_id = $1 and kind in ('whatsapp.batch', 'whatsapp.inbound') and state = any($2::text[])`,
        [sender.id, state.split(',')],
      )
    )[0]!.n;
  const made = await jobsOf('queued,running,done,dead');
  while ((await jobsOf('queued,running')) > 0) await Bun.sleep(250);
  const processedMs = performance.now() - sent;
  const loadedUntil = Date.now();
  poller.kill();
  const lines = (await new Response(poller.stdout).text())
    .trim()
    .split('\n')
    .map((line) => line.split(','));
  const within = (name: string, from: number, until: number) =>
    lines.filter(([n, at]) => n === name && Number(at) >= from && Number(at) < until).map(([, , ms]) => Number(ms));
  const samples = {
    idle: { healthz: within('healthz', idleFrom, loadedFrom), customers: within('customers', idleFrom, loadedFrom) },
    loaded: { healthz: within('healthz', loadedFrom, loadedUntil), customers: within('customers', loadedFrom, loadedUntil) },
  };
  await server.stop();
  const row = (label: string, values: number[]) => [
    label,
    fmtInt(values.length),
    `${quantile(values, 0.5).toFixed(1)} ms`,
    `${quantile(values, 0.99).toFixed(1)} ms`,
    `${Math.max(...values).toFixed(1)} ms`,
  ];
  console.log(
    `\n${backend}: one signed delivery of ${fmtInt(statuses)} statuses (${(body.length / 1e6).toFixed(1)} MB): answered ${answer.status} after ${fmtInt(ackMs)} ms; ${fmtInt(made)} jobs, all done ${(processedMs / 1000).toFixed(1)} s after the POST`,
  );
  console.log(
    table(
      ['poll (another organisation)', 'n', 'p50', 'p99', 'max'],
      [
        row('/healthz, idle', samples.idle.healthz),
        row('/healthz, delivery and its jobs', samples.loaded.healthz),
        row('/api/customers, idle', samples.idle.customers),
        row('/api/customers, delivery and its jobs', samples.loaded.customers),
      ],
    ),
  );
}

if (!opts.poll)
  try {
    await measure('embedded');
    if (databaseUrl) await measure('postgres');
  } finally {
    await cleanupAll();
  }
