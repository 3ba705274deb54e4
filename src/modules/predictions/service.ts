// Scoring: the current prediction of every scored customer of an organisation, by the model in
// force (the scorecard, stored as the organisation's first model, until a trained one replaces it).
// In chunks of customers (scoreChunk), each one transaction: its predictions, and the stale marks
// they answer. The marks are read first and removed with the chunk's writes only if unchanged: a
// mark commits with the change it marks, so the features read after it see that change, and a
// mark made (or renewed) meanwhile survives for the next run. A chunk's band changes bump the organisation's data
// version as it commits (migration 0018), so customers' churn_risk follows chunk by chunk.
import { queryText, type Db } from '../../db/client.ts';
import { transaction } from '../../db/transaction.ts';
import { nextSizeByTime } from '../../db/units-of-work.ts';
import type { RiskBand } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { featuresAt, PRIOR_SCORECARD, type Source } from './features.ts';
import { groupedDrivers } from './drivers.ts';
import type { AdditiveModel } from './logistic.ts';
import { priorModel } from './training.ts';
import type { PredictionSettings } from './settings.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../settings.ts';
import { fireRiskRises } from '../agent-actions/rules.ts';

export function riskBand(probability: number, bands: PredictionSettings['riskBands']): RiskBand {
  return probability < bands[0] ? 'low' : probability < bands[1] ? 'medium' : probability < bands[2] ? 'high' : 'critical';
}

/** The sources a prediction reads: contracts (always there for a scored customer), invoices, tickets. */
const SOURCES = 3;

/** The organisation's model in force for the horizon; the scorecard is stored as its first. */
export async function activeModel(
  db: Db,
  orgId: string,
  settings: PredictionSettings,
): Promise<{ id: string; kind: string; parameters: AdditiveModel }> {
  const [found] = await queryText<{ id: string; kind: string; parameters: AdditiveModel }>(
    db,
    `select id, kind, parameters from prediction_models where org_id = $1 and horizon_days = $2 and status = 'active'`,
    [orgId, settings.horizonDays],
  );
  if (found) return found;
  const parameters = priorModel(PRIOR_SCORECARD, settings);
  const id = newId('mdl');
  // Two recomputes racing to create it: the unique index keeps one, and both use that one.
  await queryText(
    db,
    `insert into prediction_models (id, org_id, kind, status, horizon_days, parameters, metrics)
     values ($1, $2, 'prior', 'active', $3, $4::jsonb, $5::jsonb)
     on conflict (org_id, horizon_days) where status = 'active' do nothing`,
    [id, orgId, settings.horizonDays, JSON.stringify(parameters), JSON.stringify({ note: 'scorecard: no training' })],
  );
  return activeModel(db, orgId, settings);
}

const UPSERT = `
  insert into predictions as p (org_id, customer_id, model_id, horizon_days, probability, base_logit, risk, arr, currency, renewal_date, renewing, drivers, data_completeness, missing_signals, predicted_at)
  select $1, x.customer_id, $2, $3, x.probability, x.base_logit, x.risk, x.arr, x.currency, x.renewal_date, x.renewing, x.drivers, x.data_completeness, x.missing_signals, $5::timestamptz
  from jsonb_to_recordset($4::jsonb) as x(customer_id text, probability float8, base_logit float8, risk text, arr bigint, currency text, renewal_date date, renewing boolean,
                                          drivers jsonb, data_completeness real, missing_signals jsonb)
  on conflict (org_id, customer_id) do update set
    model_id = excluded.model_id, horizon_days = excluded.horizon_days, probability = excluded.probability, base_logit = excluded.base_logit,
    previous_risk = case when p.risk <> excluded.risk then p.risk else p.previous_risk end,
    risk = excluded.risk, arr = excluded.arr, currency = excluded.currency, renewal_date = excluded.renewal_date, renewing = excluded.renewing, drivers = excluded.drivers,
    data_completeness = excluded.data_completeness, missing_signals = excluded.missing_signals, predicted_at = excluded.predicted_at`;

export interface RecomputeResult {
  /** Null when there was nothing to score. */
  modelId: string | null;
  scored: number;
  removed: number;
}

