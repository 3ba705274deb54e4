// bun run bench:predictions [-- --quick] — churn predictions at scale, on the demo organisation, on
// PGlite (a temp dir) and PostgreSQL (--database-url, default TEST_DATABASE_URL). For each size:
//   rescore     a full recompute in chunks, each chunk its own transaction as the job's units run
//               (in this process: on PGlite that is the server's main thread's work), customers/s,
//               against the same features asked one customer at a time (featuresAt with one id, on
//               a sample of --sample, extrapolated); the first scoring (inserts) is shown too, and
//               the features alone for the whole organisation in one statement (no writes);
//   held        PGlite: the longest the event loop was held during the rescore (a 1 ms timer's
//               longest gap), and the longest chunk;
//   reads       `dist/revintel serve` on the same data: GET /api/cfo/predictions?limit=50 against
//               GET /api/customers?limit=50, wrk -c32 for --duration s each after 1 s of warm-up;
//   freshness   tickets posted to the demo help desk at --rate per second for --seconds; every
//               tenth names a customer of its own, whose prediction is polled until its ticket
//               count moves: p50/p95 from the webhook's 200.
//   fitting     at the largest size: `revintel backtest` (out_of_time, then cross_validation) as its
//               own process on the same data, wall time and peak RSS (out_of_time trains a model
//               and tests it);
//   acks        at the largest size: webhook acknowledgement latency at --rate per second, idle
//               against while a backtest runs in the server's fitting thread (p50 / p99).
// Targets (reported, never asserted): rescore >= 20x the loop; 100,000 within 12x the time of
// 10,000; held ~100 ms; reads >= 0.8x; freshness p95 < 10 s; training + backtest at 100,000 under
// 5 min and 600 MB on PostgreSQL; acks no slower during a backtest.
// Options: --quick (PGlite only unless --only, 1,000 customers, one round of 2 s reads, 3 s of
//          tickets: under a minute; a smoke run, its figures are not the benchmark), --sizes LIST, --only embedded,postgres, --duration S (5),
//          --rate N (100), --seconds S (20), --sample N (200), --database-url URL, --build.
import { parseArgs } from 'node:util';
import { connectPostgres, openEmbedded, queryText, type Database } from '../src/db/client.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { localRunner } from '../src/db/units-of-work.ts';
import { recomputeUnits } from '../src/modules/predictions/jobs/recompute.ts';
import { randomBase62 } from '../src/lib/ids.ts';
import { loadDemo } from '../src/modules/demo/service.ts';
import { featuresAt } from '../src/modules/predictions/features.ts';
import { recomputeInChunks } from '../src/modules/predictions/service.ts';
import { DEFAULT_PREDICTION_SETTINGS } from '../src/modules/predictions/settings.ts';
import {
  cleanupAll,
  fmtInt,
  fmtMB,
  fmtMs,
  fmtRatio,
  fmtSeconds,
  makeTempDir,
  median,
  positiveOption,
  printHeaderAndExit,
  quantile,
  sampleRss,
  sleep,
  stopOnSignal,
  table,
} from './lib.ts';
import { chooseLoadTool, ensureBinary, loadRun, pacedAcks, revintelRunner } from './revintel.ts';
import { DEFAULT_SETTINGS } from '../src/settings.ts';
import { DEFAULT_ACTION_SETTINGS } from '../src/modules/agent-actions/settings.ts';

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    quick: { type: 'boolean', default: false },
    sizes: { type: 'string' },
    only: { type: 'string' },
    duration: { type: 'string' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    sample: { type: 'string' },
    'database-url': { type: 'string' },
    build: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) await printHeaderAndExit(import.meta.path);
const sizes = (opts.sizes ?? (opts.quick ? '1000' : '10000,100000')).split(',').map(Number);
const rounds = opts.quick ? 1 : 2;
const duration = positiveOption(opts.duration, opts.quick ? 2 : 5);
const rate = positiveOption(opts.rate, 100);
const freshSeconds = positiveOption(opts.seconds, opts.quick ? 3 : 20);
const sampleSize = positiveOption(opts.sample, opts.quick ? 50 : 200);
const databaseUrl = opts['database-url'] ?? process.env.TEST_DATABASE_URL ?? null;
const only = new Set((opts.only ?? (opts.quick ? 'embedded' : 'embedded,postgres')).split(','));
const backends = (['embedded', 'postgres'] as const).filter((b) => only.has(b) && (b === 'embedded' || databaseUrl));
const log = (line: string) => console.error(line);
const today = new Date().toISOString().slice(0, 10);
const work = makeTempDir('predictions');
const runner = revintelRunner({ workDir: work, logDir: work });
const tool = chooseLoadTool(undefined);
stopOnSignal(log, () => undefined);

