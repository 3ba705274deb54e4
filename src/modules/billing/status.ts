// A billing connector's status (docs/billing.md "Status"): its events by state, the last one received,
// how far the records lag behind what was received, what its last backfill did, and its dead events,
// which an admin replays once the cause is fixed. Read from the event store itself, so the answer is
// what the apply job will see, whoever stored the events (webhook, job, CLI).
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { BILLING_OBJECT_TYPES, type BillingConnector, type BillingEventState, type BillingObjectType } from '../../db/schema/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { recordAudit } from '../audit/service.ts';
import { queueBillingApply } from './apply-job.ts';
import { connectorStatus, findBillingConnector, presentBillingConnector } from './connectors.ts';
import type { BillingConnectorStatusView } from './model.ts';
import { loadSync, presentSync } from './sync.ts';

/** Dead events listed in a status; the rest are counted. */
export const DEAD_EVENTS_SHOWN = 20;

type SyncOutcome = NonNullable<BillingConnectorStatusView['last_sync_outcome']>;

/** A timestamp column as ISO 8601 text, made by the database: postgres.js and PGlite hand back
 * timestamps from raw SQL differently (a Date, or text JavaScript does not always parse). */
const isoOf = (column: string) => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/**
 * What a backfill did, from the events it stored (source `sync`, received while it ran): an object
 * is created when nothing of it was stored before the run, updated otherwise, counted once it is
 * applied; an object read but not applied (ignored, dead, or pending after a failure) is skipped,
 * grouped by reason. `unchanged` and `read` are the run's own counts.
 */
async function syncOutcome(
  db: Db,
  connectorId: string,
  sync: { id: string; report: Record<string, Record<string, number>> },
): Promise<SyncOutcome> {
  const rows = rowsOf<{
    object_type: BillingObjectType | null;
    state: BillingEventState;
    reason: string | null;
    created: number;
    updated: number;
    n: number;
  }>(
    await db.execute(sql`
      with run as (select created_at, coalesce(finished_at, now()) as until from billing_syncs where id = ${sync.id}),
      stored as (
        select e.object_type, e.object_id, e.state, e.detail,
          exists (select 1 from billing_events p
                  where p.connector_id = e.connector_id and p.object_type = e.object_type and p.object_id = e.object_id
                    and p.received_at < run.created_at) as seen_before
        from billing_events e, run
        where e.connector_id = ${connectorId} and e.source = 'sync' and e.received_at between run.created_at and run.until
      )
      select object_type, state, case when state = 'applied' then null else detail end as reason,
        count(distinct object_id) filter (where state = 'applied' and not seen_before)::int as created,
        count(distinct object_id) filter (where state = 'applied' and seen_before)::int as updated,
        count(*)::int as n
      from stored
      where state = 'applied' or detail is not null or state in ('ignored', 'dead')
      group by 1, 2, 3
      order by 1, 2, 3`),
  );
  const objects = Object.fromEntries(
    BILLING_OBJECT_TYPES.map((type) => {
      const counts = sync.report[`${type}s`] ?? {};
      return [type, { read: counts.read ?? 0, created: 0, updated: 0, unchanged: counts.unchanged ?? 0 }];
    }),
  ) as SyncOutcome['objects'];
  const skipped: SyncOutcome['skipped'] = [];
  for (const row of rows) {
    if (row.state === 'applied' && row.object_type) {
      objects[row.object_type].created += row.created;
      objects[row.object_type].updated += row.updated;
    } else skipped.push({ object_type: row.object_type, state: row.state, reason: row.reason ?? 'no reason recorded', count: row.n });
  }
  return { objects, skipped };
}