/** Who a recompute scores: every customer of the organisation, the stale ones, or those named. */
export type RecomputeScope = 'all' | 'stale' | { customerIds: string[] };

/** Customers per chunk at most: one chunk is one transaction, and on the embedded database one
 * stretch of the server's main thread. On PGlite at the demo's density (10,000 customers), a
 * rescore's chunks of 250 took 64 ms (median; 110 ms at most) and of 500, 125 ms (185 ms); the
 * first scoring of everyone (inserts) takes about 1.7 times as long. bench/predictions.ts reports
 * the longest. */
export const RECOMPUTE_CHUNK = 300;
/** A recompute without a fixed chunk size sizes each chunk by the time the last one took
 * (nextSizeByTime), aiming at 30 ms, 100 customers at most: a chunk's cost depends on the data and
 * on the machine's load (chunks of 300 held the embedded database for over 2 s on a busy machine).
 * At 100,000 customers, aiming at 50 ms with up to 300 let chunks reach 0.28 s and /healthz p99
 * 174 ms during a rescore; this gave 51 ms in the same time (bench:isolation). */
const CHUNK_SIZING = { targetMs: 30, min: 10, max: 100 };
const CHUNK_FIRST = 20;

export interface ChunkArgs {
  orgId: string;
  /** YYYY-MM-DD, the same for every chunk of a recompute. */
  today: string;
  scope: RecomputeScope;
  /** The chunk starts after this customer id (null: from the first). */
  after: string | null;
  /** Where the chunk before this one started (null or absent: this is the first). */
  since?: string | null;
  limit: number;
}

export interface ChunkResult extends RecomputeResult {
  /** Where the next chunk starts; null when this was the last. */
  next: string | null;
  /** How long the chunk ran in the database, when its unit says (db/units-of-work.ts timed). */
  ms?: number;
}

/**
 * Bounds the primary key (org_id, customer_id) to organisation $1 and the range of the id list in
 * parameter $n, so the key is scanned over the chunk's ids alone, whatever the planner believes.
 * With statistics taken while a table was empty (the embedded database runs no autoanalyze; a
 * PostgreSQL may run without autovacuum) `customer_id = any(...)` became a filter on a scan of all
 * the organisation's rows: 0.8 s a statement during an import of 800,000 customers on PostgreSQL,
 * the import slowed from 2,400 to 985 rows/s. Written as a row comparison, not as a range of
 * customer_id alone: only an index led by both columns can use it, so `predictions (org_id, risk)`,
 * equally cheap for `org_id = $1` in an empty table's estimates, is not taken instead. min/max run
 * once, as init plans.
 */
const WITHIN_LIST = (alias: string, n: number) =>
  `(${alias}org_id, ${alias}customer_id) between ($1, (select min(x) from unnest($${n}::text[]) x)) and ($1, (select max(x) from unnest($${n}::text[]) x))`;

/** The statements of a chunk that find rows by a list of customer ids (exported for the test of their plans). */
export const CHUNK_STATEMENTS = {
  /** $1 organisation, $2 the chunk's ids: their stale marks. */
  marks: `select customer_id, changed_at::text from risk_input_changes where org_id = $1 and customer_id = any($2::text[]) and ${WITHIN_LIST('', 2)}`,
  /** $1 organisation, $2 customers, $3 the changed_at each mark had when read: removed only if unchanged. */
  answerMarks: `delete from risk_input_changes r
       where r.org_id = $1 and r.customer_id = any($2::text[]) and ${WITHIN_LIST('r.', 2)}
         and r.changed_at = (select m.changed_at::timestamptz from unnest($2::text[], $3::text[]) as m(customer_id, changed_at) where m.customer_id = r.customer_id)`,
  /** $1 organisation, $2 the chunk's ids, $3 those scored: the predictions of the others go. */
  dropUnscored: `delete from predictions where org_id = $1 and customer_id = any($2::text[]) and ${WITHIN_LIST('', 2)} and not (customer_id = any($3::text[])) returning customer_id`,
};

