// The organisation's data version: any write to its customers, contracts or invoices bumps it in its
// own transaction (migration 0013), so an answer kept under it is never served after a change.
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';

export async function dataVersion(db: Db, orgId: string): Promise<string> {
  const [row] = await queryRows<{ version: string | number }>(
    db,
    sql`select coalesce((select version from org_data_versions where org_id = ${orgId}), 0) as version`,
  );
  return String(row?.version ?? 0);
}
