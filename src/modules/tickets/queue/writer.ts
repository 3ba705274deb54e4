// Group commit for inbound ticket events. A webhook is answered only once its event is committed,
// and a commit costs a round trip and a flush of the write-ahead log whatever it holds; so events
// that arrive while one insert is in flight wait together and go in the next one, in one statement
// and one commit. When idle an event is written at once (no added latency); under load the batches
// grow by themselves with the load (no timer to tune). On PostgreSQL a second batch may be inserted
// while the first one's commit waits on the disk.
import { queryText, type Db } from '../../../db/client.ts';
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

export interface EventWriter {
  write(event: InboundEvent): Promise<Stored>;
  /** Waits for what has been handed over to be written. */
  drain(): Promise<void>;
}

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

/** Rows in one statement, at most: beyond this a batch waits for the next round. */
const MAX_BATCH_ROWS = 1000;
const MAX_BATCH_BYTES = 16 * 1024 * 1024;

interface Waiting {
  event: InboundEvent;
  resolve: (stored: Stored) => void;
  reject: (error: unknown) => void;
}

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

/** A second insert starts while one is in flight only once this many events wait for it: below
 * that they wait for the first (a commit's flush costs the same for 1 event as for 60). */
export const OVERLAP_AT = 16;

/** `onCommitted` runs after each batch is durable (it wakes the worker). `parallel`: inserts in
 * flight at once — 2 on PostgreSQL, where one batch's commit waits on the disk while the next is
 * inserted (with one, the server idled a quarter of a saturating burst); 1 on the embedded
 * database, which runs one statement at a time anyway. */
export function createEventWriter(db: Db, onCommitted: (count: number) => void, options: { parallel?: number } = {}): EventWriter {
  const parallel = Math.max(1, options.parallel ?? 1);
  let queue: Waiting[] = [];
  let inFlight = 0;
  const drained: (() => void)[] = [];

  function takeBatch(): Waiting[] {
    let bytes = 0;
    let n = 0;
    while (n < queue.length && n < MAX_BATCH_ROWS) {
      bytes += queue[n]!.event.body.length;
      if (n > 0 && bytes > MAX_BATCH_BYTES) break;
      n++;
    }
    const batch = queue.slice(0, n);
    queue = queue.slice(n);
    return batch;
  }

  async function writeBatch(batch: Waiting[]): Promise<void> {
    try {
      const stored = await insertEvents(
        db,
        batch.map((w) => w.event),
      );
      batch.forEach((w, i) => w.resolve(stored[i]!));
      onCommitted(stored.filter((s) => !s.duplicate).length);
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      // One bad row (its connector deleted a moment ago, say) must not fail its neighbours: each
      // goes again alone, and only the bad one fails.
      for (const waiting of batch) await writeBatch([waiting]);
    }
  }

  function pump(): void {
    while (queue.length > 0 && inFlight < parallel && (inFlight === 0 || queue.length >= OVERLAP_AT)) {
      inFlight++;
      // finally: a batch that failed in a way writeBatch did not foresee must still free its slot.
      void writeBatch(takeBatch()).finally(() => {
        // Let the server read the requests that arrived meanwhile before the next batch is taken.
        // Embedded PGlite answers in microtasks, without a turn of the event loop: without this
        // each event went alone (1.0 events per insert instead of ~40 under load).
        setImmediate(() => {
          inFlight--;
          pump();
          if (inFlight === 0 && queue.length === 0) for (const done of drained.splice(0)) done();
        });
      });
    }
  }

  return {
    write(event) {
      return new Promise<Stored>((resolve, reject) => {
        queue.push({ event, resolve, reject });
        pump();
      });
    },
    drain() {
      if (inFlight === 0 && queue.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => drained.push(resolve));
    },
  };
}
