// `revintel demo` in chunks: the chunks are the same rows whatever their size, and what lands in the
// database through json_to_recordset is exactly what the generator made (dates, times, jsonb, nulls),
// the hidden truth included.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { asc, eq } from 'drizzle-orm';
import { generateDemoChunks, generateDemoData } from '../../src/modules/demo/generate.ts';
import { demoUnits, loadDemo, loadDemoInUnits } from '../../src/modules/demo/service.ts';
import { queryText } from '../../src/db/client.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { contracts, customers, demoTruth, invoices, tickets } from '../../src/db/schema/index.ts';
import { BACKENDS, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';

const TODAY = '2026-11-25';

describe('demo data in chunks', () => {
  test('any chunk size gives the same rows in the same order as the whole', () => {
    const options = { orgId: 'org_x', connectorId: 'con_x', customers: 250, seed: 42, today: TODAY };
    const whole = JSON.stringify(generateDemoData(options));
    for (const size of [1, 7, 100, 250, 1_000]) {
      const joined = {
        customers: [] as unknown[],
        contracts: [] as unknown[],
        invoices: [] as unknown[],
        tickets: [] as unknown[],
        truth: [] as unknown[],
      };
      let chunks = 0;
      for (const chunk of generateDemoChunks(options, size)) {
        chunks++;
        joined.customers.push(...chunk.customers);
        joined.contracts.push(...chunk.contracts);
        joined.invoices.push(...chunk.invoices);
        joined.tickets.push(...chunk.tickets);
        joined.truth.push(...chunk.truth);
      }
      expect(chunks).toBe(Math.ceil(250 / size));
      expect(JSON.stringify(joined)).toBe(whole);
    }
  });
});

/** A row as the database gave it back, without what the database adds (timestamps, tombstone). */
const stored = <T extends { createdAt: Date; updatedAt: Date; deletedAt: Date | null }>({
  createdAt: _c,
  updatedAt: _u,
  deletedAt: _d,
  ...rest
}: T) => rest;
const byId = <T extends { id: string }>(rows: T[]) => [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

for (const backend of BACKENDS) {
  describe(`demo load in chunks (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database.dispose());

    /** The demo organisation's rows as stored, in a stable order. */
    const storedDemo = async (orgId: string) => ({
      customers: byId(await database.db.select().from(customers).where(eq(customers.orgId, orgId))).map(stored),
      contracts: byId(await database.db.select().from(contracts).where(eq(contracts.orgId, orgId))).map(stored),
      invoices: byId(await database.db.select().from(invoices).where(eq(invoices.orgId, orgId))).map(stored),
      tickets: byId(await database.db.select().from(tickets).where(eq(tickets.orgId, orgId))).map(({ lastEventId: _e, ...rest }) => rest),
      truth: await database.db
        .select()
        .from(demoTruth)
        .where(eq(demoTruth.orgId, orgId))
        .orderBy(asc(demoTruth.customerId), asc(demoTruth.asOf)),
    });

    test('what is stored is what was generated, over several chunks, and a refresh stores it again', async () => {
      const orgName = uniqueName('demo-chunks');
      const input = { orgName, customers: 40, seed: 9, today: TODAY, actor: 'test' };
      const first = await database.db.transaction((tx) => loadDemo(tx as never, input, DEFAULT_ACTION_SETTINGS, { chunkCustomers: 7 }));
      const expected = generateDemoData({ orgId: first.org.id, connectorId: first.connector.id, customers: 40, seed: 9, today: TODAY });
      expect(first.counts).toEqual({
        customers: 40,
        contracts: expected.contracts.length,
        invoices: expected.invoices.length,
        tickets: expected.tickets.length,
        truth: expected.truth.length,
      });
      expect(expected.tickets.length).toBeGreaterThan(0);
      expect(expected.truth.length).toBeGreaterThan(0);

      const read = () => storedDemo(first.org.id);
      const rows = await read();
      expect(rows.customers).toEqual(byId(expected.customers) as never);
      expect(rows.contracts).toEqual(byId(expected.contracts) as never);
      expect(rows.invoices).toEqual(byId(expected.invoices) as never);
      // Tickets as generated; `sentiment` is a real (single precision) column, so compared as one.
      const single = (t: { sentiment?: number | null }) => ({ ...t, sentiment: t.sentiment == null ? null : Math.fround(t.sentiment) });
      expect(rows.tickets.map(single)).toEqual(byId(expected.tickets).map(single) as never);
      const byCustomerAndDay = (a: { customerId: string; asOf: string }, b: { customerId: string; asOf: string }) =>
        a.customerId < b.customerId ? -1 : a.customerId > b.customerId ? 1 : a.asOf < b.asOf ? -1 : a.asOf > b.asOf ? 1 : 0;
      expect(rows.truth).toEqual([...expected.truth].sort(byCustomerAndDay) as never);

      // A refresh in one chunk replaces them with the same rows.
      const again = await database.db.transaction((tx) => loadDemo(tx as never, input, DEFAULT_ACTION_SETTINGS, { chunkCustomers: 1_000 }));
      expect(again.org.id).toBe(first.org.id);
      expect(again.connector.id).toBe(first.connector.id);
      expect(again.counts).toEqual(first.counts);
      expect(await read()).toEqual(rows);
    });

    test('a load a unit per step (through a running server) refreshes the demo with the same rows as one transaction', async () => {
      const input = { orgName: uniqueName('demo-units'), customers: 30, seed: 11, today: TODAY, actor: 'test' };
      const whole = await database.db.transaction((tx) => loadDemo(tx as never, input, DEFAULT_ACTION_SETTINGS));
      const rows = await storedDemo(whole.org.id);
      const runner = localRunner(database.db, demoUnits, DEFAULT_SETTINGS);
      let chunks = 0;
      const inUnits = await loadDemoInUnits(
        { run: (name, args) => ((chunks += name === 'demo.chunk' ? 1 : 0), runner.run(name, args)) },
        input,
        { chunkCustomers: 4 },
      );
      expect(chunks).toBe(Math.ceil(30 / 4));
      expect(inUnits.org.id).toBe(whole.org.id);
      expect(inUnits.counts).toEqual(whole.counts);
      expect(await storedDemo(whole.org.id)).toEqual(rows);
    });

    test('a load a unit per step that fails midway leaves no half demo behind', async () => {
      const input = { orgName: uniqueName('demo-fails'), customers: 30, seed: 11, today: TODAY, actor: 'test' };
      const runner = localRunner(database.db, demoUnits, DEFAULT_SETTINGS);
      let chunks = 0;
      const failing = {
        run: ((name, args) =>
          name === 'demo.chunk' && ++chunks === 4
            ? Promise.reject(new Error('the server stopped'))
            : runner.run(name, args)) as typeof runner.run,
      };
      await expect(loadDemoInUnits(failing, input, { chunkCustomers: 4 })).rejects.toThrow('the server stopped');
      const [org] = await queryText<{ id: string }>(database.db, `select id from organisations where name = $1`, [input.orgName]);
      const left = await storedDemo(org!.id);
      expect({
        customers: left.customers.length,
        contracts: left.contracts.length,
        invoices: left.invoices.length,
        tickets: left.tickets.length,
        truth: left.truth.length,
      }).toEqual({ customers: 0, contracts: 0, invoices: 0, tickets: 0, truth: 0 });
    });
  });
}
