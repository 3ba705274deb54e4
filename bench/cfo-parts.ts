// bun run bench:cfo-parts [-- --customers 10000 --only embedded,postgres --sizes 10,25,50,100,200]
// The CFO's stored sums and features refreshed in parts (cfo-history/stored-sums.ts,
// cfo-forecast/stored-features.ts), on a demo loaded at --customers: each part's transaction timed
// (what it holds the embedded database for, as db/units-of-work.ts times units). Reports, per
// refresh: a rebuild with the parts at their default bounds (the marking parts, the longest and
// the median fold, the total), and the median part at each of --sizes customers (five parts each, after
// a rebuild's marks), beside one fold of 10 marked customers. Reported, never asserted.
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { connectPostgres, openEmbedded } from '../src/db/client.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { DEFAULT_ACTION_SETTINGS } from '../src/modules/agent-actions/settings.ts';
import { FEATURES_PART_MAX, MARK_FEATURES_PART_MAX, refreshFeaturesPart } from '../src/modules/cfo-forecast/stored-features.ts';
import { MARK_PART_MAX, refreshSumsPart, SUMS_PART_MAX } from '../src/modules/cfo-history/stored-sums.ts';
import { loadDemo } from '../src/modules/demo/service.ts';
import { makeTempDir, median, positiveOption, removeTempDir, table } from './lib.ts';

const { values: opts } = parseArgs({
  options: { customers: { type: 'string' }, only: { type: 'string' }, sizes: { type: 'string' } },
});
const customers = positiveOption(opts.customers, 10_000);
const sizes = (opts.sizes ?? '10,25,50,100,200').split(',').map(Number);
const databaseUrl = process.env.TEST_DATABASE_URL ?? null;
const today = new Date().toISOString().slice(0, 10);
const rows: string[][] = [];

for (const backend of (opts.only ?? 'embedded').split(',') as ('embedded' | 'postgres')[]) {
  const dir = backend === 'embedded' ? makeTempDir('cfo-parts') : null;
  const database = dir
    ? await openEmbedded(dir, 'bench', { timeoutMs: 3_600_000 })
    : connectPostgres(databaseUrl!, 1, { timeoutMs: 3_600_000 });
  await runMigrations(database, dir ? null : databaseUrl);
  const demo = await database.db.transaction((tx) =>
    loadDemo(
      tx as never,
      { orgName: `bench-cfo-parts-${Date.now()}`, customers, seed: 42, today, actor: 'bench' },
      DEFAULT_ACTION_SETTINGS,
    ),
  );
  const orgId = demo.org.id;
  for (const name of ['contracts', 'contract_revisions', 'customers']) await database.db.execute(sql.raw(`analyze ${name}`));
  const refreshes = [
    { name: 'sums', max: SUMS_PART_MAX, markMax: MARK_PART_MAX, state: 'cfo_sums_state', marks: 'cfo_sums_changes', part: refreshSumsPart },
    {
      name: 'features',
      max: FEATURES_PART_MAX,
      markMax: MARK_FEATURES_PART_MAX,
      state: 'cfo_features_state',
      marks: 'cfo_feature_changes',
      part: refreshFeaturesPart,
    },
  ];
  for (const r of refreshes) {
    const part = async (limit: number, after: string | null = null) => {
      const started = performance.now();
      const args = { orgId, today, graceDays: 30, limit, markLimit: r.markMax, after };
      const result = await database.db.transaction((tx) => r.part(tx as never, args));
      return { ...result, ms: performance.now() - started };
    };
    const rebuild = async () => {
      await database.db.execute(sql.raw(`delete from ${r.state} where org_id = '${orgId}'`));
      const started = performance.now();
      const marking: number[] = [];
      let p = await part(r.max);
      for (marking.push(p.ms); p.step === 'marking'; marking.push(p.ms)) p = await part(r.max, p.after);
      const folds: number[] = [];
      while (p.more) folds.push((p = await part(r.max)).ms);
      return { marking, folds, total: performance.now() - started };
    };
    await rebuild(); // the first build, then one measured
    const built = await rebuild();
    rows.push([
      backend,
      r.name,
      `rebuild, parts of ${r.max}`,
      `marking: ${built.marking.length} parts, longest ${Math.max(...built.marking).toFixed(0)} ms`,
      `${Math.max(...built.folds).toFixed(0)} ms`,
      `${median(built.folds).toFixed(0)} ms`,
      `${(built.total / 1000).toFixed(1)} s (${built.folds.length + 1} parts)`,
    ]);
    await database.db.execute(sql.raw(`delete from ${r.state} where org_id = '${orgId}'`));
    // Every customer marked: the parts below fold customers of a new day.
    for (let p = await part(r.max); p.step === 'marking'; ) p = await part(r.max, p.after);
    for (const size of sizes) {
      const ms: number[] = [];
      for (let i = 0; i < 5; i++) ms.push((await part(size)).ms);
      rows.push([backend, r.name, `part of ${size}`, '', `${Math.max(...ms).toFixed(0)} ms`, `${median(ms).toFixed(0)} ms`, '']);
    }
    for (let p = { more: true }; p.more; ) p = await part(r.max);
    const ten: number[] = [];
    for (let i = 0; i < 5; i++) {
      await database.db.execute(
        sql.raw(`insert into ${r.marks} (org_id, customer_id)
        select org_id, id from customers where org_id = '${orgId}' order by random() limit 10 on conflict do nothing`),
      );
      ten.push((await part(r.max)).ms);
    }
    rows.push([backend, r.name, 'fold of 10 marked', '', `${Math.max(...ten).toFixed(0)} ms`, `${median(ten).toFixed(0)} ms`, '']);
    console.error(rows.at(-1)!.join(' | '));
  }
  if (!dir) await database.db.execute(sql`delete from organisations where id = ${orgId}`);
  await database.close();
  if (dir) removeTempDir(dir);
}
console.log(table(['backend', 'refresh', 'what', '', 'longest', 'median', 'total'], rows));
process.exit(0);