interface Figures {
  backend: string;
  customers: number;
  scored: number;
  firstMs: number;
  rescoreMs: number;
  loopPerCustomerMs: number;
  featuresOnlyMs: number;
  chunkMaxMs: number;
  chunkMedianMs: number;
  heldMs: number;
  predictionsRps: number;
  customersRps: number;
  freshP50: number;
  freshP95: number;
  freshSamples: number;
  fitting?: { method: string; ms: number; peakMB: number; auc: number | null }[];
  acks?: { idleP50: number; idleP99: number; busyP50: number; busyP99: number; backtestMs: number };
}

/** The longest gap between ticks of a 1 ms timer while it runs: how long the event loop was held. */
function loopWatch() {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  return () => (clearInterval(timer), longest);
}

/** A full recompute through the job's unit, each chunk its own transaction; chunk times kept. */
async function rescore(database: Database, orgId: string) {
  const units = localRunner(database.db, recomputeUnits, DEFAULT_SETTINGS);
  const chunks: number[] = [];
  const held = loopWatch();
  const started = performance.now();
  const result = await recomputeInChunks(
    async (args) => {
      const t0 = performance.now();
      const chunk = await units.run('score-chunk', args);
      chunks.push(performance.now() - t0);
      // As the worker's units do, each chunk comes back through the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      return chunk;
    },
    { orgId, today, scope: 'all' },
  );
  return { ms: performance.now() - started, heldMs: held(), scored: result.scored, chunks };
}

/** Phase 1, in this process: the demo, two full scorings, and the one-customer-at-a-time loop. */
async function measureInProcess(database: Database, customers: number, figures: Figures) {
  const loadStart = performance.now();
  const demo = await database.db.transaction((tx) =>
    loadDemo(
      tx as never,
      { orgName: `bench-predictions-${randomBase62(8)}`, customers, seed: 7, today, actor: 'bench' },
      DEFAULT_ACTION_SETTINGS,
    ),
  );
  const orgId = demo.org.id;
  log(`  demo: ${fmtInt(customers)} customers in ${fmtSeconds(performance.now() - loadStart)}`);
  // The demo asks the worker for a whole recompute: this bench times its own. No rate limits.
  await queryText(database.db, `delete from jobs where org_id = $1 and kind = 'predictions.recompute' and state = 'queued'`, [orgId]);
  await queryText(
    database.db,
    `update organisations set rate_limit_per_minute = 100000000, rate_limit_per_day = 1000000000 where id = $1`,
    [orgId],
  );
  const first = await rescore(database, orgId);
  const again = await rescore(database, orgId);
  Object.assign(figures, {
    scored: again.scored,
    firstMs: first.ms,
    rescoreMs: again.ms,
    chunkMaxMs: Math.max(...again.chunks),
    chunkMedianMs: median(again.chunks),
    heldMs: again.heldMs,
  });
  log(
    `  scoring: first ${fmtSeconds(first.ms)}, rescore ${fmtSeconds(again.ms)} (${again.chunks.length} chunks, longest ${fmtMs(figures.chunkMaxMs * 1000)}, loop held ${fmtMs(again.heldMs * 1000)})`,
  );
  const featuresStart = performance.now();
  const everyone = await featuresAt(database.db, {
    orgId,
    day: today,
    horizonDays: DEFAULT_PREDICTION_SETTINGS.horizonDays,
    population: 'scored',
    graceDays: DEFAULT_PREDICTION_SETTINGS.graceDays,
  });
  figures.featuresOnlyMs = performance.now() - featuresStart;
  log(
    `  features alone, whole organisation in one statement: ${fmtSeconds(figures.featuresOnlyMs)} (${fmtInt(everyone.length)} customers)`,
  );
  const ids = (
    await queryText<{ id: string }>(database.db, `select id from customers where org_id = $1 order by random() limit $2`, [
      orgId,
      sampleSize,
    ])
  ).map((r) => r.id);
  const settings = DEFAULT_PREDICTION_SETTINGS;
  const loopStart = performance.now();
  for (const id of ids)
    await featuresAt(database.db, {
      orgId,
      day: today,
      horizonDays: settings.horizonDays,
      population: 'scored',
      graceDays: settings.graceDays,
      customerIds: [id],
    });
  figures.loopPerCustomerMs = (performance.now() - loopStart) / ids.length;
  // The customers the freshness phase sends tickets for: scored ones, found by their domain.
  const targets = await queryText<{ id: string; domain: string }>(
    database.db,
    `select c.id, c.domain from predictions p join customers c on c.org_id = p.org_id and c.id = p.customer_id where p.org_id = $1 and c.domain is not null order by random() limit $2`,
    [orgId, Math.ceil((rate * freshSeconds) / 10) + 200],
  );
  return {
    orgId,
    org: demo.org.name,
    secret: demo.secret,
    connectorId: demo.connector.id,
    targets: targets.map((t) => [t.id, t.domain] as [string, string]),
  };
}

