// The list and read queries of customers, contracts, invoices and tickets are written by hand; their
// row types come from the Drizzle tables (src/db/rows.ts). Each query is run here and the columns it
// answers must be exactly the keys its row shape gives: a column added to a table but not selected,
// or selected but not in the type, fails.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Db } from '../../src/db/client.ts';
import { rowKeys } from '../../src/db/rows.ts';
import { tickets } from '../../src/db/schema/index.ts';
import { newId } from '../../src/lib/ids.ts';
import { utcToday } from '../../src/lib/today.ts';
import { CONTRACT_ROW, getContract, listContracts, writeContracts } from '../../src/modules/contracts/service.ts';
import { CUSTOMER_ROW, getCustomer, LISTED_CUSTOMER_ROW, listCustomers, writeCustomers } from '../../src/modules/customers/service.ts';
import { getInvoice, INVOICE_ROW, listInvoices, writeInvoices } from '../../src/modules/invoices/service.ts';
import { getTicket, listTickets, TICKET_ROW } from '../../src/modules/tickets/api/service.ts';
import { BACKENDS, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { makeConnector } from '../helpers/tickets.ts';

for (const backend of BACKENDS) {
  describe(`hand-written selects answer their row types' columns (${backend})`, () => {
    let database: TestDatabase;
    let db: Db;
    let orgId: string;
    let ticketId: string;
    const today = utcToday();

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      db = database.db;
      orgId = (await createOrgWithKey(database)).org.id;
      // One of each, with a contract counting today, so every derived value has something to say.
      await db.transaction(async (txn) => {
        const tx = txn as unknown as Db;
        await writeCustomers(tx, orgId, [{ index: 0, input: { external_id: 'c1', name: 'Acme', currency: 'EUR' } }]);
        await writeContracts(tx, orgId, [
          {
            index: 0,
            input: {
              external_id: 'k1',
              customer_external_id: 'c1',
              name: 'Pro',
              start_date: '2020-01-01',
              billing_interval: 'month',
              amount: 1000,
            },
          },
        ]);
        await writeInvoices(tx, orgId, [
          {
            index: 0,
            input: {
              external_id: 'i1',
              contract_external_id: 'k1',
              amount_due: 1000,
              issued_at: '2026-01-01T00:00:00Z',
              due_date: '2026-01-31',
            },
          },
        ]);
      });
      const connector = await makeConnector(database, orgId);
      ticketId = newId('tkt');
      await db.insert(tickets).values({ id: ticketId, orgId, connectorId: connector.id, externalId: 't1', subject: 'Help' });
    });
    afterAll(() => database.dispose());

    const page = { limit: 10 };
    const queries: { name: string; shape: Parameters<typeof rowKeys>[0]; rows: () => Promise<object[]> }[] = [
      {
        name: 'a page of customers in an order of their own columns',
        shape: LISTED_CUSTOMER_ROW,
        rows: () => listCustomers(db, { orgId, today, filters: {}, sort: 'name', ...page }),
      },
      {
        name: 'a page of customers chosen by a derived value',
        shape: LISTED_CUSTOMER_ROW,
        rows: () => listCustomers(db, { orgId, today, filters: {}, sort: 'arr', ...page }),
      },
      { name: 'one customer', shape: CUSTOMER_ROW, rows: async () => [await getCustomer(db, orgId, 'ext:c1', today)] },
      { name: 'a page of contracts', shape: CONTRACT_ROW, rows: () => listContracts(db, { orgId, today, filters: {}, ...page }) },
      { name: 'one contract', shape: CONTRACT_ROW, rows: async () => [await getContract(db, orgId, 'ext:k1', today)] },
      { name: 'a page of invoices', shape: INVOICE_ROW, rows: () => listInvoices(db, { orgId, today, filters: {}, ...page }) },
      { name: 'one invoice', shape: INVOICE_ROW, rows: async () => [await getInvoice(db, orgId, 'ext:i1', today)] },
      { name: 'a page of tickets', shape: TICKET_ROW, rows: () => listTickets(db, { orgId, filters: {}, ...page }) },
      { name: 'one ticket', shape: TICKET_ROW, rows: async () => [await getTicket(db, orgId, ticketId)] },
    ];
    for (const query of queries) {
      test(query.name, async () => {
        const rows = await query.rows();
        expect(rows.length).toBe(1);
        expect(Object.keys(rows[0]!).sort()).toEqual(rowKeys(query.shape).sort());
      });
    }
  });
}
