import { and, eq, getTableColumns, isNull, sql, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { enqueueJob } from '../../queue/job-queue.ts';
import { recomputePredictionsJob } from '../predictions/jobs/recompute.ts';
import {
  connectors,
  contracts,
  customers,
  demoTruth,
  invoices,
  riskInputChanges,
  tickets,
  users,
  type Connector,
  type Organisation,
} from '../../db/schema/index.ts';
import { newConnectorId } from '../../lib/ids.ts';
import { queryRows, queryText, type Db } from '../../db/client.ts';
import { DEFAULT_RULES, fireTicketSignals, putRules, rulesOf, type EffectiveRule } from '../agent-actions/rules.ts';
import type { ActionSettings } from '../agent-actions/settings.ts';
import type { Settings } from '../../settings.ts';
import { nextSizeByTime, timed, type UnitRegistry, type UnitRunner } from '../../db/units-of-work.ts';
import { AppError } from '../../lib/errors.ts';
import { createKey, type PublicKey } from '../keys/service.ts';
import { createOrg, findOrg } from '../orgs/service.ts';
import { createUser, issueLink } from '../users/service.ts';
import { DEMO_CHUNK_CUSTOMERS, generateDemoChunks, type DemoData } from './generate.ts';

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
  /** The demo help desk: a connector without a secret, so a newcomer can post tickets to it. */
  connector: Connector;
  counts: { customers: number; contracts: number; invoices: number; tickets: number; truth: number };
  /** The rescore of its customers, queued for the worker. */
  recomputeJobId: string;
  /** Its console admin (DEMO_ADMIN_EMAIL) and a fresh one-time sign-in link's token (24 h). */
  admin: { id: string; email: string };
  signInToken: string;
  /** Agent actions its churn-signal rules proposed for its latest tickets, waiting in the inbox. */
  pendingActions: number;
}

/** The demo organisation's console admin. */
export const DEMO_ADMIN_EMAIL = 'admin@example.com';

/** The demo's admin, created at the first load; every load gives a fresh sign-in link. */
async function demoAdmin(db: Db, orgId: string, actor: string): Promise<{ admin: { id: string; email: string }; signInToken: string }> {
  const [existing] = await db
    .select()
    .from(users)
    .where(and(eq(users.orgId, orgId), eq(users.email, DEMO_ADMIN_EMAIL)));
  const { user, link } = existing
    ? await issueLink(db, { userId: existing.id, orgId, actor })
    : await createUser(db, { org: orgId, email: DEMO_ADMIN_EMAIL, name: 'Demo admin', role: 'admin', actor });
  return { admin: { id: user.id, email: user.email }, signInToken: link.token };
}

/**
 * `insert into <table> (…) select … from json_to_recordset($1)`: a whole batch of rows is one JSON
 * text parameter, so neither drizzle nor the driver handles a parameter per value (at 1,000-row
 * batches of `insert … values` that was most of the time of a 100,000-customer demo), and the
 * rows cross to the database as one string serialised by JSON.stringify. The columns are the
 * generator's keys, named and typed as the drizzle table declares them (Dates become ISO strings,
 * jsonb columns nested JSON); the columns it does not give take their defaults.
 */
function recordsetInsert<T extends PgTable>(table: T, keys: readonly (keyof T['$inferInsert'] & string)[]): (json: string) => SQL {
  const columns = getTableColumns(table) as Record<string, { name: string; getSQLType(): string }>;
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const target = sql.raw(keys.map((key) => quote(columns[key]!.name)).join(', '));
  const source = sql.raw(keys.map(quote).join(', '));
  const definition = sql.raw(keys.map((key) => `${quote(key)} ${columns[key]!.getSQLType()}`).join(', '));
  return (json) => sql`insert into ${table} (${target}) select ${source} from json_to_recordset(${json}::json) as x(${definition})`;
}