/** Phase 2, against the server: the two list pages through the load tool. */
async function measureReads(base: string, secret: string, figures: Figures) {
  const authorization = `Bearer ${secret}`;
  const rps: Record<'predictions' | 'customers', number[]> = { predictions: [], customers: [] };
  for (let round = 0; round < rounds; round++) {
    for (const [name, path] of [
      ['customers', '/api/customers?limit=50'],
      ['predictions', '/api/cfo/predictions?limit=50'],
    ] as const) {
      await loadRun(tool, base + path, authorization, 1, { threads: 2, connections: 32 });
      const run = await loadRun(tool, base + path, authorization, duration, { threads: 2, connections: 32 });
      if (run.errors > 0) log(`  warning: ${run.errors} errors on ${path}`);
      rps[name].push(run.rps);
    }
  }
  figures.predictionsRps = median(rps.predictions);
  figures.customersRps = median(rps.customers);
}

/** Phase 3: tickets at `rate`/s; every tenth to a customer of its own, polled until its ticket
 * count (the tickets_90d feature) moves. */
async function measureFreshness(base: string, secret: string, connectorId: string, all: [string, string][], figures: Figures) {
  const headers = { authorization: `Bearer ${secret}` };
  const prediction = async (id: string) => {
    const response = await fetch(`${base}/api/cfo/predictions/${id}`, { headers });
    return response.status === 200 ? ((await response.json()) as { data: Shown }).data : null;
  };
  // The feature sits under its driver group (ticket volume).
  type Shown = { drivers: { features: { feature: string; value: number }[] }[] };
  const ticketsOf = (p: Shown) => p.drivers.flatMap((d) => d.features).find((f) => f.feature === 'tickets_90d')!.value;
  const own = all.slice(0, Math.ceil((rate * freshSeconds) / 10));
  const shared = all.slice(own.length);
  const before = new Map<string, number>();
  for (const [id] of own) before.set(id, ticketsOf((await prediction(id))!));
  const latencies: number[] = [];
  const polls: Promise<void>[] = [];
  const deadline = performance.now() + freshSeconds * 1000;
  let n = 0;
  while (performance.now() < deadline) {
    const due = performance.now() + 1000 / rate;
    const mine = n % 10 === 0 ? own[n / 10] : undefined;
    const [customerId, domain] = mine ?? shared[n % shared.length]!;
    const body = JSON.stringify({
      ticket: {
        id: `BENCH-${randomBase62(10)}`,
        subject: 'We will cancel',
        description: 'We plan to cancel and move to a competitor unless this is fixed.',
        requester_email: `ops@${domain}`,
      },
    });
    const post = fetch(`${base}/api/webhooks/tickets?connectorId=${connectorId}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    if (mine) {
      polls.push(
        post.then(async (response) => {
          if (response.status !== 200) return log(`  warning: webhook answered ${response.status}`);
          const acknowledged = performance.now();
          while (performance.now() - acknowledged < 30_000) {
            const p = await prediction(customerId);
            if (p && ticketsOf(p) > before.get(customerId)!) return void latencies.push(performance.now() - acknowledged);
            await sleep(250);
          }
          log(`  warning: ${customerId}'s prediction did not move within 30 s`);
        }),
      );
    } else post.then((r) => r.arrayBuffer()).catch(() => {});
    n++;
    await sleep(Math.max(0, due - performance.now()));
  }
  await Promise.all(polls);
  const sorted = latencies.sort((a, b) => a - b);
  figures.freshP50 = median(sorted);
  figures.freshP95 = sorted[Math.max(0, Math.ceil(0.95 * sorted.length) - 1)] ?? NaN;
  figures.freshSamples = sorted.length;
}

