// Group commit for inbound webhook events (the ticket and the billing webhook). A webhook is
// answered only once its event is committed, and a commit costs a round trip and a flush of the
// write-ahead log whatever it holds; so events that arrive while one batch is in flight wait
// together and go in the next one, in one statement and one commit. When idle an event is written at
// once (no added latency); under load the batches grow by themselves with the load (no timer to
// tune). On PostgreSQL a second batch may be written while the first one's commit waits on the disk.

export interface GroupCommit<Item, Result> {
  /** Hands one item over; resolves once the batch it went in is committed. */
  write(item: Item): Promise<Result>;
  /** Waits for what has been handed over to be written. */
  drain(): Promise<void>;
}

export interface GroupCommitOptions<Item, Result> {
  /** Writes a batch in one transaction, answering one result per item, in order. */
  writeBatch: (items: Item[]) => Promise<Result[]>;
  /** After each committed batch (it wakes whoever processes the items). */
  onCommitted?: (results: Result[]) => void;
  /** The item's size in bytes, to bound a batch (default: not counted). */
  sizeOf?: (item: Item) => number;
  /** Batches in flight at once: 2 on PostgreSQL, where one batch's commit waits on the disk while
   * the next is inserted (with one, the server idled a quarter of a saturating burst); 1 on the
   * embedded database, which runs one statement at a time anyway. */
  parallel?: number;
}

/** Items in one batch, at most: beyond this a batch waits for the next round. */
const MAX_BATCH_ITEMS = 1000;
const MAX_BATCH_BYTES = 16 * 1024 * 1024;

/** A second batch starts while one is in flight only once this many items wait for it: below that
 * they wait for the first (a commit's flush costs the same for 1 event as for 60). */
export const OVERLAP_AT = 16;

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

export function createGroupCommit<Item, Result>(options: GroupCommitOptions<Item, Result>): GroupCommit<Item, Result> {
  const parallel = Math.max(1, options.parallel ?? 1);
  const sizeOf = options.sizeOf ?? (() => 0);
  let queue: Waiting<Item, Result>[] = [];
  let inFlight = 0;
  const drained: (() => void)[] = [];

  function takeBatch(): Waiting<Item, Result>[] {
    let bytes = 0;
    let n = 0;
    while (n < queue.length && n < MAX_BATCH_ITEMS) {
      bytes += sizeOf(queue[n]!.item);
      if (n > 0 && bytes > MAX_BATCH_BYTES) break;
      n++;
    }
    const batch = queue.slice(0, n);
    queue = queue.slice(n);
    return batch;
  }

  async function writeBatch(batch: Waiting<Item, Result>[]): Promise<void> {
    try {
      const results = await options.writeBatch(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i]!));
      options.onCommitted?.(results);
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
    write(item) {
      return new Promise<Result>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        pump();
      });
    },
    drain() {
      if (inFlight === 0 && queue.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => drained.push(resolve));
    },
  };
}
