// bun run bench:cfo [-- --customers 100000 --only postgres,embedded --months 36 --runs 5 --marked 10 --no-backtest]
// The CFO's ARR history at scale, in this process (no server): loads the demo at --customers into a
// fresh organisation on each backend, then times, median of --runs after one warm-up:
//   history   GET /api/cfo/arr's work over --months months, every currency (arrHistory)
//   stored    the same history from the stored month sums (cfo-history/stored-sums.ts): their
//             rebuild (one run), a read, a read with --marked customers marked changed (recomputed
//             by the read; the marks are written straight, so the organisation's data stays as it
//             was), and the fold of those marks (one run)
//   cohorts   GET /api/cfo/cohorts' work over the last 12 cohorts
//   baseline  the same closes the obvious way, in the same run: every close's customers from the
//             point-in-time rebuild (revintel_contracts_at at each month's last day, --months + 1
//             of them), each customer's ARR compared with the close before, summed per month and
//             currency — without new vs reactivation or retention, so a lower bound of its cost.
//   forecast  GET /api/cfo/forecast's work, 12 months, every currency (cfoForecast): computed per
//             request; from the stored month sums and features as the route reads them (the
//             features' rebuild, once), and so with --marked customers marked in both; with the
//             bands kept (keepForecasts) as the route keeps them, unchanged and with EUR's book
//             taken as changed (its bands made again each run); and of it the
//             bands alone (groups by dynamic programme multiplied by FFT, retainedDistribution), with
//             the largest error bound stated over the book, beside the baseline: the same bands by
//             one dynamic programme capped at 4·10⁶ cell updates (the method before the FFT)
//   backtest  the forecast backtest, 12 origins × 12 months (forecastBacktest), one run, with the
//             process's peak resident memory after it (--no-backtest leaves it out: at 100,000
//             customers it is minutes of model fitting)
// Each figure: wall time, and CPU time (this process plus, on PostgreSQL, the backend serving its one
// connection, from /proc): on a shared machine the CPU says what the work costs, the wall what
// the load around it made of it. Reported, never asserted. PostgreSQL: TEST_DATABASE_URL or --database-url (the organisation is
// deleted afterwards; --org ORG_ID measures an organisation already there and keeps it); embedded:
// a temporary PGlite directory.
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { connectPostgres, openEmbedded, rowsOf, type Database } from '../src/db/client.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { loadDemo } from '../src/modules/demo/service.ts';
import { arrHistory, type SumsReader } from '../src/modules/cfo-history/history.ts';
import { refreshStoredSums } from '../src/modules/cfo-history/stored-sums.ts';
import { storedSums } from '../src/modules/cfo-history/sums-reader.ts';
import { cohorts } from '../src/modules/cfo-history/cohorts.ts';
import { closingDay, monthIndex, monthOf } from '../src/modules/cfo-history/months.ts';
import {
  bookAt,
  cfoForecast,
  forecastBook,
  forecastModel,
  keepForecasts,
  type BookCustomer,
  type BookReader,
} from '../src/modules/cfo-forecast/forecast.ts';
import { featuresStanding, refreshStoredFeatures, storedBook } from '../src/modules/cfo-forecast/stored-features.ts';
import { DEFAULT_LIMITS, type GridLimits } from '../src/modules/cfo-forecast/distribution.ts';
import { forecastBacktest } from '../src/modules/cfo-forecast/backtest.ts';
import { cpuMs, makeTempDir, median, positiveOption, removeTempDir, table } from './lib.ts';
import { DEFAULT_ACTION_SETTINGS } from '../src/modules/agent-actions/settings.ts';

const { values: opts } = parseArgs({
  options: {
    customers: { type: 'string' },
    only: { type: 'string' },
    months: { type: 'string' },
    runs: { type: 'string' },
    'database-url': { type: 'string' },
    org: { type: 'string' },
    marked: { type: 'string' },
    'no-backtest': { type: 'boolean' },
  },
});
const markedCount = positiveOption(opts.marked, 10);
const customers = positiveOption(opts.customers, 100_000);
const months = positiveOption(opts.months, 36);
const runs = positiveOption(opts.runs, 5);
const databaseUrl = opts['database-url'] ?? process.env.TEST_DATABASE_URL ?? null;
const only = new Set((opts.only ?? 'postgres,embedded').split(','));
const today = new Date().toISOString().slice(0, 10);
const to = today.slice(0, 7);
const from = monthOf(monthIndex(to) - months + 1);
const log = (line: string) => console.error(line);

