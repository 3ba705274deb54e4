// Predictions as the API shows them, always scoped to one organisation: the list with its filters,
// sorts and keyset paging, its `meta` (the model in force, how many customers are stale, and the
// per-currency summary over the whole filtered set), and one customer's prediction.
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.ts';
import { andAll, isoTime, limitTo } from '../../db/keyset.ts';
import type { RiskBand } from '../../db/schema/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { decodeCursor, type CursorKind } from '../../lib/pagination.ts';
import type { PredictionSort } from './model.ts';
import { customerMatches } from '../customers/service.ts';
import { asGroups, listDrivers, type GroupDriver } from './drivers.ts';

export interface PredictionRow {
  customer_id: string;
  customer_name: string;
  probability: number;
  base_logit: number;
  risk: RiskBand;
  previous_risk: RiskBand | null;
  arr: string | number;
  currency: string;
  arr_at_risk: string | number;
  horizon_days: number;
  renewal_date: string | null;
  renewing: boolean | null;
  drivers: GroupDriver[];
  data_completeness: number;
  missing_signals: string[];
  stale: boolean;
  model_id: string;
  model_kind: 'prior' | 'prior_recalibrated' | 'logistic';
  predicted_at: string;
  /** The list's sort key at full precision, for the cursor (lists only). */
  sort_value?: string | number;
}

export interface PredictionFilters {
  risk?: RiskBand[];
  minProbability?: number;
  customerId?: string;
  currency?: string;
  csmEmail?: string;
  /** Name, domain or e-mail contains it. */
  q?: string;
}

/** Each sort: its value (exact, for the cursor), its order, and how a cursor continues it. Ties
 * are broken by customer id in the sort's direction. */
const SORTS: Record<PredictionSort, { value: SQL; kind: CursorKind; descending: boolean; cast: string }> = {
  '-arr_at_risk': { value: sql`round(p.arr * p.probability)::bigint`, kind: 'integer', descending: true, cast: 'bigint' },
  // The float's shortest exact text: a cursor compares equal to the row it came from.
  '-probability': { value: sql`p.probability::text`, kind: 'text', descending: true, cast: 'float8' },
  renewal_date: { value: sql`coalesce(p.renewal_date, '9999-12-31')::text`, kind: 'text', descending: false, cast: 'date' },
};

function filtersSql(orgId: string, filters: PredictionFilters): SQL {
  const where: SQL[] = [];
  if (filters.risk?.length)
    where.push(
      sql`p.risk in (${sql.join(
        filters.risk.map((r) => sql`${r}`),
        sql`, `,
      )})`,
    );
  if (filters.minProbability !== undefined) where.push(sql`p.probability >= ${filters.minProbability}`);
  if (filters.customerId) where.push(sql`p.customer_id = ${filters.customerId}`);
  if (filters.currency) where.push(sql`p.currency = ${filters.currency}`);
  if (filters.csmEmail) where.push(sql`lower(c.csm->>'email') = lower(${filters.csmEmail})`);
  if (filters.q) where.push(customerMatches(filters.q));
  return sql`from predictions p join customers c on c.org_id = p.org_id and c.id = p.customer_id join prediction_models m on m.id = p.model_id
    where p.org_id = ${orgId} and c.deleted_at is null ${andAll(where)}`;
}

/** `full`: every driver with its features (one prediction); a list item's come without them. */
const ITEM_COLUMNS = (full: boolean) => sql`
  p.customer_id, c.name as customer_name, p.probability, p.base_logit, p.risk, p.previous_risk, p.arr, p.currency,
  round(p.arr * p.probability)::bigint as arr_at_risk, p.horizon_days, p.renewal_date::text as renewal_date, p.renewing,
  ${full ? sql`p.drivers` : sql`(select coalesce(jsonb_agg(d - 'features' order by n), '[]'::jsonb) from jsonb_array_elements(p.drivers) with ordinality as x(d, n))`} as drivers,
  p.data_completeness, p.missing_signals,
  exists (select 1 from risk_input_changes r where r.org_id = p.org_id and r.customer_id = p.customer_id) as stale,
  p.model_id, m.kind as model_kind, ${isoTime(sql`p.predicted_at`)} as predicted_at`;

