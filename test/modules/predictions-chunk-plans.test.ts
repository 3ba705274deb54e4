// A recompute chunk finds its customers' marks and predictions by both columns of the primary key,
// whatever the planner's statistics say. With statistics taken while the marks table was empty (the
// embedded database runs no autoanalyze; a PostgreSQL may run without autovacuum) the id list was
// a filter on a scan of every row of the organisation: 1.2 s a statement at 740,000 marks.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { transaction } from '../../src/db/transaction.ts';
import { CHUNK_STATEMENTS } from '../../src/modules/predictions/service.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

/** Every "Index Cond" of scans of `table` in an EXPLAIN (FORMAT JSON) plan. */
function indexConditions(plan: unknown, table: string): string[] {
  const found: string[] = [];
  const visit = (node: Record<string, unknown>) => {
    const onTable = node['Relation Name'] === table || String(node['Index Name'] ?? '').startsWith(`${table}_`);
    if (onTable && typeof node['Index Cond'] === 'string') found.push(node['Index Cond']);
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
  };
  visit((plan as { Plan: Record<string, unknown> }[])[0]!.Plan);
  return found;
}

for (const backend of BACKENDS) {
  describe(`a recompute chunk's statements (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
      // Statistics of empty tables: what a server has after its first start, until something analyses them.
      await queryText(database.db, `analyze risk_input_changes, predictions`, []);
    });
    afterAll(() => database?.dispose());

    const cases = [
      { name: 'marks', table: 'risk_input_changes', types: 'text, text[]', args: `'org_x', array['cus_1','cus_2']` },
      {
        name: 'answerMarks',
        table: 'risk_input_changes',
        types: 'text, text[], text[]',
        args: `'org_x', array['cus_1'], array['2026-01-01']`,
      },
      {
        name: 'dropUnscored',
        table: 'predictions',
        types: 'text, text[], text[]',
        args: `'org_x', array['cus_1','cus_2'], array['cus_1']`,
      },
    ] as const;
    for (const c of cases) {
      test(`${c.name} bounds its scan of ${c.table} to the chunk's ids in the generic plan`, async () => {
        // One connection for the session's settings and the prepared statement: a transaction.
        const conditions = await transaction(database.db, async (tx) => {
          await queryText(tx, `set local plan_cache_mode = force_generic_plan`, []);
          // An empty table is read whole, rightly; with rows in it the planner takes the index, and
          // which of its columns it searches by is what this checks.
          await queryText(tx, `set local enable_seqscan = off`, []);
          await queryText(tx, `prepare chunk_plan(${c.types}) as ${CHUNK_STATEMENTS[c.name]}`, []);
          const [row] = await queryText<{ 'QUERY PLAN': unknown }>(tx, `explain (format json) execute chunk_plan(${c.args})`, []);
          await queryText(tx, `deallocate chunk_plan`, []);
          const raw = row!['QUERY PLAN'];
          return indexConditions(typeof raw === 'string' ? JSON.parse(raw) : raw, c.table);
        });
        expect(conditions.length).toBeGreaterThan(0);
        for (const condition of conditions) expect(condition).toContain('customer_id');
      });
    }
  });
}