/** CPU ms used so far by this process and the database backend `backendPid` (if any). */
const cpuNow = (backendPid: number | null) => {
  const own = process.cpuUsage();
  return (own.user + own.system) / 1000 + (backendPid === null ? 0 : (cpuMs(backendPid) ?? NaN));
};

async function timed(fn: () => Promise<unknown>, backendPid: number | null): Promise<{ wall: number; cpu: number }> {
  await fn();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const [started, cpuStarted] = [performance.now(), cpuNow(backendPid)];
    await fn();
    wall.push(performance.now() - started);
    cpu.push(cpuNow(backendPid) - cpuStarted);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

const shown = (t: { wall: number; cpu: number }) => `${t.wall.toFixed(0)} ms (CPU ${t.cpu.toFixed(0)} ms)`;

function baseline(database: Database, orgId: string) {
  const closes = [];
  for (let k = monthIndex(from) - 1; k <= monthIndex(to); k++) closes.push(closingDay(monthOf(k), today));
  return database.db.execute(sql`
    with closes as (select d.close, row_number() over (order by d.close) as i from unnest(${`{${closes.join(',')}}`}::date[]) d(close)),
    arr as (
      select c.i, k.customer_id, k.currency, sum(k.arr) as arr
      from closes c cross join lateral revintel_contracts_at(${orgId}, c.close) k where k.counted group by 1, 2, 3
    ),
    pairs as (
      select coalesce(b.i, a.i + 1) as i, coalesce(a.currency, b.currency) as currency, coalesce(a.arr, 0) as before, coalesce(b.arr, 0) as after
      from arr a full join arr b on b.customer_id = a.customer_id and b.currency = a.currency and b.i = a.i + 1
    )
    select i, currency, sum(after) filter (where before = 0) as new, sum(after - before) filter (where before > 0 and after > before) as expansion,
           sum(before - after) filter (where after > 0 and after < before) as contraction, sum(before) filter (where after = 0) as churn
    from pairs where i > 1 and i <= ${closes.length} group by 1, 2`);
}

const rows: string[][] = [];
const forecastRows: string[][] = [];
for (const backend of (['postgres', 'embedded'] as const).filter((b) => only.has(b))) {
  if (backend === 'postgres' && !databaseUrl) {
    log('postgres: skipped (no TEST_DATABASE_URL or --database-url)');
    continue;
  }
  const dir = backend === 'embedded' ? makeTempDir('cfo') : null;
  const database =
    backend === 'postgres'
      ? connectPostgres(databaseUrl!, 1, { timeoutMs: 3_600_000 })
      : await openEmbedded(dir!, 'bench', { timeoutMs: 3_600_000 });
  try {
    await runMigrations(database, backend === 'postgres' ? databaseUrl : null);
    const kept = backend === 'postgres' ? opts.org : undefined;
    const loadStarted = performance.now();
    if (!kept) log(`${backend}: loading the demo at ${customers.toLocaleString('en-US')} customers…`);
    const orgId =
      kept ??
      (
        await database.db.transaction((tx) =>
          loadDemo(
            tx as never,
            { orgName: `bench-cfo-${Date.now()}`, customers, seed: 42, today, actor: 'bench' },
            DEFAULT_ACTION_SETTINGS,
          ),
        )
      ).org.id;
    for (const name of ['contracts', 'contract_revisions', 'customers']) await database.db.execute(sql.raw(`analyze ${name}`));
    const [size] = rowsOf<{ revisions: number }>(
      await database.db.execute(sql`select count(*)::int as revisions from contract_revisions where org_id = ${orgId}`),
    );
    log(
      `${backend}: loaded in ${((performance.now() - loadStarted) / 1000).toFixed(0)} s, ${size!.revisions.toLocaleString('en-US')} revisions`,
    );
    const backendPid =
      backend === 'postgres' ? rowsOf<{ pid: number }>(await database.db.execute(sql`select pg_backend_pid() as pid`))[0]!.pid : null;
    const history = await timed(() => arrHistory(database.db, { orgId, from, to, today, reportingCurrency: null }), backendPid);
    // The stored month sums: built, read, read with customers marked, the marks folded in.
    const once = async (fn: () => Promise<unknown>) => {
      const [started, cpuStarted] = [performance.now(), cpuNow(backendPid)];
      await fn();
      return { wall: performance.now() - started, cpu: cpuNow(backendPid) - cpuStarted };
    };
    const refresh = () => refreshStoredSums(database.db, { orgId, today });
    await database.db.execute(sql`delete from cfo_sums_state where org_id = ${orgId}`);
    const rebuildMs = await once(refresh);
    const noFallback: SumsReader = () => Promise.reject(new Error('the stored sums fell back to the live query'));
    const stored = () => arrHistory(database.db, { orgId, from, to, today, reportingCurrency: null }, storedSums(noFallback));
    const storedMs = await timed(stored, backendPid);
    const markSome = () =>
      database.db.execute(sql`insert into cfo_sums_changes (org_id, customer_id)
        select org_id, id from customers where org_id = ${orgId} order by random() limit ${markedCount}
        on conflict (org_id, customer_id) do update set seq = nextval(pg_get_serial_sequence('cfo_sums_changes', 'seq'))`);
    await markSome();
    const markedMs = await timed(stored, backendPid);
    const foldMs = await once(refresh);
    await markSome();
    const cohortsMs = await timed(() => cohorts(database.db, { orgId, from: monthOf(monthIndex(to) - 11), to, today }), backendPid);
    const baselineMs = await timed(() => baseline(database, orgId), backendPid);
    const forecastInput = { orgId, today, months: 12, reportingCurrency: null, graceDays: 30, priorAnnualChurn: 0.12 };
    const forecastMs = await timed(() => cfoForecast(database.db, forecastInput), backendPid);
    // From the stored month sums and features (as the route reads them): built, read, read with
    // customers marked in both.
    await database.db.execute(sql`delete from cfo_features_state where org_id = ${orgId}`);
    const featuresRebuildMs = await once(() => refreshStoredFeatures(database.db, { orgId, today, graceDays: forecastInput.graceDays }));
    const storedOnly: BookReader = async (db, input) => {
      const standing = await featuresStanding(db, { orgId: input.orgId, today: input.day, graceDays: input.graceDays });
      if (!standing.current) throw new Error('the stored features are not current');
      return storedBook(db, { orgId: input.orgId, today: input.day, graceDays: input.graceDays, model: input.model });
    };
    await database.db.execute(sql`delete from cfo_sums_changes where org_id = ${orgId}`);
    await refresh();
    const forecastStored = () => cfoForecast(database.db, forecastInput, storedSums(noFallback), storedOnly);
    const forecastStoredMs = await timed(forecastStored, backendPid);
    await markSome();
    await database.db.execute(sql`insert into cfo_feature_changes (org_id, customer_id)
      select org_id, customer_id from cfo_sums_changes where org_id = ${orgId}
      on conflict (org_id, customer_id) do update set seq = nextval(pg_get_serial_sequence('cfo_feature_changes', 'seq'))`);
    const forecastMarkedMs = await timed(forecastStored, backendPid);
    // With the bands kept (keepForecasts, as the route): nothing changed since, then one currency's
    // book changed (its bands made again, the other two kept).
    const keptBands = keepForecasts();
    const forecastKeptMs = await timed(
      () => cfoForecast(database.db, forecastInput, storedSums(noFallback), storedOnly, keptBands),
      backendPid,
    );
    // The currencies' books come in order (EUR, GBP, USD): the first of each forecast's three is made again.
    let books = 0;
    const oneChanged: typeof forecastBook = (book, input) => (books++ % 3 === 0 ? forecastBook(book, input) : keptBands(book, input));
    const forecastOneMs = await timed(
      () => cfoForecast(database.db, forecastInput, storedSums(noFallback), storedOnly, oneChanged),
      backendPid,
    );
    // The bands alone: the same book's months again, without the database.
    const book = (await cfoForecast(database.db, forecastInput)).series.map((s) => s.customers);
    // The bands alone, each currency's 12 months: the FFT's, and the capped dynamic programme's.
    const model = await forecastModel(database.db, orgId, 0.12);
    const customersNow = await bookAt(database.db, { orgId, day: today, graceDays: 30, model: model.parameters });
    const bands = (limitsOf: (book: BookCustomer[]) => GridLimits) => {
      let worst = 0;
      const started = performance.now();
      for (const currency of new Set(customersNow.map((c) => c.currency))) {
        const book = customersNow.filter((c) => c.currency === currency);
        const arr = book.reduce((s, c) => s + c.arr, 0);
        for (const month of forecastBook(book, { today, months: 12, expansionRate: null, limits: limitsOf(book) }))
          worst = Math.max(worst, month.error_bound / arr);
      }
      return { ms: performance.now() - started, worst };
    };
    const fft = bands(() => DEFAULT_LIMITS);
    // Before the FFT: one dynamic programme of at most 4·10⁶ cell updates, a step of at least 0.1 % of the book.
    const dp = bands((book) => {
      const cells = Math.max(1000, Math.floor(4_000_000 / book.length));
      return { exactCells: cells, errorShare: 0, maxCells: cells, groupSize: Number.MAX_SAFE_INTEGER };
    });
    const backtestStarted = [performance.now(), cpuNow(backendPid)] as const;
    if (!opts['no-backtest'])
      await forecastBacktest(database.db, {
        orgId,
        today,
        origins: 12,
        horizon: 12,
        settings: { graceDays: 30, priorAnnualChurn: 0.12, lookbackDays: 730 },
      });
    const backtestMs = { wall: performance.now() - backtestStarted[0], cpu: cpuNow(backendPid) - backtestStarted[1] };
    forecastRows.push([
      backend,
      customers.toLocaleString('en-US'),
      book.join(' / '),
      shown(forecastMs),
      shown(featuresRebuildMs),
      shown(forecastStoredMs),
      shown(forecastMarkedMs),
      shown(forecastKeptMs),
      shown(forecastOneMs),
      `${fft.ms.toFixed(0)} ms, bound ${(fft.worst * 100).toFixed(4)} %`,
      `${dp.ms.toFixed(0)} ms, bound ${(dp.worst * 100).toFixed(4)} %`,
      opts['no-backtest'] ? '(left out)' : shown(backtestMs),
      `${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`,
    ]);
    rows.push([
      backend,
      kept ? '(kept)' : customers.toLocaleString('en-US'),
      size!.revisions.toLocaleString('en-US'),
      shown(history),
      shown(rebuildMs),
      shown(storedMs),
      shown(markedMs),
      shown(foldMs),
      shown(cohortsMs),
      shown(baselineMs),
      `${(baselineMs.cpu / history.cpu).toFixed(1)}x`,
    ]);
    if (backend === 'postgres' && !kept) await database.db.execute(sql`delete from organisations where id = ${orgId}`);
  } finally {
    await database.close();
    if (dir) removeTempDir(dir);
  }
}
console.log(
  table(
    [
      'backend',
      'customers',
      'revisions',
      `history (${months} months)`,
      'stored: rebuild (once)',
      'history, stored',
      `history, stored, ${markedCount} marked`,
      `fold of ${markedCount} (once)`,
      'cohorts (12)',
      `baseline (${months + 1} rebuilds)`,
      'baseline ÷ history (CPU)',
    ],
    rows,
  ),
);
console.log(
  table(
    [
      'backend',
      'customers',
      'book per currency',
      'forecast (12 months)',
      'stored features: rebuild (once)',
      'forecast, stored',
      `forecast, stored, ${markedCount} marked`,
      '… bands kept',
      '… one currency changed',
      'bands alone (FFT), bound ÷ book',
      'baseline: one DP ≤ 4·10⁶ cells',
      'backtest (12 × 12, one run)',
      'memory after (RSS)',
    ],
    forecastRows,
  ),
);
console.log(
  `medians of ${runs} runs after a warm-up, ${today}; load average ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
