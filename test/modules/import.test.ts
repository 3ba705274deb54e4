// `revintel import`: the file formats (CSV with BOM, CRLF, quoted commas, quotes and line breaks,
// empty lines; JSON arrays; NDJSON), good, bad and mixed rows with their report, references
// between records, and re-runs — through the CLI (run from source) on both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/db/client.ts';
import { openEmbedded } from '../../src/db/client.ts';
import { readImportFile } from '../../src/modules/imports/read.ts';
import { rowPreparer } from '../../src/modules/imports/rows.ts';
import { runSourceCli } from '../helpers/binary.ts';
import { BACKENDS, createOrgWithKey, openTestDatabase, TEST_DATABASE_URL, tempDir } from '../helpers/harness.ts';

const FIXTURES = join(import.meta.dir, '../fixtures/import');

const cli = (args: string[], env: Record<string, string>) => runSourceCli(args, { LOG_LEVEL: 'silent', ...env });

async function readAll(path: string, format: 'csv' | 'json' | 'ndjson', entity: 'customers' | 'contracts' | 'invoices') {
  const prepare = rowPreparer(entity);
  const out = [];
  for await (const record of readImportFile(path, format)) out.push(prepare(record));
  return out;
}

describe('reading import files', () => {
  test('CSV: BOM, CRLF, quoted commas, doubled quotes, line breaks in a field, empty lines, typed cells', async () => {
    const rows = await readAll(join(FIXTURES, 'customers-mixed.csv'), 'csv', 'customers');
    expect(rows.map((r) => r.row)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(rows[0]).toEqual({
      row: 1,
      input: {
        external_id: 'crm-1',
        name: 'Acme, Inc.',
        domain: 'acme.com',
        status: 'active',
        segment: 'enterprise',
        country: 'US',
        currency: 'USD',
        csm: { name: 'Dana Whitfield', email: 'dana@example.com' },
        metadata: { plan: 'gold' },
      },
    });
    expect(rows[1]).toMatchObject({ input: { external_id: 'crm-2', name: 'Beta "Best" GmbH', status: 'trial' } });
    expect(rows[1]).not.toHaveProperty('input.csm'); // empty CSM cells: no CSM
    expect(rows[2]).toMatchObject({ input: { name: 'Gamma\r\nHoldings' } });
    expect(rows[3]).toEqual({ row: 4, error: 'Invalid field "currency": must be an ISO 4217 currency code such as USD' });
    expect(rows[4]).toEqual({ row: 5, error: 'has 4 fields, the header has 10' });
    expect(rows[5]).toMatchObject({ row: 6, error: expect.stringContaining('Invalid field "external_id": is required') });
    expect(rows[6]).toEqual({ row: 7, error: 'Invalid field "status": must be one of active, churned, trial' });
    expect(rows[7]).toMatchObject({ row: 8, input: { external_id: 'crm-1', metadata: { plan: 'platinum' } } });
  });

  test('CSV cells are typed by their field: integers, booleans, empty as null where a field may be empty, times read as UTC', async () => {
    const dir = tempDir();
    try {
      const path = join(dir, 'contracts.csv');
      writeFileSync(
        path,
        'external_id,customer_external_id,name,start_date,end_date,billing_interval,amount,seats,auto_renew\nk1,c1,Pro,2026-01-01,,month,4900,,yes\nk2,c1,Pro,2026-01-01,2026-12-31,year,12.5,3,no\n',
      );
      const [good, bad] = await readAll(path, 'csv', 'contracts');
      expect(good).toEqual({
        row: 1,
        input: {
          external_id: 'k1',
          customer_external_id: 'c1',
          name: 'Pro',
          start_date: '2026-01-01',
          end_date: null,
          billing_interval: 'month',
          amount: 4900,
          seats: null,
          auto_renew: true,
        },
      });
      expect(bad).toMatchObject({ row: 2, error: expect.stringContaining('Invalid field "amount"') });
      const invoices = join(dir, 'invoices.csv');
      writeFileSync(
        invoices,
        'external_id,customer_id,amount_due,issued_at,paid_at\ni1,cus_1,100,2026-01-05,2026-01-06 14:30\ni2,cus_1,100,2026-01-05T10:00:00+02:00,yesterday\n',
      );
      const [first, second] = await readAll(invoices, 'csv', 'invoices');
      expect(first).toMatchObject({ input: { issued_at: '2026-01-05T00:00:00Z', paid_at: '2026-01-06T14:30:00Z', amount_due: 100 } });
      expect(second).toMatchObject({ error: expect.stringContaining('Invalid field "paid_at"') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('JSON arrays and NDJSON: one record per element or line; what is not an object is reported, blank lines skipped', async () => {
    const contracts = await readAll(join(FIXTURES, 'contracts.json'), 'json', 'contracts');
    expect(contracts).toHaveLength(6);
    expect(contracts[3]).toEqual({ row: 4, error: 'is not a JSON object' });
    const invoices = await readAll(join(FIXTURES, 'invoices.ndjson'), 'ndjson', 'invoices');
    expect(invoices.map((r) => r.row)).toEqual([1, 2, 3, 4, 5]);
    expect(invoices[2]).toMatchObject({ row: 3, error: expect.stringContaining('not valid JSON') });
  });
});

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
