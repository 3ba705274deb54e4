// Inbound ticket events stored by group commit (db/group-commit.ts): a burst of webhook deliveries
// goes in a few multi-row inserts, each answered with its own id or, for a re-delivery, the first
// copy's.
import { queryText, type Db } from '../../../db/client.ts';
import { createGroupCommit, type GroupCommit } from '../../../db/group-commit.ts';
import type { EventSource } from '../../../db/schema/index.ts';

export interface InboundEvent {
  id: string;
  orgId: string;
  connectorId: string;
  source: EventSource;
  /** The body as received. */
  body: string;
  /** The request headers an adapter may need. */
  headers: Record<string, string>;
  /** A re-delivery with the same key is the same event: stored once, answered with the first id. */
  dedupeKey: string | null;
  batchId?: string | null;
  itemIndex?: number | null;
}

export interface Stored {
  /** The event's id: this event's, or the first copy's when it was a re-delivery. */
  id: string;
  duplicate: boolean;
}

export type EventWriter = GroupCommit<InboundEvent, Stored>;

/** One statement for a whole batch: the columns as arrays, unnested into rows. */
const INSERT_NEW = `
  insert into ticket_events (id, org_id, connector_id, source, body, headers, dedupe_key, batch_id, item_index)
  select e.id, e.org_id, e.connector_id, e.source, e.body, e.headers::jsonb, e.dedupe_key, e.batch_id, e.item_index
  from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[])
    as e(id, org_id, connector_id, source, body, headers, dedupe_key, batch_id, item_index)`;
/** The same for a batch where some event carries a delivery id: a repeated one is skipped. The
 * arbiter's speculative insertion costs PostgreSQL about 15% more per row, so a batch without
 * delivery ids (most platforms send none) does without it. */
const INSERT = `${INSERT_NEW}
  on conflict (connector_id, dedupe_key) where dedupe_key is not null do nothing
  returning id`;
const INSERT_ALL = `${INSERT_NEW}
  returning id`;

/** The first copies of events whose dedupe key was already taken. */
const FIND_FIRST = `
  select e.connector_id, e.dedupe_key, e.id from ticket_events e
  join unnest($1::text[], $2::text[]) as k(connector_id, dedupe_key) on e.connector_id = k.connector_id and e.dedupe_key = k.dedupe_key`;

/** Inserts `events` in one statement; reports which were new and which repeated a stored one. */
export async function insertEvents(db: Db, events: InboundEvent[]): Promise<Stored[]> {
  const column = <T>(pick: (e: InboundEvent) => T) => events.map(pick);
  const mayRepeat = events.some((e) => e.dedupeKey !== null);
  const inserted = await queryText<{ id: string }>(db, mayRepeat ? INSERT : INSERT_ALL, [
    column((e) => e.id),
    column((e) => e.orgId),
    column((e) => e.connectorId),
    column((e) => e.source),
    column((e) => e.body),
    column((e) => JSON.stringify(e.headers)),
    column((e) => e.dedupeKey),
    column((e) => e.batchId ?? null),
    column((e) => e.itemIndex ?? null),
  ]);
  if (inserted.length === events.length) return events.map((e) => ({ id: e.id, duplicate: false }));
  // Some were re-deliveries (or repeated within this batch): answer them with the stored copy.
  const fresh = new Set(inserted.map((row) => row.id));
  const repeated = events.filter((e) => !fresh.has(e.id));
  const firsts = await queryText<{ connector_id: string; dedupe_key: string; id: string }>(db, FIND_FIRST, [
    repeated.map((e) => e.connectorId),
    repeated.map((e) => e.dedupeKey),
  ]);
  const firstOf = new Map(firsts.map((row) => [`${row.connector_id}\0${row.dedupe_key}`, row.id]));
  return events.map((e) => {
    if (fresh.has(e.id)) return { id: e.id, duplicate: false };
    const first = firstOf.get(`${e.connectorId}\0${e.dedupeKey}`);
    if (!first) throw new Error(`event ${e.id} was neither stored nor found as a duplicate`);
    return { id: first, duplicate: true };
  });
}

/** `onCommitted` runs after each batch is durable with the number of new events (it wakes the
 * worker). `parallel`: inserts in flight at once (db/group-commit.ts). */
export function createEventWriter(db: Db, onCommitted: (count: number) => void, options: { parallel?: number } = {}): EventWriter {
  return createGroupCommit<InboundEvent, Stored>({
    writeBatch: (events) => insertEvents(db, events),
    onCommitted: (stored) => onCommitted(stored.filter((s) => !s.duplicate).length),
    sizeOf: (event) => event.body.length,
    parallel: options.parallel,
  });
}
