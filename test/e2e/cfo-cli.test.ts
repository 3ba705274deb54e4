// `revintel fx` and `revintel arr` through the compiled binary, on the embedded database (the CLI takes DATA_DIR)
// and on PostgreSQL: a reporting currency and rates typed in and imported from a CSV, the history
// converted, the cohorts, and a bad month as a usage error.
import { describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectPostgres, openEmbedded, type Database } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { utcToday } from '../../src/lib/today.ts';
import { createOrg } from '../../src/modules/orgs/service.ts';
import { monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import { runCli } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { insertRow, tempDir, TEST_DATABASE_URL, uniqueName } from '../helpers/harness.ts';

const { dirs } = e2eFile();
const dataDir = tempDir('revintel-cfo-cli-');
dirs.push(dataDir);
const T = monthIndex(utcToday().slice(0, 7));
const m = (j: number) => monthOf(T - j);

const targets: { label: string; env: Record<string, string>; open: () => Promise<Database> }[] = [
  { label: 'embedded', env: { DATA_DIR: dataDir }, open: () => openEmbedded(dataDir, 'test') },
];
if (TEST_DATABASE_URL)
  targets.push({ label: 'postgres', env: { DATABASE_URL: TEST_DATABASE_URL }, open: async () => connectPostgres(TEST_DATABASE_URL!, 2) });

for (const target of targets) {
  describe(`arr and fx CLI (${target.label})`, () => {
    const cli = (args: string[], json = true) => runCli(json ? [...args, '--json'] : args, { LOG_LEVEL: 'silent', ...target.env });

    test('rates set and imported, the history converted, the cohorts, a bad month refused', async () => {
      const name = uniqueName('cfo');
      const database = await target.open();
      let orgId: string;
      try {
        await runMigrations(database, target.label === 'postgres' ? TEST_DATABASE_URL : null);
        // Made here rather than by more commands: each one opens the database, seconds on a busy machine.
        orgId = (await database.db.transaction((tx) => createOrg(tx as never, { name, plan: 'enterprise', actor: 'test' }))).id;
        for (const [currency, amount] of [
          ['EUR', 100_000],
          ['USD', 50_000],
        ] as const) {
          const customerId = `cus_${currency}${orgId.slice(4, 20)}`;
          await insertRow(database.db, 'customers', { id: customerId, org_id: orgId, name: `${currency} customer`, currency });
          await insertRow(database.db, 'contracts', {
            id: `ctr_${currency}${orgId.slice(4, 20)}`,
            org_id: orgId,
            customer_id: customerId,
            name: 'Plan',
            currency,
            status: 'active',
            start_date: `${m(1)}-01`,
            billing_interval: 'year',
            amount,
          });
        }
      } finally {
        await database.close();
      }

      expect((await cli(['fx', 'reporting-currency', 'EUR', '--org', name])).json).toEqual({ reporting_currency: 'EUR' });
      const set = await cli(['fx', 'set', 'USD', m(1), '0.9', '--org', name]);
      expect(set.json).toEqual([{ month: m(1), currency: 'USD', quote_currency: 'EUR', rate: '0.9' }]);

      const csv = join(dataDir, `rates-${target.label}.csv`);
      writeFileSync(csv, `month,currency,rate\n${m(0)},USD,0.95\n`);
      expect((await cli(['fx', 'import', csv, '--org', name])).json).toHaveLength(1);
      const converted = await cli(['arr', '--from', m(1), '--currency', 'reporting', '--org', name]);
      expect(converted.json.converted).toBe(true);
      expect(converted.json.series[0].months.map((x: { new: number; end_arr: number }) => [x.new, x.end_arr])).toEqual([
        [145_000, 145_000],
        [0, 147_500],
      ]);
      const cohorts = await cli(['arr', '--cohorts', '--from', m(1), '--org', name], false);
      expect(cohorts.stdout).toMatch(new RegExp(`EUR +${m(1)} +1 +1,000 +100.0% / 100.0%`));
      expect(cohorts.stdout).toMatch(new RegExp(`USD +${m(1)} +1 +500 `));

      const badMonth = await cli(['arr', '--from', '2026-13', '--org', name]);
      expect([badMonth.code, badMonth.stderr]).toEqual([2, expect.stringContaining('--from must be a month')]);
    }, 300_000); // five commands that open the database: seconds apiece on a busy machine
  });
}