const insertCustomers = recordsetInsert(customers, [
  'id',
  'orgId',
  'externalId',
  'name',
  'domain',
  'email',
  'status',
  'churnedAt',
  'segment',
  'country',
  'currency',
  'csm',
  'metadata',
]);
const insertContracts = recordsetInsert(contracts, [
  'id',
  'orgId',
  'customerId',
  'externalId',
  'name',
  'status',
  'startDate',
  'endDate',
  'autoRenew',
  'billingInterval',
  'amount',
  'currency',
  'seats',
  'cancelledAt',
  'metadata',
]);
const insertInvoices = recordsetInsert(invoices, [
  'id',
  'orgId',
  'customerId',
  'contractId',
  'externalId',
  'number',
  'status',
  'currency',
  'amountDue',
  'amountPaid',
  'issuedAt',
  'dueDate',
  'paidAt',
  'metadata',
]);
const insertTickets = recordsetInsert(tickets, [
  'id',
  'orgId',
  'connectorId',
  'externalId',
  'customerId',
  'subject',
  'description',
  'status',
  'statusNormalised',
  'priority',
  'priorityNormalised',
  'requesterEmail',
  'sourceCreatedAt',
  'sourceUpdatedAt',
  'sentiment',
  'urgency',
  'topics',
  'churnSignals',
  'firstSentiment',
  'firstUrgency',
  'firstChurnSignals',
  'intelligenceMethod',
  'intelligenceVersion',
  'createdAt',
  'updatedAt',
]);

/** Every customer with a ticket has new risk inputs (the churn predictions recompute them). */
const insertTruth = recordsetInsert(demoTruth, ['orgId', 'customerId', 'externalId', 'asOf', 'horizonDays', 'pTrue']);
const DEMO_CONNECTOR_NAME = 'Demo help desk';

/** The statements of one chunk (parents first: the foreign keys are checked at the end of
 * each statement). */
function chunkStatements(chunk: DemoData): SQL[] {
  const statements: SQL[] = [];
  if (chunk.customers.length) statements.push(insertCustomers(JSON.stringify(chunk.customers)));
  if (chunk.contracts.length) statements.push(insertContracts(JSON.stringify(chunk.contracts)));
  if (chunk.invoices.length) statements.push(insertInvoices(JSON.stringify(chunk.invoices)));
  if (chunk.tickets.length) statements.push(insertTickets(JSON.stringify(chunk.tickets)));
  if (chunk.truth.length) statements.push(insertTruth(JSON.stringify(chunk.truth)));
  return statements;
}

/** Sends the statements together, in order. db.execute is lazy (it runs when awaited): `.then`
 * starts each now, and the transaction's connection runs them one after the other. */
const run = (db: Db, statements: SQL[]) => Promise.all(statements.map((statement) => db.execute(statement).then(() => undefined)));

/** The demo organisation (made at the first load) and its help desk; `input` checked. */
export async function beginDemo(db: Db, input: DemoInput): Promise<{ org: Organisation; connector: Connector }> {
  if (!Number.isInteger(input.customers) || input.customers < 1 || input.customers > 1_000_000) {
    throw new AppError('validation_failed', 'customers must be an integer from 1 to 1,000,000');
  }
  const org = await findOrg(db, input.orgName).catch((error: unknown) => {
    if ((error as AppError).code !== 'not_found') throw error;
    return createOrg(db, { name: input.orgName, plan: 'enterprise', actor: input.actor });
  });
  return { org, connector: await demoConnector(db, org.id) };
}

/**
 * Removes up to `limit` of the demo organisation's customers (their contracts and invoices go with
 * them), then, when none is left, its help desk's tickets, then its truth and stale marks (the
 * customers' deletion marks them): how many rows it removed, 0 when nothing is left. A refresh
 * replaces all of them.
 */
export async function clearDemoBatch(db: Db, input: { orgId: string; connectorId: string; limit: number }): Promise<number> {
  const steps = [
    sql`delete from customers where id in (select id from customers where org_id = ${input.orgId} limit ${input.limit})`,
    sql`delete from tickets where id in (select id from tickets where connector_id = ${input.connectorId} limit ${input.limit})`,
    sql`delete from demo_truth where (org_id, customer_id, as_of) in (select org_id, customer_id, as_of from demo_truth where org_id = ${input.orgId} limit ${input.limit * 20})`,
    sql`delete from risk_input_changes where (org_id, customer_id) in (select org_id, customer_id from risk_input_changes where org_id = ${input.orgId} limit ${input.limit * 20})`,
  ];
  for (const step of steps) {
    const removed = rowCount(await db.execute(step));
    if (removed > 0) return removed;
  }
  return 0;
}

