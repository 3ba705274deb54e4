// `revintel import` through the CLI (the compiled binary) on both backends: good, bad and mixed rows
// with their report, references between records, dates, re-runs, and files that cannot be read.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { openEmbedded, rowsOf } from '../../src/db/client.ts';
import { runCli } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { BACKENDS, createOrgWithKey, openTestDatabase, TEST_DATABASE_URL, tempDir } from '../helpers/harness.ts';

const FIXTURES = join(import.meta.dir, '../fixtures/import');

e2eFile();

const cli = (args: string[], env: Record<string, string>) => runCli(args, { LOG_LEVEL: 'silent', ...env });

for (const backend of BACKENDS) {
  describe(`revintel import (${backend})`, () => {
    let env: Record<string, string>;
    let orgId: string;
    let dir: string;
    let query: <T>(text: ReturnType<typeof sql>) => Promise<T[]>;
    const cleanups: (() => Promise<void> | void)[] = [];

    beforeAll(async () => {
      dir = tempDir();
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      if (backend === 'postgres') {
        const database = await openTestDatabase('postgres');
        cleanups.push(() => database.dispose());
        orgId = (await createOrgWithKey(database)).org.id;
        env = { DATABASE_URL: TEST_DATABASE_URL! };
        query = async (q) => rowsOf(await database.db.execute(q));
      } else {
        env = { DATA_DIR: join(dir, 'data') };
        const made = await cli(['orgs', 'create', '--name', 'Importer', '--plan', 'enterprise', '--json'], env);
        expect(made.code).toBe(0);
        orgId = made.json.id;
        // The CLI holds DATA_DIR while it runs; look at the result between runs.
        query = async (q) => {
          const database = await openEmbedded(env.DATA_DIR!, 'test');
          try {
            return rowsOf(await database.db.execute(q));
          } finally {
            await database.close();
          }
        };
      }
    });
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    const run = (entity: string, file: string, ...extra: string[]) =>
      cli(['import', entity, join(FIXTURES, file), '--org', orgId, '--json', ...extra], env);

    test('a mixed file imports its good rows, reports the bad ones by row, and exits 3', async () => {
      const result = await run('customers', 'customers-mixed.csv');
      expect(result.code).toBe(3);
      expect(result.json).toMatchObject({ entity: 'customers', org_id: orgId, rows: 8, created: 3, updated: 1, unchanged: 0, rejected: 4 });
      expect(result.json.rejected_rows.map((r: { row: number }) => r.row)).toEqual([4, 5, 6, 7]);
      expect(result.json.rejected_rows[0].reason).toContain('currency');
      const rows = await query<{ external_id: string; name: string; metadata: { plan?: string }; csm: unknown }>(
        sql`select external_id, name, metadata, csm from customers where org_id = ${orgId} order by external_id`,
      );
      expect(rows.map((r) => r.external_id)).toEqual(['crm-1', 'crm-2', 'crm-3']);
      expect(rows[0]).toMatchObject({
        name: 'Acme, Inc.',
        metadata: { plan: 'platinum' },
        csm: { name: 'Dana Whitfield', email: 'dana@example.com' },
      });
      expect(rows[2]!.name).toBe('Gamma\r\nHoldings');
    });

    test('contracts and invoices find their customers and contracts by external id; the currency rule holds', async () => {
      const contracts = await run('contracts', 'contracts.json');
      expect(contracts.code).toBe(3);
      expect(contracts.json).toMatchObject({ rows: 6, created: 3, rejected: 3 });
      expect(contracts.json.rejected_rows).toEqual([
        { row: 3, reason: 'customer_external_id "nobody" is not a customer of this organisation' },
        { row: 4, reason: 'is not a JSON object' },
        { row: 5, reason: expect.stringContaining("currency EUR is not the customer's currency GBP") },
      ]);
      const invoices = await run('invoices', 'invoices.ndjson');
      expect(invoices.json).toMatchObject({ rows: 5, created: 3, rejected: 2 });
      expect(invoices.json.rejected_rows.map((r: { row: number }) => r.row)).toEqual([3, 4]);
      const [paid] = await query<{ customer: string; contract: string; currency: string; issued: string; paid: string }>(sql`
        select c.external_id as customer, k.external_id as contract, i.currency, i.issued_at::text as issued, (i.paid_at at time zone 'UTC')::text as paid
        from invoices i join customers c on c.id = i.customer_id join contracts k on k.id = i.contract_id
        where i.org_id = ${orgId} and i.external_id = 'in-1'`);
      expect(paid).toMatchObject({ customer: 'crm-1', contract: 'sub-1', currency: 'USD', paid: '2026-01-20 10:30:00' });
    });

    test('running a file again changes nothing that is already there', async () => {
      const again = await run('contracts', 'contracts.json');
      expect(again.json).toMatchObject({ created: 0, updated: 0, unchanged: 3, rejected: 3 });
      const [{ n }] = (await query<{ n: number }>(sql`select count(*)::int as n from contracts where org_id = ${orgId}`)) as [
        { n: number },
      ];
      expect(n).toBe(3);
    });

    test('churned_at and cancelled_at import; a date on a live record or a bad day is a rejected row naming it; a re-run moves no date', async () => {
      const customersFile = join(dir, 'stop-customers.csv');
      writeFileSync(
        customersFile,
        'external_id,name,currency,status,churned_at\npit-1,Gone,USD,churned,2024-05-31\npit-2,Here,USD,active,\npit-3,Odd,USD,active,2024-01-01\n',
      );
      const customers = await cli(['import', 'customers', customersFile, '--org', orgId, '--json'], env);
      expect(customers.json).toMatchObject({ created: 2, rejected: 1 });
      expect(customers.json.rejected_rows).toEqual([{ row: 3, reason: expect.stringContaining('Invalid field "churned_at"') }]);
      const contractsFile = join(dir, 'stop-contracts.csv');
      writeFileSync(
        contractsFile,
        'external_id,customer_external_id,name,start_date,end_date,billing_interval,amount,status,cancelled_at\n' +
          'pit-k1,pit-1,Pro,2024-01-01,2024-12-31,year,1000,cancelled,2024-03-01\n' +
          'pit-k2,pit-1,Pro,2025-01-01,,month,100,cancelled,\n' +
          'pit-k3,pit-2,Pro,2025-01-01,,month,100,active,2025-02-01\n' +
          'pit-k4,pit-2,Pro,2025-01-01,,month,100,cancelled,2025-13-01\n',
      );
      const first = await cli(['import', 'contracts', contractsFile, '--org', orgId, '--json'], env);
      expect(first.json).toMatchObject({ created: 2, rejected: 2 });
      expect(first.json.rejected_rows).toEqual([
        { row: 3, reason: expect.stringContaining('Invalid field "cancelled_at"') },
        { row: 4, reason: expect.stringContaining('Invalid field "cancelled_at"') },
      ]);
      const dates = () =>
        query<{ external_id: string; cancelled_at: string; revisions: number }>(sql`
          select k.external_id, k.cancelled_at::text as cancelled_at, (select count(*)::int from contract_revisions r where r.contract_id = k.id) as revisions
          from contracts k where k.org_id = ${orgId} and k.external_id like 'pit-%' order by k.external_id`);
      const today = new Date().toISOString().slice(0, 10);
      expect(await dates()).toEqual([
        { external_id: 'pit-k1', cancelled_at: '2024-03-01', revisions: 1 },
        { external_id: 'pit-k2', cancelled_at: today, revisions: 1 },
      ]);
      const again = await cli(['import', 'contracts', contractsFile, '--org', orgId, '--json'], env);
      expect(again.json).toMatchObject({ created: 0, updated: 0, unchanged: 2, rejected: 2 });
      expect((await dates()).map((r) => r.revisions)).toEqual([1, 1]);
      const [gone] = await query<{ churned_at: string }>(
        sql`select churned_at::text as churned_at from customers where org_id = ${orgId} and external_id = 'pit-1'`,
      );
      expect(gone!.churned_at).toBe('2024-05-31');
    });

    test('a file that cannot be imported says why and exits non-zero', async () => {
      const unknownColumn = join(dir, 'unknown.csv');
      writeFileSync(unknownColumn, 'external_id,name,currency,colour\nx,X,USD,red\n');
      const refused = await cli(['import', 'customers', unknownColumn, '--org', orgId, '--json'], env);
      expect(refused.code).toBe(1);
      expect(refused.json.stopped).toContain('unknown column "colour"');
      const unquoted = join(dir, 'broken.json');
      writeFileSync(unquoted, '[{"external_id": "b1", "name": "B", "currency": "USD"}, {"external_id": ');
      const broken = await cli(['import', 'customers', unquoted, '--org', orgId, '--json'], env);
      expect(broken.code).toBe(1);
      expect(broken.json).toMatchObject({ created: 1 });
      expect(broken.json.stopped).toContain('the JSON cannot be read after record 1');
      const missing = await cli(['import', 'customers', join(dir, 'nope.csv'), '--org', orgId], env);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('cannot read');
      const what = await cli(['import', 'tickets', unknownColumn], env);
      expect(what.code).toBe(2);
    });
  });
}
