import { eq, sql } from 'drizzle-orm';
import { contracts, customers, invoices, type Organisation } from '../../db/schema/index.ts';
import type { Db } from '../../db/client.ts';
import { AppError } from '../../lib/errors.ts';
import { createKey, type PublicKey } from '../keys/service.ts';
import { createOrg, findOrg } from '../orgs/service.ts';
import { generateDemoData } from './generate.ts';

export interface DemoInput {
  orgName: string;
  customers: number;
  seed: number;
  /** The day the data is made around (YYYY-MM-DD): contracts run through it, invoices fall due. */
  today: string;
  actor: string;
}

export interface DemoResult {
  org: Organisation;
  key: PublicKey;
  secret: string;
  counts: { customers: number; contracts: number; invoices: number };
}

const BATCH = 1_000;

async function insertInBatches<T>(rows: T[], insert: (batch: T[]) => Promise<unknown>) {
  for (let i = 0; i < rows.length; i += BATCH) await insert(rows.slice(i, i + BATCH));
}

export async function loadDemo(db: Db, input: DemoInput): Promise<DemoResult> {
  if (!Number.isInteger(input.customers) || input.customers < 1 || input.customers > 1_000_000) {
    throw new AppError('validation_failed', 'customers must be an integer from 1 to 1,000,000');
  }
  const org = await findOrg(db, input.orgName).catch((error: unknown) => {
    if ((error as AppError).code !== 'not_found') throw error;
    return createOrg(db, { name: input.orgName, plan: 'enterprise', actor: input.actor });
  });
  // A refresh replaces the organisation's ARR data (contracts and invoices go with their customers).
  await db.delete(customers).where(eq(customers.orgId, org.id));
  const data = generateDemoData({ orgId: org.id, customers: input.customers, seed: input.seed, today: input.today });
  await insertInBatches(data.customers, (batch) => db.insert(customers).values(batch));
  await insertInBatches(data.contracts, (batch) => db.insert(contracts).values(batch));
  await insertInBatches(data.invoices, (batch) => db.insert(invoices).values(batch));
  // Fresh statistics, or the planner (seeing the tables as they were) walks every customer to
  // answer a page: measured 250 ms instead of 0.6 ms at 30,000 customers.
  await db.execute(sql`analyze customers, contracts, invoices`);
  const { key, plaintext } = await createKey(db, { org: org.id, name: 'demo', actor: input.actor });
  return {
    org,
    key,
    secret: plaintext,
    counts: { customers: data.customers.length, contracts: data.contracts.length, invoices: data.invoices.length },
  };
}
