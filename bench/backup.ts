// bun run bench:backup [-- --quick] — online backup and restore of the embedded database, on the
// demo organisation at --customers (100,000; --quick 2,000), through dist/revintel:
//   acks     ticket webhooks posted at --rate per second (200) for --seconds (10) with nothing else
//            running (the baseline, same run), then for as long as `revintel backup` runs: p50,
//            p99 and the longest acknowledgement of each phase — the server's pause is the longest;
//   backup   its time, files, bytes of data against the file's bytes, and the backup command's
//            peak RSS (it copies the files; the server only marks the start and the stop);
//   restore  `revintel restore` into a new directory (checksum, unpack, recovery, every table
//            counted): time, peak RSS, rows. (That every event acknowledged before the backup
//            began is restored is test/e2e/backup.test.ts's to show.)
// Targets (reported, never asserted): the server stops for no more than a moment (the longest ack
// during the backup within 1 s); the backup's and the restore's memory bounded by their buffers,
// not by the data (well under the data directory's size).
// Options: --quick, --customers N, --rate N, --seconds S, --build.
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import {
  cleanupAll,
  fmtInt,
  fmtMB,
  fmtMs,
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
  cpuMs,
} from './lib.ts';
import { ensureBinary, pacedAcks, revintelRunner } from './revintel.ts';

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    quick: { type: 'boolean', default: false },
    customers: { type: 'string' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    build: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) await printHeaderAndExit(import.meta.path);
const customers = positiveOption(opts.customers, opts.quick ? 2_000 : 100_000);
const rate = positiveOption(opts.rate, 200);
const seconds = positiveOption(opts.seconds, opts.quick ? 3 : 10);
const log = (line: string) => console.error(line);
stopOnSignal(log, () => undefined);

await ensureBinary(opts.build, log);
const workDir = makeTempDir('revintel-bench-backup-');
const run = revintelRunner({ workDir, logDir: workDir });
const env = { DATA_DIR: join(workDir, 'data') };

/** Waits until `pid` uses under a tenth of a core for 2 s (the demo's first scoring is done). */
async function settled(pid: number, limitMs = 900_000) {
  const deadline = performance.now() + limitMs;
  let before = cpuMs(pid) ?? 0;
  while (performance.now() < deadline) {
    await sleep(2_000);
    const now = cpuMs(pid) ?? 0;
    if (now - before < 200) return;
    before = now;
  }
  log('  warning: the server was still busy after 15 min');
}

const phase = (latencies: number[]) => ({
  n: latencies.length,
  p50: median(latencies),
  p99: quantile(latencies, 0.99),
  max: Math.max(...latencies),
});

try {
  log(`demo: ${fmtInt(customers)} customers`);
  let started = performance.now();
  const demo = await run.cli(['demo', '--customers', String(customers)], env, { timeoutMs: 3_600_000 });
  log(`  loaded in ${fmtSeconds(performance.now() - started)}`);
  const server = await run.start('serve', env);
  await settled(server.proc.pid);

  log(`acks at ${rate}/s: ${seconds} s idle, then during the backup`);
  const idleEnd = performance.now() + seconds * 1000;
  const idle = phase(await pacedAcks(server.base, demo.connector_id, rate, () => performance.now() > idleEnd));
  let backupDone = false;
  let backupRss = 0;
  started = performance.now();
  const backup = run
    .cli(['backup', join(workDir, 'bench.rvb')], env, {
      timeoutMs: 3_600_000,
      onSpawn: (proc) => {
        const rss = sampleRss(proc.pid);
        void proc.exited.then(() => (backupRss = rss.stop()));
      },
    })
    .finally(() => (backupDone = true));
  const during = phase(await pacedAcks(server.base, demo.connector_id, rate, () => backupDone));
  const made = await backup;
  const backupMs = performance.now() - started;
  await run.stop(server, 'serve', log);

  log('restore');
  const restoredEnv = { DATA_DIR: join(workDir, 'restored') };
  let restoreRss = 0;
  started = performance.now();
  const restored = await run.cli(['restore', join(workDir, 'bench.rvb')], restoredEnv, {
    timeoutMs: 3_600_000,
    onSpawn: (proc) => {
      const rss = sampleRss(proc.pid);
      void proc.exited.then(() => (restoreRss = rss.stop()));
    },
  });
  const restoreMs = performance.now() - started;
  await sleep(200); // the samplers' last reading

  console.log(`\nonline backup and restore, embedded database, demo at ${fmtInt(customers)} customers; webhooks at ${rate}/s\n`);
  console.log(
    table(
      ['acks', 'n', 'p50', 'p99', 'longest'],
      [
        ['idle (baseline)', fmtInt(idle.n), fmtMs(idle.p50 * 1000), fmtMs(idle.p99 * 1000), fmtMs(idle.max * 1000)],
        ['during the backup', fmtInt(during.n), fmtMs(during.p50 * 1000), fmtMs(during.p99 * 1000), fmtMs(during.max * 1000)],
      ],
    ),
  );
  console.log('');
  console.log(
    table(
      ['', 'time', 'files', 'data', 'file', 'peak RSS', 'rows'],
      [
        ['backup', fmtSeconds(backupMs), fmtInt(made.files), fmtMB(made.data_bytes / 1e6), fmtMB(made.bytes / 1e6), fmtMB(backupRss), '—'],
        [
          'restore',
          fmtSeconds(restoreMs),
          fmtInt(restored.files),
          fmtMB(restored.data_bytes / 1e6),
          fmtMB(restored.bytes / 1e6),
          fmtMB(restoreRss),
          fmtInt(restored.rows),
        ],
      ],
    ),
  );
  console.log(
    `\nticket events restored: ${fmtInt(restored.counts['public.ticket_events'])} (the demo's, the idle phase's ${fmtInt(idle.n)} and some of the ${fmtInt(during.n)} posted during the backup)`,
  );
} finally {
  await cleanupAll();
}
