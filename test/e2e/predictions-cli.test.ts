// `revintel predictions` through the compiled binary, on the embedded database (the CLI takes DATA_DIR) and on
// PostgreSQL: a recompute is queued once, the list shows the riskiest first with the summary, a
// prediction shows every driver, bad options are usage errors.
import { describe, expect, test } from 'bun:test';
import { connectPostgres, openEmbedded, type Database } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { recomputePredictions } from '../../src/modules/predictions/service.ts';
import { FEATURE_KEYS } from '../../src/modules/predictions/features.ts';
import { DRIVER_GROUPS } from '../../src/modules/predictions/model.ts';
import { addDays } from '../../src/modules/predictions/training.ts';
import { utcToday } from '../../src/lib/today.ts';
import { runCli } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { insertRow, tempDir, TEST_DATABASE_URL, uniqueName } from '../helpers/harness.ts';

const { dirs } = e2eFile();
const dataDir = tempDir('revintel-predictions-cli-');
dirs.push(dataDir);

const targets: { label: string; env: Record<string, string>; open: () => Promise<Database> }[] = [
  { label: 'embedded', env: { DATA_DIR: dataDir }, open: () => openEmbedded(dataDir, 'test') },
];
if (TEST_DATABASE_URL)
  targets.push({ label: 'postgres', env: { DATABASE_URL: TEST_DATABASE_URL }, open: async () => connectPostgres(TEST_DATABASE_URL!, 2) });

for (const target of targets) {
  describe(`predictions CLI (${target.label})`, () => {
    const cli = (args: string[], json = true) => runCli(json ? [...args, '--json'] : args, { LOG_LEVEL: 'silent', ...target.env });
    async function withDatabase<T>(fn: (database: Database) => Promise<T>): Promise<T> {
      const database = await target.open();
      try {
        await runMigrations(database, target.label === 'postgres' ? TEST_DATABASE_URL : null);
        return await fn(database);
      } finally {
        await database.close();
      }
    }

    test('recompute is queued once; list and show read the predictions; bad options are usage errors', async () => {
      const name = uniqueName('pred');
      const org = await cli(['orgs', 'create', '--name', name, '--plan', 'enterprise']);
      expect(org.code).toBe(0);
      const orgId = org.json.id as string;
      const customerId = `cus_${orgId.slice(4, 20)}`;
      const today = utcToday();
      await withDatabase(async ({ db }) => {
        await insertRow(db, 'customers', { id: customerId, org_id: orgId, name: 'Acme Renewals', currency: 'EUR' });
        await insertRow(db, 'contracts', {
          id: `ctr_${orgId.slice(4, 20)}`,
          org_id: orgId,
          customer_id: customerId,
          name: 'Plan',
          currency: 'EUR',
          status: 'active',
          start_date: addDays(today, -300),
          end_date: addDays(today, 20),
          billing_interval: 'year',
          amount: 5_000_000,
        });
      });

      const queued = await cli(['predictions', 'recompute', '--org', name]);
      expect(queued.code).toBe(0);
      expect(queued.json).toMatchObject({ org_id: orgId, queued_already: false });
      expect((await cli(['predictions', 'recompute', '--org', name])).json).toMatchObject({
        job_id: queued.json.job_id,
        queued_already: true,
      });

      // What the worker would do with the job.
      await withDatabase(({ db }) => db.transaction((tx) => recomputePredictions(tx as never, { orgId, today })));
      const list = await cli(['predictions', 'list', '--org', name]);
      expect(list.code).toBe(0);
      expect(list.json.items).toHaveLength(1);
      expect(list.json.items[0]).toMatchObject({ customer_id: customerId, currency: 'EUR', arr: 5_000_000 });
      expect(list.json.meta.summary).toEqual([expect.objectContaining({ currency: 'EUR', customers: 1, total_arr: 5_000_000 })]);
      const text = await cli(['predictions', 'list', '--org', name], false);
      expect(text.stdout).toContain('Acme Renewals');
      expect(text.stdout).toContain('Renewal in 20 days, no auto-renew');

      const shown = await cli(['predictions', 'show', customerId, '--org', name]);
      expect(shown.json.drivers).toHaveLength(DRIVER_GROUPS.length);
      expect(shown.json.drivers.flatMap((d: any) => d.features.map((f: any) => f.feature)).sort()).toEqual([...FEATURE_KEYS].sort());
      const shownText = await cli(['predictions', 'show', customerId, '--org', name], false);
      expect(shownText.stdout).toContain('Renewal in 20 days, no auto-renew');
      expect(shownText.stdout).toMatch(/\+\d+\.\d pp/);
      const missing = await cli(['predictions', 'show', 'cus_nope', '--org', name]);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr + missing.stdout).toContain('Customer cus_nope not found');
      const bad = await cli(['predictions', 'list', '--org', name, '--risk', 'severe']);
      expect(bad.code).toBe(2);
      expect(bad.stderr + bad.stdout).toContain('--risk must be a comma list');
    });

    test('backtest runs on the demo and prints its report; --retrain queues a retrain; bad options are usage errors', async () => {
      const name = uniqueName('backtest');
      const demo = await cli(['demo', '--customers', '300', '--org', name]);
      expect(demo.code).toBe(0);
      // Scored by the time the command ends, and a retrain on its history queued.
      expect((await cli(['predictions', 'list', '--org', name])).json.items.length).toBeGreaterThan(0);
      expect((await cli(['jobs', 'show', demo.json.retrain_job_id])).json).toMatchObject({ kind: 'predictions.train' });
      const report = await cli(['backtest', '--org', name, '--method', 'cross_validation', '--horizon', '60']);
      expect(report.code).toBe(0);
      expect(report.json).toMatchObject({ status: 'succeeded', method: 'cross_validation', horizon_days: 60, requested_by: 'cli' });
      expect(report.json.metrics.rows).toBe(report.json.metrics.customers);
      const text = await cli(['backtest', '--org', name], false);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain('top-decile lift');
      // The scorecard's AUC with its interval beside the model's, and what the comparison means.
      expect(text.stdout).toMatch(/scorecard AUC +\d\.\d{3} \(95% \d\.\d{3}–\d\.\d{3}\)/);
      expect(text.stdout).toMatch(/the scorecard/);
      expect(text.stdout).toMatch(/rows \d+, churn events \d+/);
      const retrain = await cli(['predictions', 'recompute', '--retrain', '--org', name]);
      expect(retrain.code).toBe(0);
      const job = await cli(['jobs', 'show', retrain.json.job_id]);
      expect(job.json).toMatchObject({ kind: 'predictions.train', state: 'queued' });
      const bad = await cli(['backtest', '--org', name, '--method', 'magic']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--method must be out_of_time or cross_validation');
      const late = await cli(['backtest', '--org', name, '--cutoff', utcToday()]);
      expect(late.code).not.toBe(0);
      expect(late.stderr + late.stdout).toContain('cutoff');
      expect(late.stderr + late.stdout).toContain('the last day whose outcome is known');
    });
  });
}