/** Rows a delete removed, on either driver. */
const rowCount = (result: unknown): number =>
  (result as { count?: number; affectedRows?: number }).count ?? (result as { affectedRows?: number }).affectedRows ?? 0;

/** Stores one chunk of generated rows. */
export async function insertDemoChunk(db: Db, chunk: DemoData): Promise<void> {
  await run(db, chunkStatements(chunk));
}

/** The tables a demo load fills: fresh statistics for each after it, or the planner (seeing the
 * tables as they were) walks every customer to answer a page (250 ms instead of 0.6 ms at 30,000
 * customers). */
export const DEMO_TABLES = ['customers', 'contracts', 'contract_revisions', 'invoices', 'tickets', 'demo_truth'] as const;

/** Fresh statistics for one of DEMO_TABLES; `small`: from a sample a tenth of the default's, for a
 * running server on the embedded database (as imports do). */
export async function analyzeDemoTable(db: Db, input: { table: (typeof DEMO_TABLES)[number]; sample?: 'full' | 'small' }): Promise<void> {
  if (!DEMO_TABLES.includes(input.table)) throw new AppError('validation_failed', `not a demo table: ${input.table}`);
  if (input.sample === 'small') await db.execute(sql.raw(`set local default_statistics_target = 10`));
  await db.execute(sql.raw(`analyze ${input.table}`));
}

/** Tickets whose signals the demo's rules act on at the end of a load: the latest of them. */
export const DEMO_SIGNAL_TICKETS = 5;

/** The demo organisation's rules, set at its first load (a refresh keeps what was changed since):
 * the defaults plus a check-in call when a ticket names a competitor or asks to downgrade, the
 * signals its still-active customers write most (a cancellation mostly comes from a customer whose
 * contract has ended by today). */
const DEMO_RULES: readonly EffectiveRule[] = [
  ...DEFAULT_RULES,
  {
    trigger: 'churn_signal',
    signal: 'competitor',
    action: 'check_in',
    params: { channel: 'call', due_in_days: 3 },
    priority: 'high',
    enabled: true,
  },
  {
    trigger: 'churn_signal',
    signal: 'downgrade',
    action: 'check_in',
    params: { channel: 'call', due_in_days: 5 },
    priority: 'normal',
    enabled: true,
  },
];

/** The inbox a newcomer finds: the organisation's churn-signal rules fired for the latest
 * DEMO_SIGNAL_TICKETS tickets that carry one of their signals, from customers not churned — as the
 * worker fires them when such a ticket comes in. */
async function proposeForLatestSignals(db: Db, orgId: string, settings: ActionSettings): Promise<number> {
  let { rules, defaults } = await rulesOf(db, orgId);
  if (defaults) rules = await putRules(db, orgId, [...DEMO_RULES]);
  const signals = [...new Set(rules.filter((r) => r.enabled && r.trigger === 'churn_signal' && r.signal).map((r) => r.signal!))];
  if (signals.length === 0) return 0;
  const latest = await queryText<{ id: string }>(
    db,
    `select t.id from tickets t join customers c on c.org_id = t.org_id and c.id = t.customer_id
     where t.org_id = $1 and c.status <> 'churned' and c.deleted_at is null and t.churn_signals ?| $2::text[]
     order by t.source_created_at desc, t.id limit $3`,
    [orgId, signals, DEMO_SIGNAL_TICKETS],
  );
  await fireTicketSignals(
    db,
    latest.map((t) => t.id),
    settings,
  );
  // Two tickets of one customer make one action (one open per customer and type).
  const [open] = await queryText<{ n: number }>(
    db,
    `select count(*)::int as n from agent_actions where org_id = $1 and status in ('proposed', 'pending_approval')`,
    [orgId],
  );
  return open?.n ?? 0;
}

/** The end of a load: a new key, the rescore queued, a few agent actions proposed, the console
 * admin's sign-in link. */