/** Phase 1b, each as its own process on the same data (the database closed here first): a
 * backtest of each method through the CLI, its wall time and peak RSS. */
async function measureFitting(env: Record<string, string>, org: string, figures: Figures) {
  figures.fitting = [];
  for (const method of ['out_of_time', 'cross_validation']) {
    let rss: ReturnType<typeof sampleRss> | null = null;
    const started = performance.now();
    const report = await runner.cli(['backtest', '--org', org, '--method', method], env, {
      timeoutMs: 1_800_000,
      onSpawn: (proc) => (rss = sampleRss(proc.pid, 50)),
    });
    const ms = performance.now() - started;
    const peakMB = (rss as ReturnType<typeof sampleRss> | null)?.stop() ?? NaN;
    figures.fitting.push({ method, ms, peakMB, auc: report.metrics?.auc ?? null });
    log(
      `  backtest ${method}: ${fmtSeconds(ms)}, peak RSS ${fmtMB(peakMB)}, ${fmtInt(report.metrics.rows)} rows, AUC ${report.metrics.auc?.toFixed(3) ?? 'n/a'}`,
    );
  }
}

/** Phase 4: webhook acknowledgements at `rate`/s with nothing else running, then while a backtest
 * runs in the server's fitting thread (until it finishes). */
async function measureAcks(base: string, secret: string, connectorId: string, domains: string[], figures: Figures) {
  const ticket = (n: number) =>
    JSON.stringify({
      ticket: {
        id: `ACK-${randomBase62(10)}`,
        subject: 'Export fails',
        description: 'The CSV export fails again.',
        requester_email: `ops@${domains[n % domains.length]}`,
      },
    });
  const idleEnd = performance.now() + Math.min(freshSeconds, 10) * 1000;
  const idle = await pacedAcks(base, connectorId, rate, () => performance.now() > idleEnd, ticket);
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const started = performance.now();
  const asked = (await (await fetch(`${base}/api/cfo/backtests`, { method: 'POST', headers, body: '{}' })).json()) as {
    data: { id: string };
  };
  let finished = false;
  const watch = (async () => {
    while (!finished && performance.now() - started < 1_800_000) {
      const shown = (await (await fetch(`${base}/api/cfo/backtests/${asked.data.id}`, { headers })).json()) as { data: { status: string } };
      if (shown.data.status === 'succeeded' || shown.data.status === 'failed') finished = true;
      else await sleep(200);
    }
    finished = true;
  })();
  const busy = await pacedAcks(base, connectorId, rate, () => finished, ticket);
  await watch;
  figures.acks = {
    idleP50: median(idle),
    idleP99: quantile(idle, 0.99),
    busyP50: median(busy),
    busyP99: quantile(busy, 0.99),
    backtestMs: performance.now() - started,
  };
  log(
    `  acks at ${rate}/s: idle p50 ${fmtMs(figures.acks.idleP50 * 1000)} p99 ${fmtMs(figures.acks.idleP99 * 1000)}; during a ${fmtSeconds(figures.acks.backtestMs)} backtest p50 ${fmtMs(figures.acks.busyP50 * 1000)} p99 ${fmtMs(figures.acks.busyP99 * 1000)}`,
  );
}

async function open(
  backend: 'embedded' | 'postgres',
): Promise<{ database: Database; env: Record<string, string>; close: () => Promise<void> }> {
  if (backend === 'postgres') {
    const database = connectPostgres(databaseUrl!, 4, { timeoutMs: 600_000 });
    await runMigrations(database, databaseUrl);
    return { database, env: { DATABASE_URL: databaseUrl! }, close: () => database.close() };
  }
  const dir = makeTempDir('predictions-pglite');
  const database = await openEmbedded(dir, 'bench', { timeoutMs: 600_000 });
  await runMigrations(database, null);
  return { database, env: { DATA_DIR: dir }, close: () => database.close() };
}

