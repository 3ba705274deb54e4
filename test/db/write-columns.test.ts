// Writes may set every column of a record's table but the ones they keep themselves (db/upsert.ts
// recordTable). That holds only while the tables and the API's bodies agree: each writable column
// is a field of the create body, and each field of the body is a column or names a reference the
// service resolves into one.
import { describe, expect, test } from 'bun:test';
import type { TObject } from '@sinclair/typebox';
import type { RecordTable } from '../../src/db/upsert.ts';
import { ContractCreate } from '../../src/modules/contracts/model.ts';
import { CONTRACTS_TABLE } from '../../src/modules/contracts/service.ts';
import { CustomerCreate } from '../../src/modules/customers/model.ts';
import { CUSTOMERS_TABLE } from '../../src/modules/customers/service.ts';
import { InvoiceCreate } from '../../src/modules/invoices/model.ts';
import { INVOICES_TABLE } from '../../src/modules/invoices/service.ts';

const records: [RecordTable, TObject, references: string[]][] = [
  [CUSTOMERS_TABLE, CustomerCreate as unknown as TObject, []],
  [CONTRACTS_TABLE, ContractCreate as unknown as TObject, ['customer_external_id']],
  [INVOICES_TABLE, InvoiceCreate as unknown as TObject, ['customer_external_id', 'contract_external_id']],
];

describe('write columns', () => {
  for (const [table, body, references] of records) {
    test(`${table.name}: the writable columns are the create body's fields but its references`, () => {
      const fields = Object.keys(body.properties).filter((field) => !references.includes(field));
      expect(Object.keys(table.columns).sort()).toEqual(fields.sort());
    });
  }
});