/** The next `limit` customer ids of the scope after `after`, in id order. */
async function chunkIds(db: Db, args: ChunkArgs): Promise<string[]> {
  const after = args.after ?? '';
  if (args.scope === 'all') {
    const rows = await queryText<{ id: string }>(db, `select id from customers where org_id = $1 and id > $2 order by id limit $3`, [
      args.orgId,
      after,
      args.limit,
    ]);
    return rows.map((r) => r.id);
  }
  if (args.scope === 'stale') {
    const rows = await queryText<{ customer_id: string }>(
      db,
      `select customer_id from risk_input_changes where org_id = $1 and customer_id > $2 order by customer_id limit $3`,
      [args.orgId, after, args.limit],
    );
    return rows.map((r) => r.customer_id);
  }
  return [...new Set(args.scope.customerIds)]
    .filter((id) => id > after)
    .sort()
    .slice(0, args.limit);
}

/**
 * Scores one chunk of a recompute, in `db`'s transaction: the next `limit` customers of the scope
 * in id order, each one's prediction written, those no longer scored losing theirs, and the stale
 * marks of the chunk answered (read first, removed with the writes only if unchanged: a mark
 * commits with the change it marks, so the features read after it see that change, and a mark made or
 * renewed meanwhile, or after the chunk, survives for the next run). Safe to repeat: a chunk run
 * twice writes what the data says at the time.
 */
export async function scoreChunk(db: Db, args: ChunkArgs, both: Settings): Promise<ChunkResult> {
  const settings = both.predictions;
  // The marks the chunk before this one deleted are read once more, now that their deletion has
  // committed: the embedded database then marks their index entries dead. It runs no autovacuum,
  // and every later scan from an organisation's first mark (the next stale recompute's first
  // chunk, the sweep's probe) visited the row of each mark deleted since: 0.3 s holding every
  // tenant's requests after an import of 160,000 customers.
  if (args.since !== undefined && args.after !== null) {
    await queryText(db, `select count(*) from risk_input_changes where org_id = $1 and customer_id > $2 and customer_id <= $3`, [
      args.orgId,
      args.since ?? '',
      args.after,
    ]);
  }
  const ids = await chunkIds(db, args);
  if (ids.length === 0) return { modelId: null, scored: 0, removed: 0, next: null };
  const marks = await queryText<{ customer_id: string; changed_at: string }>(db, CHUNK_STATEMENTS.marks, [args.orgId, ids]);
  const model = await activeModel(db, args.orgId, settings);
  const rows = await featuresAt(db, {
    orgId: args.orgId,
    day: args.today,
    horizonDays: settings.horizonDays,
    population: 'scored',
    graceDays: settings.graceDays,
    customerIds: ids,
  });
  const items = rows.map((row) => {
    const { probability, base, drivers } = groupedDrivers(model.parameters, row);
    return {
      customer_id: row.customerId,
      probability,
      base_logit: base,
      risk: riskBand(probability, settings.riskBands),
      arr: Math.round(row.arr),
      currency: row.currency,
      renewal_date: row.renewalDate,
      renewing: row.renewing,
      drivers,
      data_completeness: 1 - row.missing.length / SOURCES,
      missing_signals: row.missing satisfies Source[],
    };
  });
  await fireRiskRises(
    db,
    { orgId: args.orgId, changed: marks.map((m) => m.customer_id), scores: items, bands: settings.riskBands },
    both.actions,
  );
  // The writes take the organisation's locks in the order a record write does (its triggers: the
  // data version, then the stale marks, then the prediction version), or the two deadlock: a
  // contract written while a chunk ran held a mark the chunk was deleting, waiting for the
  // prediction version the chunk held (PostgreSQL 40P01, seen by the fuzzer).
  await queryText(db, `select 1 from org_data_versions where org_id = $1 for update`, [args.orgId]);
  if (marks.length > 0) {
    // Found by the primary key, whatever the planner believes: joined to the list instead, with
    // statistics taken before an import (the embedded database runs no autoanalyze) it hashed every
    // mark of the organisation, 26 ms at 30,000 marks and over 100 ms a chunk after an import of
    // 160,000 customers, however small the chunk.
    await queryText(db, CHUNK_STATEMENTS.answerMarks, [args.orgId, marks.map((m) => m.customer_id), marks.map((m) => m.changed_at)]);
  }
  if (items.length > 0)
    await queryText(db, UPSERT, [args.orgId, model.id, settings.horizonDays, JSON.stringify(items), new Date().toISOString()]);
  const removed = await queryText<{ customer_id: string }>(db, CHUNK_STATEMENTS.dropUnscored, [
    args.orgId,
    ids,
    items.map((i) => i.customer_id),
  ]);
  return { modelId: model.id, scored: items.length, removed: removed.length, next: ids.length === args.limit ? ids.at(-1)! : null };
}

