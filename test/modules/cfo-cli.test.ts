// `revintel fx` and `revintel arr` from source, on the embedded database (the CLI takes DATA_DIR)
// and on PostgreSQL: a reporting currency and rates typed in and imported from a CSV, the history
// per currency and converted, the cohorts, and bad input as usage errors or named fields.
import { afterAll, describe, expect, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectPostgres, openEmbedded, type Database } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { utcToday } from '../../src/lib/today.ts';
import { monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import { runSourceCli } from '../helpers/binary.ts';
import { insertRow, tempDir, TEST_DATABASE_URL, uniqueName } from '../helpers/harness.ts';

const dataDir = tempDir('revintel-cfo-cli-');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const T = monthIndex(utcToday().slice(0, 7));
const m = (j: number) => monthOf(T - j);

const targets: { label: string; env: Record<string, string>; open: () => Promise<Database> }[] = [
  { label: 'embedded', env: { DATA_DIR: dataDir }, open: () => openEmbedded(dataDir, 'test') },
];
if (TEST_DATABASE_URL)
  targets.push({ label: 'postgres', env: { DATABASE_URL: TEST_DATABASE_URL }, open: async () => connectPostgres(TEST_DATABASE_URL!, 2) });

for (const target of targets) {
  describe(`arr and fx CLI (${target.label})`, () => {
    const cli = (args: string[], json = true) => runSourceCli(json ? [...args, '--json'] : args, { LOG_LEVEL: 'silent', ...target.env });

    test('rates set and imported, the history per currency and converted, the cohorts, bad input refused', async () => {
      const name = uniqueName('cfo');
      const org = await cli(['orgs', 'create', '--name', name, '--plan', 'enterprise']);
      expect(org.code).toBe(0);
      const orgId = org.json.id as string;
      const database = await target.open();
      try {
        await runMigrations(database, target.label === 'postgres' ? TEST_DATABASE_URL : null);
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
      const missing = await cli(['arr', '--from', m(1), '--currency', 'reporting', '--org', name]);
      expect(missing.json.missing_rates).toEqual([{ currency: 'USD', month: m(0) }]);

      const csv = join(dataDir, `rates-${target.label}.csv`);
      writeFileSync(csv, `month,currency,rate\n${m(0)},USD,0.95\n`);
      expect((await cli(['fx', 'import', csv, '--org', name])).json).toHaveLength(1);
      const converted = await cli(['arr', '--from', m(1), '--currency', 'reporting', '--org', name]);
      expect(converted.json.converted).toBe(true);
      expect(converted.json.series[0].months.map((x: { new: number; end_arr: number }) => [x.new, x.end_arr])).toEqual([
        [145_000, 145_000],
        [0, 147_500],
      ]);
      const table = await cli(['arr', '--from', m(1), '--org', name], false);
      expect(table.stdout).toContain('EUR');
      expect(table.stdout).toContain('1,000');
      const cohorts = await cli(['arr', '--cohorts', '--from', m(1), '--org', name]);
      expect(cohorts.json.cohorts.map((c: { currency: string; month: string }) => [c.currency, c.month])).toEqual([
        ['EUR', m(1)],
        ['USD', m(1)],
      ]);

      const badMonth = await cli(['arr', '--from', '2026-13', '--org', name]);
      expect(badMonth.code).toBe(2);
      const badRate = await cli(['fx', 'set', 'USD', m(0), 'abc', '--org', name]);
      expect([badRate.code, badRate.stderr]).toEqual([1, expect.stringContaining('must be a positive decimal')]);
    }, 300_000); // ten commands, each opening the database: seconds apiece on a busy machine
  });
}