export async function listPredictions(
  db: Db,
  input: { orgId: string; filters: PredictionFilters; sort: PredictionSort; limit: number; cursor?: string },
): Promise<PredictionRow[]> {
  const sort = SORTS[input.sort];
  const direction = sort.descending ? sql`desc` : sql`asc`;
  const orderValue =
    sort.cast === 'float8' ? sql`p.probability` : sort.cast === 'date' ? sql`coalesce(p.renewal_date, '9999-12-31')` : sort.value;
  let after = sql``;
  if (input.cursor) {
    const position = decodeCursor(input.cursor, input.sort, sort.kind);
    const value = sql`${String(position.value)}::${sql.raw(sort.cast)}`;
    after = sort.descending
      ? sql`and (${orderValue}, p.customer_id) < (${value}, ${position.id})`
      : sql`and (${orderValue}, p.customer_id) > (${value}, ${position.id})`;
  }
  return queryRows<PredictionRow>(
    db,
    sql`select ${ITEM_COLUMNS(false)}, ${sort.value} as sort_value
      ${filtersSql(input.orgId, input.filters)} ${after}
      order by ${orderValue} ${direction}, p.customer_id ${direction} ${limitTo(input.limit + 1)}`,
  );
}

/** What a kept predictions page is kept under: the organisation's data version (customer names,
 * CSMs, deletions) and its prediction version (predictions, stale marks, models; migration 0023). */
export async function predictionsVersion(db: Db, orgId: string): Promise<string> {
  const [row] = await queryRows<{ data: string | number; predictions: string | number }>(
    db,
    sql`select coalesce((select version from org_data_versions where org_id = ${orgId}), 0) as data,
               coalesce((select version from org_prediction_versions where org_id = ${orgId}), 0) as predictions`,
  );
  return `${row?.data ?? 0}.${row?.predictions ?? 0}`;
}

/** The model in force, with its out-of-time test: its AUC and the scorecard's on the same rows,
 * each with its 95 % interval. */
interface ModelMeta {
  id: string;
  kind: string;
  trained_at: string;
  backtest_auc: number | null;
  backtest_auc_ci95: [number, number] | null;
  backtest_prior_auc: number | null;
  backtest_prior_auc_ci95: [number, number] | null;
}

export interface PredictionsMeta {
  model: ModelMeta | null;
  stale_customers: number;
  summary: {
    currency: string;
    customers: number;
    total_arr: number;
    arr_at_risk: number;
    expected_churned_customers: number;
    expected_grr: number | null;
    by_risk: Record<RiskBand, { customers: number; arr: number }>;
  }[];
}

