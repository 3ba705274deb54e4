// The worker's claim is a prepared statement, and PostgreSQL may run it with a generic plan (after
// five executions, when it judges that no worse): that plan guesses the LIMIT at a tenth of the
// table, and once joined the claimed ids to a scan of the whole queue — 76 ms a claim instead of 8
// at 20,000 pending, growing with the table. With plan_cache_mode forcing the generic plan, the
// queue must still be reached only through its indexes. PostgreSQL only (PGlite plans alike, but
// runs one statement at a time in one process).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { CLAIM } from '../../src/modules/tickets/queue/service.ts';
import { createOrgWithKey, openTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/harness.ts';
import { makeConnector } from '../helpers/tickets.ts';

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

if (TEST_DATABASE_URL) {
  describe('ticket queue plans (postgres)', () => {
    let database: TestDatabase;
    let connectorId: string;
    beforeAll(async () => {
      database = await openTestDatabase('postgres');
      const { org } = await createOrgWithKey(database);
      connectorId = (await makeConnector(database, org.id)).id;
      await queryText(
        database.db,
        `insert into ticket_events (id, org_id, connector_id, source, body, headers)
         select 'evt_plan_' || g || '_' || $2, $1, $2, 'webhook', '{"ticket":{"id":"P-' || g || '"}}', '{}'::jsonb from generate_series(1, 20000) g`,
        [org.id, connectorId],
      );
      await queryText(database.db, 'analyze ticket_events', []);
    });
    afterAll(async () => {
      await queryText(database.db, 'delete from ticket_events where connector_id = $1', [connectorId]);
      await database.dispose();
    });

    test('the generic plan of the claim reaches ticket_events through indexes only', async () => {
      const connection = await database.sql!.reserve();
      try {
        await connection.unsafe('set plan_cache_mode = force_generic_plan');
        await connection.unsafe(`prepare claim_plan_test(text, int, int) as ${CLAIM}`);
        const [row] = await connection.unsafe(`explain (format json) execute claim_plan_test('plan-test', 250, 60)`);
        const plan = (row as unknown as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]!.Plan;
        const onQueue = nodesOf(plan).filter((node) => node['Relation Name'] === 'ticket_events');
        expect(onQueue.length).toBeGreaterThanOrEqual(3); // the due and orphaned CTEs, and the update
        // An index scan, or a bitmap heap scan fed by one (chosen on a table other tests have grown).
        const throughIndex = (node: PlanNode) => node['Node Type'].includes('Index') || node['Node Type'] === 'Bitmap Heap Scan';
        expect(onQueue.filter((node) => !throughIndex(node)).map((node) => node['Node Type'])).toEqual(['ModifyTable']);
      } finally {
        await connection.unsafe('deallocate all').catch(() => {});
        await connection.unsafe('reset plan_cache_mode').catch(() => {});
        connection.release();
      }
    });
  });
}