export async function finishDemo(
  db: Db,
  input: { orgId: string; actor: string },
  settings: ActionSettings,
): Promise<Pick<DemoResult, 'key' | 'secret' | 'recomputeJobId' | 'admin' | 'signInToken' | 'pendingActions'>> {
  const { key, plaintext } = await createKey(db, { org: input.orgId, name: 'demo', actor: input.actor });
  // Its churn predictions: scored by the worker once this commits.
  const recompute = await enqueueJob(db, recomputePredictionsJob, {}, { orgId: input.orgId, dedupeKey: 'all' });
  const pendingActions = await proposeForLatestSignals(db, input.orgId, settings);
  return { key, secret: plaintext, recomputeJobId: recompute.id, pendingActions, ...(await demoAdmin(db, input.orgId, input.actor)) };
}

const countRows = (counts: DemoResult['counts'], chunk: DemoData) => {
  counts.customers += chunk.customers.length;
  counts.contracts += chunk.contracts.length;
  counts.invoices += chunk.invoices.length;
  counts.tickets += chunk.tickets.length;
  counts.truth += chunk.truth.length;
};

/**
 * Creates or refreshes the demo organisation. At 100,000 customers (about 1.04 million rows), made
 * all at once and inserted 1,000 rows at a time with a parameter per value, this took 105 s and
 * 2.2 GB of RSS on PostgreSQL (136 s and 2.9 GB on PGlite); chunked and inserted from JSON, 48–58 s
 * and 85 MB (71–81 s and 300 MB), nearly all of it the database's own work: nine indexes and
 * three foreign-key checks per invoice. The 36-month demo (health.ts) has 1.6 million rows and 2.1
 * million rows of truth at 100,000 customers: 253 s and 112 MB on PostgreSQL, measured on a shared
 * 2-core machine where the 3-month demo took 151 s and 111 MB. One transaction (the command's own
 * database); through a running server, loadDemoInUnits. `chunkCustomers` is for tests.
 */
export async function loadDemo(
  db: Db,
  input: DemoInput,
  settings: ActionSettings,
  options: { chunkCustomers?: number } = {},
): Promise<DemoResult> {
  const { org, connector } = await beginDemo(db, input);
  // A refresh replaces the organisation's ARR data (contracts and invoices go with their customers)
  // and the demo help desk's tickets.
  await db.delete(customers).where(eq(customers.orgId, org.id));
  await db.delete(tickets).where(eq(tickets.connectorId, connector.id));
  await db.delete(riskInputChanges).where(eq(riskInputChanges.orgId, org.id));
  await db.delete(demoTruth).where(eq(demoTruth.orgId, org.id));
  // Generated and inserted a chunk at a time, so memory stays flat whatever the size. While the
  // database inserts one chunk (on PostgreSQL, in another process) the next one is generated and
  // serialised here.
  const counts = { customers: 0, contracts: 0, invoices: 0, tickets: 0, truth: 0 };
  let inserting: Promise<unknown> = Promise.resolve();
  const chunks = generateDemoChunks(
    { orgId: org.id, connectorId: connector.id, customers: input.customers, seed: input.seed, today: input.today },
    options.chunkCustomers,
  );
  for (const chunk of chunks) {
    countRows(counts, chunk);
    const statements = chunkStatements(chunk);
    await inserting;
    inserting = run(db, statements);
    // Back to the event loop once a chunk: embedded PGlite runs in this thread and its queries
    // settle as microtasks, so without this the command would answer nothing else (not even its
    // own signals) for the whole load.
    await new Promise((resolve) => setImmediate(resolve));
    // Each chunk leaves its JSON text and row objects behind; left to its own pace the collector
    // let them pile up to ~1 GB of RSS over a 100,000-customer load on PGlite. A full collection
    // of a heap this small takes a few ms.
    Bun.gc(true);
  }
  await inserting;
  await db.execute(sql.raw(`analyze ${DEMO_TABLES.join(', ')}`));
  return { org, connector, counts, ...(await finishDemo(db, { orgId: org.id, actor: input.actor }, settings)) };
}

