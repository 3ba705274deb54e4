// The worker thread's ticket loop: claim a batch of due events, read and score them here (off the
// main thread), then apply the batch in one transaction. While the database applies one batch the
// next is claimed and scored, so the thread's work and the database's overlap (one apply in flight
// at a time, in claim order). Woken by the main thread when events are committed, and polling as a
// fallback (another instance's events, retries coming due). A batch that cannot be applied whole is
// applied event by event, so one poison event fails alone.
import { nextSizeByTime, type UnitRunner } from '../../../db/units-of-work.ts';
import type { Logger } from '../../../lib/log.ts';
import { messageOf } from '../../../lib/errors.ts';
import { analyseExtraction, extractEvent } from './process.ts';
import { failedOutcome } from './retry.ts';
import { contactKey, type EventOutcome } from './service.ts';
import type { TicketUnits } from './ticket-units.ts';
import { idleBackoff, IDLE_POLL_MAX_MS } from '../../../lib/waker.ts';

/** Webhooks a second above which acknowledging them comes first: while they arrive faster, the
 * worker defers its work and leaves the machine to the server, until the oldest due event has
 * waited DEFER_AT_MOST_MS; then it works at full speed, so a flood that does not end cannot starve
 * processing (its events then wait about that long). Once the burst is over it drains the backlog
 * at full speed. Measured on two cores, saturated by a burst: a worker at full speed took 40% of
 * the CPU and webhook answers waited for it (p99 95 ms against 44 ms for a server that only
 * inserts); paced at 1,000 tickets a second it still took a quarter; deferring, the server
 * acknowledged 15–20% more. A platform retries an answer that is late; a ticket scored 20 s later
 * loses nothing. */
export const INGEST_PRIORITY_ABOVE = 1_500;
export const DEFER_AT_MOST_MS = 30_000;
/** While deferring, how often the loop looks again (the burst may be over, the backlog older). */
const DEFER_CHECK_MS = 1_000;

export interface TicketLoopOptions {
  units: UnitRunner<TicketUnits>;
  owner: string;
  log: Logger;
  /** Events claimed at once, at most (BATCH_MAX): batches are sized by how long the last one
   * took to apply (BATCH_SIZING). */
  batchSize?: number;
  /** How long a claim holds its events before another worker may take them. */
  leaseSeconds?: number;
  /** Poll interval when nothing wakes the loop. */
  pollMs?: number;
  /** The longest wait between looks when idle (lib/waker.ts's idleBackoff). */
  idleMaxMs?: number;
  isStopping: () => boolean;
  /** Resolves at a wake-up, a stop, or after `ms`. */
  idle: (ms: number) => Promise<void>;
  /** Webhooks are arriving faster than INGEST_PRIORITY_ABOVE a second. */
  ingestBusy?: () => boolean;
  /** Defers work during a burst: resolves after `ms`, at a stop, or when the burst is over (a
   * wake-up does not end it). */
  pause?: (ms: number) => Promise<void>;
  /** An applied batch linked tickets to customers, which may have queued jobs (a prediction's
   * rescore, an action's notification): the job loop should look now. */
  jobsQueued?: () => void;
}

/** Events per batch at most. */
const BATCH_MAX = 250;
/** Batches sized by the time the last one took to apply on the database's side (the unit's own
 * measure: not the wait for its turn), aiming at 50 ms: on the embedded database an apply of 250
 * events held every tenant's requests for 150 ms and more on a busy machine. */
const BATCH_SIZING = { targetMs: 50, min: 10 };
const BATCH_FIRST = 50;

/** The size of the next batch, from the last apply's. */
export interface BatchSizer {
  size(): number;
  applied(events: number, ms: number): void;
}

export function createBatchSizer(max: number = BATCH_MAX): BatchSizer {
  let size = Math.min(BATCH_FIRST, max);
  return {
    size: () => size,
    applied(events, ms) {
      // A batch cut short by an empty queue says little about a full one.
      if (events < size) return;
      size = nextSizeByTime(events, ms, { ...BATCH_SIZING, min: Math.min(BATCH_SIZING.min, max), max });
    },
  };
}