const results: Figures[] = [];
try {
  await ensureBinary(opts.build, log);
  for (const backend of backends) {
    for (const customers of sizes) {
      log(`\n[${backend}] ${fmtInt(customers)} customers`);
      const figures = { backend, customers } as Figures;
      const { database, env, close } = await open(backend);
      let demo: Awaited<ReturnType<typeof measureInProcess>>;
      try {
        demo = await measureInProcess(database, customers, figures);
      } finally {
        await close();
      }
      const largest = customers === Math.max(...sizes);
      if (largest) await measureFitting(env, demo.org, figures);
      const server = await runner.start(`${backend}-${customers}`, {
        ...env,
        RATE_LIMIT_ANON_PER_MINUTE: '10000000',
        RATE_LIMIT_ANON_PER_DAY: '100000000',
      });
      try {
        await measureReads(server.base, demo.secret, figures);
        await measureFreshness(server.base, demo.secret, demo.connectorId, demo.targets, figures);
        if (largest)
          await measureAcks(
            server.base,
            demo.secret,
            demo.connectorId,
            demo.targets.map(([, domain]) => domain),
            figures,
          );
      } finally {
        await runner.stop(server, backend, log);
      }
      if (backend === 'postgres') {
        const cleanup = connectPostgres(databaseUrl!, 1, { timeoutMs: 600_000 });
        await queryText(cleanup.db, `delete from organisations where id = $1`, [demo.orgId]);
        await cleanup.close();
      }
      results.push(figures);
    }
  }
} finally {
  await cleanupAll();
}

const rows = results.map((f) => {
  const smallest = results.find((r) => r.backend === f.backend);
  const growth =
    smallest && smallest !== f ? `${fmtRatio(f.rescoreMs / smallest.rescoreMs)} for ${fmtRatio(f.customers / smallest.customers)}` : '—';
  return [
    f.backend,
    fmtInt(f.customers),
    fmtSeconds(f.firstMs),
    fmtSeconds(f.rescoreMs),
    `${fmtInt((f.customers / f.rescoreMs) * 1000)}/s`,
    `${fmtInt(1000 / f.loopPerCustomerMs)}/s`,
    fmtRatio((f.loopPerCustomerMs * f.customers) / f.rescoreMs),
    `${fmtSeconds(f.featuresOnlyMs)} (${fmtRatio((f.loopPerCustomerMs * f.customers) / f.featuresOnlyMs)})`,
    growth,
    `${fmtMs(f.chunkMedianMs * 1000)} / ${fmtMs(f.chunkMaxMs * 1000)}`,
    f.backend === 'embedded' ? fmtMs(f.heldMs * 1000) : '—',
    `${fmtInt(f.predictionsRps)} / ${fmtInt(f.customersRps)}`,
    fmtRatio(f.predictionsRps / f.customersRps),
    `${fmtSeconds(f.freshP50)} / ${fmtSeconds(f.freshP95)} (${f.freshSamples})`,
  ];
});
console.log(
  `\nchurn predictions, demo organisation, ${today}; load tool ${tool.name} -c32, ${duration} s runs (median of ${rounds}); tickets at ${rate}/s for ${freshSeconds} s\n`,
);
console.log(
  table(
    [
      'backend',
      'customers',
      'first scoring',
      'rescore',
      'rescore rate',
      'one-by-one loop',
      'ratio',
      'features alone (ratio)',
      'time growth',
      'chunk median / max',
      'loop held',
      'predictions / customers req/s',
      'ratio',
      'freshness p50 / p95 (n)',
    ],
    rows,
  ),
);
console.log("\nfitting (each backtest its own process) and webhook acknowledgements during a backtest in the server's fitting thread\n");
console.log(
  table(
    [
      'backend',
      'customers',
      'out_of_time: time / peak RSS / AUC',
      'cross_validation: time / peak RSS / AUC',
      `acks at ${rate}/s idle p50 / p99`,
      'during a backtest p50 / p99',
      'backtest in the server',
    ],
    results
      .filter((f) => f.fitting)
      .map((f) => [
        f.backend,
        fmtInt(f.customers),
        ...f.fitting!.map((x) => `${fmtSeconds(x.ms)} / ${fmtMB(x.peakMB)} / ${x.auc?.toFixed(3) ?? 'n/a'}`),
        f.acks ? `${fmtMs(f.acks.idleP50 * 1000)} / ${fmtMs(f.acks.idleP99 * 1000)}` : '—',
        f.acks ? `${fmtMs(f.acks.busyP50 * 1000)} / ${fmtMs(f.acks.busyP99 * 1000)}` : '—',
        f.acks ? fmtSeconds(f.acks.backtestMs) : '—',
      ]),
  ),
);