/** The units of a demo load through a running server (admin/cli-units.ts). */
export const demoUnits = {
  'demo.begin': (db: Db, input: DemoInput) => beginDemo(db, input),
  'demo.clear': (db: Db, input: { orgId: string; connectorId: string; limit: number }) => clearDemoBatch(db, input),
  'demo.chunk': timed(async (db: Db, input: { chunk: DemoData }) => {
    await insertDemoChunk(db, input.chunk);
    return {};
  }),
  'demo.analyze': (db: Db, input: { table: (typeof DEMO_TABLES)[number]; sample?: 'full' | 'small' }) => analyzeDemoTable(db, input),
  'demo.finish': (db: Db, input: { orgId: string; actor: string }, settings: Settings) => finishDemo(db, input, settings.actions),
} satisfies UnitRegistry;

/** Chunks of customers (and all their rows) sized by the time the last one took to store, aiming at
 * 50 ms: a chunk of the default 500 customers with 36 months of history is some 18,000 rows. */
const CHUNK_SIZING = { targetMs: 50, min: 2, max: DEMO_CHUNK_CUSTOMERS };
const CLEAR_SIZING = { targetMs: 50, min: 10, max: 5_000 };

/**
 * The demo load through a running server on the embedded database: the same rows as loadDemo, but
 * each step its own unit (a batch of the refresh's deletions, a chunk of rows, one table's
 * statistics), so the load never holds the database, and every other tenant's requests, for longer
 * than one chunk. A load that fails midway removes what it stored (a batch per unit) before it
 * reports the failure: no half demo stays; loading again starts over.
 */
export async function loadDemoInUnits(
  runner: UnitRunner<typeof demoUnits>,
  input: DemoInput,
  options: { chunkCustomers?: number; onChunk?: (customers: number) => void } = {},
): Promise<DemoResult> {
  const { org, connector } = await runner.run('demo.begin', input);
  const clear = async () => {
    for (let limit = 100; ; ) {
      const started = performance.now();
      if ((await runner.run('demo.clear', { orgId: org.id, connectorId: connector.id, limit })) === 0) return;
      limit = nextSizeByTime(limit, performance.now() - started, CLEAR_SIZING);
    }
  };
  await clear();
  const counts = { customers: 0, contracts: 0, invoices: 0, tickets: 0, truth: 0 };
  let size = options.chunkCustomers ?? 10;
  try {
    for (const chunk of generateDemoChunks(
      { orgId: org.id, connectorId: connector.id, customers: input.customers, seed: input.seed, today: input.today },
      () => size,
    )) {
      countRows(counts, chunk);
      const { ms } = await runner.run('demo.chunk', { chunk });
      if (options.chunkCustomers === undefined) size = nextSizeByTime(chunk.customers.length, ms, CHUNK_SIZING);
      options.onChunk?.(counts.customers);
    }
    for (const table of DEMO_TABLES) await runner.run('demo.analyze', { table, sample: 'small' });
  } catch (error) {
    await clear().catch(() => {});
    throw error;
  }
  return { org, connector, counts, ...(await runner.run('demo.finish', { orgId: org.id, actor: input.actor })) };
}

/** The demo organisation's help desk connector, made on the first load and kept by refreshes (its
 * webhook URL stays valid). */
async function demoConnector(db: Db, orgId: string): Promise<Connector> {
  const [existing] = await db
    .select()
    .from(connectors)
    .where(and(eq(connectors.orgId, orgId), eq(connectors.name, DEMO_CONNECTOR_NAME), isNull(connectors.builtin)));
  if (existing) return existing;
  const [made] = await db
    .insert(connectors)
    .values({ id: newConnectorId(), orgId, name: DEMO_CONNECTOR_NAME, platform: 'generic' })
    .returning();
  return made!;
}

/** A page of the demo organisation's truth, in (customer, day) order after `after`: the CSV of
 * `revintel demo --truth` is written a page at a time (a 100,000-customer demo has millions of rows). */
export async function demoTruthPage(db: Db, input: { orgId: string; after: { customerId: string; asOf: string } | null; limit: number }) {
  const after = input.after ? sql`and (customer_id, as_of) > (${input.after.customerId}, ${input.after.asOf}::date)` : sql``;
  return queryRows<{ customer_id: string; external_id: string; as_of: string; p_true: number }>(
    db,
    sql`select customer_id, external_id, as_of::text as as_of, p_true from demo_truth
        where org_id = ${input.orgId} ${after} order by customer_id, as_of limit ${input.limit}`,
  );
}