/** The connector's status as the API, the CLI and the console show it. */
export async function billingConnectorStatus(
  db: Db,
  connector: BillingConnector,
  publicUrl: string | null,
): Promise<BillingConnectorStatusView> {
  const { events, lastSyncId } = await connectorStatus(db, connector.id);
  const [last] = rowsOf<{
    id: string;
    event_id: string;
    type: string;
    source: string;
    state: BillingEventState;
    occurred_at: string;
    received_at: string;
  }>(
    await db.execute(sql`
      select id, event_id, type, source, state, ${isoOf('occurred_at')} as occurred_at, ${isoOf('received_at')} as received_at
      from billing_events
      where connector_id = ${connector.id} order by received_at desc, id desc limit 1`),
  );
  const [waiting] = rowsOf<{ oldest: string | null; lag: number | null }>(
    await db.execute(sql`
      select ${isoOf('min(received_at)')} as oldest, floor(extract(epoch from now() - min(received_at)))::int as lag
      from billing_events where connector_id = ${connector.id} and state = 'pending'`),
  );
  const dead = rowsOf<{
    id: string;
    event_id: string;
    type: string;
    object_type: BillingObjectType | null;
    object_id: string | null;
    source: string;
    attempts: number;
    detail: string | null;
    occurred_at: string;
    received_at: string;
  }>(
    await db.execute(sql`
      select id, event_id, type, object_type, object_id, source, attempts, detail,
        ${isoOf('occurred_at')} as occurred_at, ${isoOf('received_at')} as received_at from billing_events
      where connector_id = ${connector.id} and state = 'dead' order by received_at desc, id desc limit ${DEAD_EVENTS_SHOWN}`),
  );
  const loaded = lastSyncId ? await loadSync(db, { syncId: lastSyncId }) : null;
  return {
    connector: presentBillingConnector(connector, publicUrl),
    events: { pending: events.pending ?? 0, applied: events.applied ?? 0, ignored: events.ignored ?? 0, dead: events.dead ?? 0 },
    last_event: last ?? null,
    lag_seconds: Math.max(0, waiting?.lag ?? 0),
    oldest_pending_at: waiting?.oldest ?? null,
    last_sync: loaded ? presentSync(loaded.sync) : null,
    last_sync_outcome: loaded ? await syncOutcome(db, connector.id, loaded.sync) : null,
    dead,
    dead_more: Math.max(0, (events.dead ?? 0) - dead.length),
  };
}

/**
 * Sets a dead event pending again, with the other dead events of its object (an object is rebuilt
 * from all of its snapshots, and they died together: replaying one alone would rebuild it without
 * the others), their attempts reset, and queues the apply job in the same transaction. `eventRef`
 * is our id (`bev_…`) or the platform's event id. Only a dead event is replayed: a pending one is
 * still being retried, an applied or ignored one has nothing to replay.
 */
export async function replayDeadEvent(
  db: Db,
  input: { connector: string; orgId?: string; org?: string; eventRef: string; actor: string },
): Promise<{ replayed: string[]; object_type: BillingObjectType | null; object_id: string | null }> {
  const connector = await findBillingConnector(db, input.connector, { orgId: input.orgId, org: input.org });
  const [event] = rowsOf<{ id: string; state: BillingEventState; object_type: BillingObjectType | null; object_id: string | null }>(
    await db.execute(sql`
      select id, state, object_type, object_id from billing_events
      where connector_id = ${connector.id} and (id = ${input.eventRef} or event_id = ${input.eventRef})
      for update`),
  );
  if (!event) throw notFound(`Billing event ${input.eventRef}`);
  if (event.state !== 'dead')
    throw new AppError('conflict', `billing event ${input.eventRef} is ${event.state}: only a dead event is replayed`);
  const replayed = rowsOf<{ id: string }>(
    await db.execute(sql`
      update billing_events set state = 'pending', attempts = 0, detail = null
      where connector_id = ${connector.id} and state = 'dead'
        and (id = ${event.id} or (object_type = ${event.object_type} and object_id = ${event.object_id}))
      returning id`),
  ).map((row) => row.id);
  await queueBillingApply(db, connector);
  await recordAudit(db, {
    orgId: connector.orgId,
    actor: input.actor,
    action: 'billing_event.replayed',
    targetType: 'billing_connector',
    targetId: connector.id,
    details: { events: replayed, object_type: event.object_type, object_id: event.object_id },
  });
  return { replayed: replayed.sort(), object_type: event.object_type, object_id: event.object_id };
}
