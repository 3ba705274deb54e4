// Prometheus metrics (docs/operating.md "Metrics"), in a registry of our own (prom-client's default process
// metrics are not collected: on Bun 1.4.4 its event-loop figures come out as NaN and 9e9). What the
// server sees itself — every request by route template, method and status, its latency, rate-limit
// refusals by budget, webhook deliveries — is counted as it happens; what the worker thread does
// (queues, outboxes, predictions) is read from the database at each scrape, so several processes
// report the same figures and a scrape needs no door into the worker.
import { sql } from 'drizzle-orm';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { rowsOf, type Database } from '../../db/client.ts';
import { observeUnits } from '../../db/units-of-work.ts';
import type { Rules } from '../../lib/routes.ts';

export interface Metrics {
  registry: Registry;
  /** One finished request: `route` is its declared path (`/api/customers/:id`), or `(unmatched)`. */
  observeRequest(input: { route: string; method: string; status: number; seconds: number; rules: Rules }): void;
}

/** Latency buckets around what the API answers in: 1 ms to 10 s. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(database: Database): Metrics {
  const registry = new Registry();
  const requests = new Counter({
    name: 'revintel_http_requests_total',
    help: 'Requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'revintel_http_request_duration_seconds',
    help: 'Time from the request to its answer, by route template and method',
    labelNames: ['route', 'method'],
    buckets: BUCKETS,
    registers: [registry],
  });
  const refused = new Counter({
    name: 'revintel_rate_limit_refusals_total',
    help: 'Requests refused with 429, by the budget they were counted on',
    labelNames: ['budget'],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'revintel_webhook_deliveries_total',
    help: 'Deliveries to the platform webhooks, accepted (2xx) or refused, by route and status (401 signature, 404 unknown connector, 413 size, 429 budget, 400 body)',
    labelNames: ['route', 'outcome', 'status'],
    registers: [registry],
  });

  /** A gauge set from one query at each scrape; a failing query leaves it empty and says so. */
  const scrapeFailures = new Counter({
    name: 'revintel_metrics_query_failures_total',
    help: 'Queries of a scrape that failed (the database is down or slow)',
    labelNames: ['metric'],
    registers: [registry],
  });
  function fromDatabase<Row extends Record<string, unknown>>(
    name: string,
    help: string,
    labelNames: string[],
    query: ReturnType<typeof sql>,
    set: (gauge: Gauge, rows: Row[]) => void,
  ) {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        try {
          set(this, rowsOf<Row>(await database.db.execute(query)));
        } catch {
          scrapeFailures.inc({ metric: name });
        }
      },
    });
  }
  const byLabels = (gauge: Gauge, rows: Record<string, unknown>[], labels: string[]) => {
    for (const row of rows) gauge.set(Object.fromEntries(labels.map((l) => [l, String(row[l])])), Number(row.n));
  };

  fromDatabase(
    'revintel_ticket_events',
    'Ticket events waiting (pending) or given up on (dead)',
    ['status'],
    sql`select status, count(*)::int as n from ticket_events where status in ('pending', 'dead') group by status`,
    (g, rows) => byLabels(g, rows, ['status']),
  );
  fromDatabase(
    'revintel_ticket_queue_oldest_pending_seconds',
    'How long the oldest pending ticket event has waited',
    [],
    sql`select coalesce(extract(epoch from now() - min(received_at)), 0)::float8 as n from ticket_events where status = 'pending'`,
    (g, rows) => g.set(Number(rows[0]?.n ?? 0)),
  );
  fromDatabase(
    'revintel_jobs',
    'Background jobs queued, running or dead, by kind',
    ['kind', 'state'],
    sql`select kind, state, count(*)::int as n from jobs where state in ('queued', 'running', 'dead') group by kind, state`,
    (g, rows) => byLabels(g, rows, ['kind', 'state']),
  );
  fromDatabase(
    'revintel_job_queue_oldest_due_seconds',
    'How long the oldest due job has waited past its time',
    [],
    sql`select coalesce(extract(epoch from now() - min(run_at)), 0)::float8 as n from jobs where state = 'queued' and run_at <= now()`,
    (g, rows) => g.set(Math.max(0, Number(rows[0]?.n ?? 0))),
  );
  fromDatabase(
    'revintel_outbox',
    "Outbound sends pending or dead, by platform (events: the organisations' endpoints)",
    ['platform', 'status'],
    sql`
      select platform, status, count(*)::int as n from chat_sends where status in ('pending', 'dead') group by platform, status
      union all select 'events', status, count(*)::int from event_deliveries where status in ('pending', 'dead') group by status`,
    (g, rows) => byLabels(g, rows, ['platform', 'status']),
  );
  fromDatabase(
    'revintel_predictions_stale_customers',
    'Customers whose inputs changed since their prediction (waiting for the recompute)',
    [],
    sql`select count(*)::int as n from risk_input_changes`,
    (g, rows) => g.set(Number(rows[0]?.n ?? 0)),
  );
  fromDatabase(
    'revintel_predictions_oldest_stale_seconds',
    'How long the oldest of those has waited',
    [],
    sql`select coalesce(extract(epoch from now() - min(changed_at)), 0)::float8 as n from risk_input_changes`,
    (g, rows) => g.set(Math.max(0, Number(rows[0]?.n ?? 0))),
  );

  fromDatabase(
    'revintel_database_size_bytes',
    "The database's size on disk",
    [],
    sql`select pg_database_size(current_database())::float8 as n`,
    (g, rows) => g.set(Number(rows[0]?.n ?? 0)),
  );
  // The pool as PostgreSQL sees it (postgres.js keeps its counts to itself): every revintel
  // process's connections to this database, by state — "idle in transaction" piling up is the
  // sign of a leak. The embedded database has one connection, its owner: database_up says it all.
  if (database.kind === 'postgres') {
    fromDatabase(
      'revintel_database_connections',
      'Connections of revintel processes to this database (every instance), by state',
      ['state'],
      sql`select coalesce(state, 'unknown') as state, count(*)::int as n from pg_stat_activity where application_name = 'revintel' and datname = current_database() group by 1`,
      (g, rows) => byLabels(g, rows, ['state']),
    );
  }

  new Gauge({
    name: 'revintel_database_up',
    help: `Whether the ${database.kind === 'embedded' ? 'embedded database (PGlite)' : 'PostgreSQL pool'} answers a query within 2 s`,
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      const up = database.failure?.()
        ? 0
        : await database.ping(2000).then(
            () => 1,
            () => 0,
          );
      this.set({ kind: database.kind }, up);
    },
  });
  new Gauge({
    name: 'revintel_process_memory_bytes',
    help: "This process's memory: rss (resident set, every thread), heap_used and heap_total (the main thread's JavaScript heap: live objects, and its size), external (buffers outside that heap held by its objects, WebAssembly memory included, by their length)",
    labelNames: ['type'],
    registers: [registry],
    collect() {
      for (const [type, bytes] of Object.entries(memoryFigures())) this.set({ type }, bytes);
    },
  });

  // Units of work run here (db/units-of-work.ts): on the embedded database each one holds the database, so
  // the longest one is the longest any request may have waited behind it.
  const unitDurations = new Histogram({
    name: 'revintel_unit_duration_seconds',
    help: 'Units of work run by this process (one transaction each), by unit name',
    labelNames: ['unit'],
    buckets: BUCKETS,
    registers: [registry],
  });
  const unitMax = new Gauge({
    name: 'revintel_unit_duration_max_seconds',
    help: 'The longest unit of work of each name since the process started',
    labelNames: ['unit'],
    registers: [registry],
  });
  const longest = new Map<string, number>();
  observeUnits((unit, seconds) => {
    unitDurations.observe({ unit }, seconds);
    if (seconds > (longest.get(unit) ?? 0)) {
      longest.set(unit, seconds);
      unitMax.set({ unit }, seconds);
    }
  });

  return {
    registry,
    observeRequest({ route, method, status, seconds, rules }) {
      requests.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
      if (status === 429) refused.inc({ budget: rules.counted });
      if (rules.auth === 'platform-signature' || route.startsWith('/api/webhooks/'))
        deliveries.inc({ route, outcome: status >= 200 && status < 300 ? 'accepted' : 'refused', status: String(status) });
    },
  };
}

/**
 * The process's memory, each figure what its name says. Bun 1.4.4's `process.memoryUsage()` gives
 * as `heapUsed` JavaScriptCore's heap size after the last collection, which counts the "extra
 * memory" of buffers and WebAssembly memory as well as the objects: with PGlite's wasm memory it
 * read 300 MB beside an RSS of 231 MB, and far above `heapTotal`. That extra memory is `external`,
 * so the objects are the difference (as of the last collection; never below 0 nor above the heap).
 */
function memoryFigures(): { rss: number; heap_used: number; heap_total: number; external: number } {
  const usage = process.memoryUsage();
  return {
    rss: usage.rss,
    heap_used: Math.min(usage.heapTotal, Math.max(0, usage.heapUsed - usage.external)),
    heap_total: usage.heapTotal,
    external: usage.external,
  };
}