export async function runTicketLoop(options: TicketLoopOptions): Promise<void> {
  const pollMs = options.pollMs ?? 1_000;
  // A poll interval given is kept as is unless a longest wait is given too.
  const idle = idleBackoff(pollMs, options.idleMaxMs ?? (options.pollMs ? pollMs : IDLE_POLL_MAX_MS));
  const sizer = createBatchSizer(options.batchSize);
  let applying: Promise<void> = Promise.resolve();
  while (!options.isStopping()) {
    if (options.ingestBusy?.() && options.pause) {
      // Nothing due (null): nothing to defer, the loop goes idle below.
      let waitedMs: number | null = DEFER_AT_MOST_MS;
      try {
        waitedMs = await options.units.run('tickets.oldest-due-wait', {});
      } catch (error) {
        options.log.warn("could not read the queue's age; processing instead of deferring", { error: messageOf(error) });
      }
      if (waitedMs !== null && waitedMs < DEFER_AT_MOST_MS) {
        await applying;
        await options.pause(Math.min(DEFER_CHECK_MS, DEFER_AT_MOST_MS - waitedMs));
        continue;
      }
    }
    let outcomes: EventOutcome[] = [];
    let nextDueMs: number | null = null;
    try {
      ({ outcomes, nextDueMs } = await prepareBatch(options, sizer.size()));
    } catch (error) {
      options.log.warn('could not claim ticket events', { error: messageOf(error) });
    }
    await applying;
    if (outcomes.length === 0) {
      // A retry coming due is looked for then, not at the end of the back-off.
      await options.idle(Math.min(idle.empty(), nextDueMs ?? Infinity));
      continue;
    }
    idle.found();
    applying = applyBatch(options.units, options.owner, outcomes, options.log, sizer, options.jobsQueued);
  }
  await applying;
}

/** One round, start to end: claim a batch, read and score it, apply it. Returns how many events
 * were claimed. */
export async function processDueEvents(
  options: Pick<TicketLoopOptions, 'units' | 'owner' | 'log' | 'batchSize' | 'leaseSeconds'>,
): Promise<number> {
  const { outcomes } = await prepareBatch(options, options.batchSize ?? BATCH_MAX);
  if (outcomes.length > 0) await applyBatch(options.units, options.owner, outcomes, options.log);
  return outcomes.length;
}

/** Claims due events and makes their outcomes (the tickets read and scored, or why not); with none
 * due, in how many ms the next pending one is. */
async function prepareBatch(
  options: Pick<TicketLoopOptions, 'units' | 'owner' | 'log' | 'leaseSeconds'>,
  limit: number,
): Promise<{ outcomes: EventOutcome[]; nextDueMs: number | null }> {
  const { units, owner, log } = options;
  const { events: claimed, nextDueMs } = await units.run('tickets.claim', { owner, limit, leaseSeconds: options.leaseSeconds ?? 60 });
  if (claimed.length === 0) return { outcomes: [], nextDueMs };
  const extractions = claimed.map(extractEvent);
  const pairs = extractions.flatMap((x) =>
    x.ok ? x.tickets.filter((t) => t.requesterEmail).map((t) => ({ orgId: x.event.orgId, email: t.requesterEmail! })) : [],
  );
  let contacts: Record<string, number> = {};
  try {
    contacts = pairs.length ? await units.run('tickets.recent-contacts', { pairs: dedupePairs(pairs) }) : {};
  } catch (error) {
    log.warn('could not count recent contacts; urgency ignores them for this batch', { error: messageOf(error) });
  }
  const outcomes = extractions.map((x) => {
    try {
      return analyseExtraction(x, contacts);
    } catch (error) {
      return failedOutcome(x.event.id, error, 'analysis failed');
    }
  });
  return { outcomes, nextDueMs: null };
}

function dedupePairs(pairs: { orgId: string; email: string }[]) {
  const seen = new Map(pairs.map((p) => [contactKey(p.orgId, p.email), p]));
  return [...seen.values()];
}

async function applyBatch(
  units: UnitRunner<TicketUnits>,
  owner: string,
  outcomes: EventOutcome[],
  log: Logger,
  sizer?: BatchSizer,
  jobsQueued?: () => void,
): Promise<void> {
  try {
    const result = await units.run('tickets.apply', { owner, outcomes });
    sizer?.applied(outcomes.length, result.ms);
    if (result.linked > 0) jobsQueued?.();
    if (result.dead > 0) log.warn('ticket events dead-lettered', { count: result.dead });
    return;
  } catch (error) {
    if (outcomes.length === 1) {
      const failed = failedOutcome(outcomes[0]!.eventId, error, 'could not be stored');
      log.warn('ticket event failed', { event_id: failed.eventId, error: failed.error, permanent: failed.permanent });
      await units.run('tickets.apply', { owner, outcomes: [failed] }).catch((e) =>
        log.error('could not record a failed ticket event; its lease will run out and it will be retried', {
          event_id: failed.eventId,
          error: messageOf(e),
        }),
      );
      return;
    }
  }
  for (const outcome of outcomes) await applyBatch(units, owner, [outcome], log, undefined, jobsQueued);
}
