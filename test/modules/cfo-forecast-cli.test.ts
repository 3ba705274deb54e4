// `revintel forecast` and `revintel forecast backtest` from source, on the embedded database and on
// PostgreSQL: the forecast of a two-customer book in both forms, the backtest, and a bad count
// refused as a usage error.
import { afterAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { connectPostgres, openEmbedded, type Database } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { utcToday } from '../../src/lib/today.ts';
import { createOrg } from '../../src/modules/orgs/service.ts';
import { monthIndex, monthOf } from '../../src/modules/cfo-history/months.ts';
import type { Forecast } from '../../src/modules/cfo-forecast/forecast.ts';
import type { ForecastBacktest } from '../../src/modules/cfo-forecast/backtest.ts';
import { runSourceCli } from '../helpers/binary.ts';
import { insertRow, tempDir, TEST_DATABASE_URL, uniqueName } from '../helpers/harness.ts';

const dataDir = tempDir('revintel-forecast-cli-');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const T = monthIndex(utcToday().slice(0, 7));

const targets: { label: string; env: Record<string, string>; open: () => Promise<Database> }[] = [
  { label: 'embedded', env: { DATA_DIR: dataDir }, open: () => openEmbedded(dataDir, 'test') },
];
if (TEST_DATABASE_URL)
  targets.push({ label: 'postgres', env: { DATABASE_URL: TEST_DATABASE_URL }, open: async () => connectPostgres(TEST_DATABASE_URL!, 2) });

for (const target of targets) {
  describe(`forecast CLI (${target.label})`, () => {
    const cli = (args: string[]) => runSourceCli(args, { LOG_LEVEL: 'silent', ...target.env });

    test('the forecast as JSON and as a table, the backtest, a bad count refused', async () => {
      const name = uniqueName('forecast');
      const database = await target.open();
      try {
        await runMigrations(database, target.label === 'postgres' ? TEST_DATABASE_URL : null);
        const orgId = (await database.db.transaction((tx) => createOrg(tx as never, { name, plan: 'enterprise', actor: 'test' }))).id;
        for (const [label, amount] of [
          ['a', 100_000],
          ['b', 50_000],
        ] as const) {
          const customerId = `cus_${label}${orgId.slice(4, 20)}`;
          await insertRow(database.db, 'customers', { id: customerId, org_id: orgId, name: `Customer ${label}`, currency: 'EUR' });
          await insertRow(database.db, 'contracts', {
            id: `ctr_${label}${orgId.slice(4, 20)}`,
            org_id: orgId,
            customer_id: customerId,
            name: 'Plan',
            currency: 'EUR',
            status: 'active',
            start_date: `${monthOf(T - 3)}-01`,
            end_date: `${monthOf(T + 1)}-10`,
            billing_interval: 'year',
            amount,
          });
        }
      } finally {
        await database.close();
      }
      const json = await cli(['forecast', '--months', '2', '--org', name, '--json']);
      expect(json.code).toBe(0);
      const [eur] = (json.json as Forecast).series;
      expect([eur?.currency, eur?.customers, eur?.book_arr, eur?.months.length]).toEqual(['EUR', 2, 150_000, 2]);
      // Both terms end next month: at its close each customer has had its one draw; all kept at the top.
      expect(eur?.months[0]?.p95).toBe(150_000);
      const table = await cli(['forecast', '--months', '1', '--org', name]);
      expect(table.stdout).toContain('80% band');
      const backtest = await cli(['forecast', 'backtest', '--origins', '2', '--horizon', '1', '--org', name, '--json']);
      const report = backtest.json as ForecastBacktest;
      expect([backtest.code, report.origins, report.horizon]).toEqual([0, 2, 1]);
      const bad = await cli(['forecast', '--months', '30', '--org', name]);
      expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--months must be a whole number from 1 to 24')]);
    }, 600_000);
  });
}
