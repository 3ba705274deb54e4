// The database side of `revintel import`: one batch of prepared rows, written in one transaction
// (the unit's) by the same services as POST, so a crash loses at most the batch in flight and a
// re-run finds every committed row by its external_id.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import type { RowOutcome } from '../../db/upsert.ts';
import { findOrg } from '../orgs/service.ts';
import { writeContracts } from '../contracts/service.ts';
import { writeCustomers } from '../customers/service.ts';
import { writeInvoices } from '../invoices/service.ts';
import type { ImportEntity } from './rows.ts';

export interface BatchResult {
  created: number;
  updated: number;
  unchanged: number;
  rejected: { row: number; reason: string }[];
}

const WRITERS: Record<ImportEntity, (db: Db, orgId: string, rows: { index: number; input: never }[]) => Promise<RowOutcome[]>> = {
  customers: writeCustomers,
  contracts: writeContracts,
  invoices: writeInvoices,
};

export async function importBatch(
  db: Db,
  input: { entity: ImportEntity; orgId: string; rows: { row: number; input: Record<string, unknown> }[] },
): Promise<BatchResult> {
  const outcomes = await WRITERS[input.entity](
    db,
    input.orgId,
    input.rows.map((r) => ({ index: r.row, input: r.input as never })),
  );
  const result: BatchResult = { created: 0, updated: 0, unchanged: 0, rejected: [] };
  for (const outcome of outcomes) {
    if (outcome.outcome === 'rejected') result.rejected.push({ row: outcome.index, reason: outcome.error.message });
    else result[outcome.outcome]++;
  }
  return result;
}

/** The organisation an import goes to: the one named, or the only one there is. */
export async function importTarget(db: Db, input: { org?: string }): Promise<{ id: string; name: string }> {
  if (input.org) {
    const org = await findOrg(db, input.org);
    return { id: org.id, name: org.name };
  }
  const rows = rowsOf<{ id: string; name: string }>(await db.execute(sql`select id, name from organisations order by created_at limit 2`));
  if (rows.length === 1) return rows[0]!;
  throw new Error(
    rows.length === 0
      ? 'there is no organisation yet: create one with "revintel orgs create"'
      : 'there are several organisations: name one with --org',
  );
}

/** Fresh planner statistics after a large load (as after `revintel demo`). `small`: from a sample
 * a tenth of the default's (3,000 rows), for a running server on the embedded database, where the
 * full one (30,000 rows) held every request for about a second. */
export async function finishImport(db: Db, input: { entity: ImportEntity; sample?: 'full' | 'small' }): Promise<void> {
  if (input.sample === 'small') await db.execute(sql.raw(`set local default_statistics_target = 10`));
  await db.execute(sql.raw(`analyze ${input.entity}`));
}
