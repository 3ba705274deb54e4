// `revintel import`'s reading of files: CSV with BOM, CRLF, quoted commas, quotes and line breaks,
// empty lines, typed cells; JSON arrays; NDJSON. The command itself, on both backends, is
// test/e2e/import-cli.test.ts.
import { describe, expect, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readImportFile } from '../../src/modules/imports/read.ts';
import { rowPreparer } from '../../src/modules/imports/rows.ts';
import { tempDir } from '../helpers/harness.ts';

const FIXTURES = join(import.meta.dir, '../fixtures/import');

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