/**
 * Runs once, on no customer, every statement a chunk runs, in a transaction rolled back: the
 * embedded database's first chunk after a start plans the features statement with cold catalog
 * caches and compiles the triggers' functions, 260 ms for 10 customers against 50–100 ms for the
 * next ones (PGlite, 50,000 customers, a busy machine), all of it holding every tenant's requests.
 * `serve` runs it before it listens.
 */
export async function warmScoring(db: Db, settings: PredictionSettings): Promise<void> {
  const none: string[] = [];
  await transaction(db, async (t) => {
    await featuresAt(t, {
      orgId: '',
      day: new Date().toISOString().slice(0, 10),
      horizonDays: settings.horizonDays,
      population: 'scored',
      graceDays: settings.graceDays,
      customerIds: none,
    });
    await queryText(t, CHUNK_STATEMENTS.marks, ['', none]);
    await queryText(t, CHUNK_STATEMENTS.answerMarks, ['', none, none]);
    await queryText(t, UPSERT, ['', '', settings.horizonDays, '[]', new Date().toISOString()]);
    await queryText(t, CHUNK_STATEMENTS.dropUnscored, ['', none, none]);
    throw new WarmedUp();
  }).catch((error: unknown) => {
    if (!(error instanceof WarmedUp)) throw error;
  });
}
class WarmedUp extends Error {}

/** Runs a recompute chunk after chunk through `score` (scoreChunk on a database, or a job's unit),
 * each chunk starting where the last one ended: of `chunkSize` customers, or sized by the time the
 * last chunk took (nextChunkSize) when none is given. */
export async function recomputeInChunks(
  score: (args: ChunkArgs) => Promise<ChunkResult>,
  args: Omit<ChunkArgs, 'after' | 'limit'> & { chunkSize?: number },
): Promise<RecomputeResult & { chunks: number }> {
  const { chunkSize, ...rest } = args;
  const total = { modelId: null as string | null, scored: 0, removed: 0, chunks: 0 };
  let after: string | null = null;
  let since: string | null = null;
  let limit = chunkSize ?? CHUNK_FIRST;
  do {
    const started = performance.now();
    const chunk = await score({ ...rest, after, since, limit });
    since = after;
    if (chunkSize === undefined) limit = nextSizeByTime(limit, chunk.ms ?? performance.now() - started, CHUNK_SIZING);
    total.modelId = chunk.modelId ?? total.modelId;
    total.scored += chunk.scored;
    total.removed += chunk.removed;
    total.chunks++;
    after = chunk.next;
  } while (after !== null);
  return total;
}

/** Scores `customerIds` (every customer when absent; the stale ones for `'stale'`) of the
 * organisation as of `today`, chunk after chunk on `db` (in its transaction if it is one; the job
 * kinds run each chunk as a transaction of its own), with `settings` (default: the defaults).
 * Customers no longer scored lose their prediction. */
export async function recomputePredictions(
  db: Db,
  args: { orgId: string; today: string; customerIds?: string[] | 'stale'; settings?: Settings; chunkSize?: number },
): Promise<RecomputeResult> {
  const scope: RecomputeScope = args.customerIds === 'stale' ? 'stale' : args.customerIds ? { customerIds: args.customerIds } : 'all';
  const settings = args.settings ?? DEFAULT_SETTINGS;
  const { chunks: _chunks, ...result } = await recomputeInChunks((chunk) => scoreChunk(db, chunk, settings), {
    orgId: args.orgId,
    today: args.today,
    scope,
    chunkSize: args.chunkSize,
  });
  return result;
}