export async function predictionsMeta(db: Db, orgId: string, filters: PredictionFilters, horizonDays: number): Promise<PredictionsMeta> {
  const [model] = await queryRows<ModelMeta>(
    db,
    sql`select id, kind, ${isoTime(sql`trained_at`)} as trained_at, (metrics->'backtest'->>'auc')::float8 as backtest_auc,
          metrics->'backtest'->'auc_ci95' as backtest_auc_ci95, (metrics->'backtest'->>'prior_auc')::float8 as backtest_prior_auc,
          metrics->'backtest'->'prior_auc_ci95' as backtest_prior_auc_ci95
        from prediction_models where org_id = ${orgId} and horizon_days = ${horizonDays} and status = 'active'`,
  );
  const [stale] = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from risk_input_changes where org_id = ${orgId}`);
  const bands = ['low', 'medium', 'high', 'critical'] as const;
  const rows = await queryRows<Record<string, string | number>>(
    db,
    sql`select p.currency, count(*)::int as customers, coalesce(sum(p.arr), 0)::bigint as total_arr,
          coalesce(sum(round(p.arr * p.probability)), 0)::bigint as arr_at_risk, coalesce(sum(p.probability), 0)::float8 as expected_churned,
          ${sql.join(
            bands.map(
              (b) =>
                sql`count(*) filter (where p.risk = ${b})::int as ${sql.identifier(`${b}_customers`)}, coalesce(sum(p.arr) filter (where p.risk = ${b}), 0)::bigint as ${sql.identifier(`${b}_arr`)}`,
            ),
            sql`, `,
          )}
        ${filtersSql(orgId, filters)}
        group by p.currency order by p.currency`,
  );
  return {
    model: model ?? null,
    stale_customers: stale?.n ?? 0,
    summary: rows.map((r) => {
      const total = Number(r.total_arr);
      const atRisk = Number(r.arr_at_risk);
      return {
        currency: String(r.currency),
        customers: Number(r.customers),
        total_arr: total,
        arr_at_risk: atRisk,
        expected_churned_customers: Number(r.expected_churned),
        expected_grr: total > 0 ? 1 - atRisk / total : null,
        by_risk: Object.fromEntries(
          bands.map((b) => [b, { customers: Number(r[`${b}_customers`]), arr: Number(r[`${b}_arr`]) }]),
        ) as Record<RiskBand, { customers: number; arr: number }>,
      };
    }),
  };
}

/** One customer's prediction with every driver; 404 `not_found` for an unknown customer,
 * `not_scored` for one without a prediction. */
export async function getPrediction(db: Db, orgId: string, customerId: string): Promise<PredictionRow> {
  const [row] = await queryRows<PredictionRow>(db, sql`select ${ITEM_COLUMNS(true)} ${filtersSql(orgId, { customerId })}`);
  if (row) return row;
  const [customer] = await queryRows<{ id: string }>(
    db,
    sql`select id from customers where org_id = ${orgId} and id = ${customerId} and deleted_at is null`,
  );
  if (!customer) throw notFound(`Customer ${customerId}`);
  throw new AppError(
    'not_scored',
    `Customer ${customerId} has no churn prediction: it is churned, or has no contract that counts today or ended within the grace period`,
  );
}

/** A driver with its keys in the order the API documents (jsonb keeps its own order). */
const presentDriver = (d: GroupDriver, full: boolean) => ({
  group: d.group,
  label: d.label,
  impact: d.impact,
  points: d.points,
  at_reference: d.at_reference,
  ...(full
    ? {
        features: (d.features ?? []).map((f) => ({
          feature: f.feature,
          label: f.label,
          value: f.value,
          ...(f.reference === undefined ? {} : { reference: f.reference }),
          impact: f.impact,
        })),
      }
    : {}),
});

/** One prediction with every driver group and its features. */
export function presentPrediction(row: PredictionRow) {
  return present(
    row,
    asGroups(row.drivers, row.base_logit).map((d) => presentDriver(d, true)),
  );
}

/** A list item: the five strongest driver groups and `other`, the sum of the rest. */
export function presentPredictionItem(row: PredictionRow) {
  return present(
    row,
    listDrivers(row.drivers, row.base_logit).map((d) => presentDriver(d, false)),
  );
}

function present(row: PredictionRow, drivers: ReturnType<typeof presentDriver>[]) {
  const { sort_value: _sort, ...rest } = row;
  return {
    ...rest,
    arr: Number(row.arr),
    arr_at_risk: Number(row.arr_at_risk),
    drivers,
    data_completeness: Math.round(row.data_completeness * 1e6) / 1e6,
  };
}

export interface ModelRow {
  id: string;
  kind: 'prior' | 'prior_recalibrated' | 'logistic';
  status: 'active' | 'rejected' | 'retired';
  horizon_days: number;
  parameters: { base: number; features: { key: string; weight: number; centre: number }[] };
  metrics: Record<string, unknown>;
  reject_reason: string | null;
  trained_at: string;
  sort_value: string;
}

const MODEL_COLUMNS = sql`m.id, m.kind, m.status, m.horizon_days, m.parameters, m.metrics, m.reject_reason, ${isoTime(sql`m.trained_at`)} as trained_at, m.trained_at::text as sort_value`;

/** The organisation's models, newest first. */
export async function listModels(db: Db, input: { orgId: string; limit: number; cursor?: string }): Promise<ModelRow[]> {
  let after = sql``;
  if (input.cursor) {
    const position = decodeCursor(input.cursor, 'trained_at', 'timestamp');
    after = sql`and (m.trained_at, m.id) < (${position.value}::timestamptz, ${position.id})`;
  }
  return queryRows<ModelRow>(
    db,
    sql`select ${MODEL_COLUMNS} from prediction_models m where m.org_id = ${input.orgId} ${after} order by m.trained_at desc, m.id desc ${limitTo(input.limit + 1)}`,
  );
}

export async function getModel(db: Db, orgId: string, id: string): Promise<ModelRow> {
  const [row] = await queryRows<ModelRow>(
    db,
    sql`select ${MODEL_COLUMNS} from prediction_models m where m.org_id = ${orgId} and m.id = ${id}`,
  );
  if (!row) throw notFound(`Model ${id}`);
  return row;
}

export function presentModel(row: ModelRow) {
  const { sort_value: _sort, ...rest } = row;
  return rest;
}
