// The worker thread's entry (a second entrypoint of `bun build --compile`): it keeps this instance's
// heartbeat in the database, runs housekeeping, and processes the ticket event queue
// (ticket-loop.ts) beside them.
declare const self: Worker;

import { connectPostgres } from '../db/client.ts';
import { localRunner, portRunner, type UnitRunner } from '../db/units.ts';
import { createLogger } from '../lib/log.ts';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.ts';
import { workerUnits, type WorkerUnits } from './units.ts';
import { DEFER_AT_MOST_MS, runTicketLoop } from './ticket-loop.ts';

const send = (message: FromWorker) => self.postMessage(message);

/** How often housekeeping (expired idempotency keys) runs. */
const HOUSEKEEPING_MS = 10 * 60_000;

let stopping = false;
/** Whoever is idle waits on these: a wake-up or a stop ends every wait at once. */
const sleepers = new Set<() => void>();
/** A wake-up that came while nobody was idle (the loop was busy claiming): the next idle returns
 * at once, so events committed just after a claim looked are not left for the next poll. */
let missedWake = false;
const wakeAll = () => {
  if (sleepers.size === 0) missedWake = true;
  for (const resolve of sleepers) resolve();
  sleepers.clear();
};
/** Resolves at a wake-up, a stop, or after `ms`. */
function idle(ms: number): Promise<void> {
  if (stopping || missedWake) {
    missedWake = false;
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      sleepers.delete(done);
      resolve();
    }, ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    sleepers.add(done);
  });
}

/** The server is taking webhooks faster than the worker should compete with (supervisor.ts). */
let ingestBusy = false;
let workerLog: ReturnType<typeof createLogger> | null = null;
/** Pauses that only a stop cuts short, not a wake-up (the heartbeat's). */
const pauses = new Set<() => void>();
/** The ticket loop's deferrals during a burst: cut short by a stop or by the burst's end. */
const deferrals = new Set<() => void>();
function sleepIn(set: Set<() => void>, ms: number): Promise<void> {
  if (stopping || ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      set.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    set.add(done);
  });
}
const sleepUnlessStopped = (ms: number) => sleepIn(pauses, ms);
const deferWhileBusy = (ms: number) => sleepIn(deferrals, ms);
const endAll = (set: Set<() => void>) => {
  for (const done of [...set]) done();
};

async function run(init: WorkerInit) {
  const log = createLogger(init.logLevel, { thread: 'worker' });
  workerLog = log;
  const database = init.databaseUrl ? connectPostgres(init.databaseUrl, 3) : null;
  const units: UnitRunner<WorkerUnits> = database ? localRunner(database.db, workerUnits) : portRunner<WorkerUnits>(self);
  try {
    await units.run('instances.register', init.instance);
    if (!init.databaseUrl) await units.run('tickets.release-leases', {});
    send({ type: 'ready' });
    const tickets = runTicketLoop({ units, owner: init.instance.id, log, isStopping: () => stopping, idle, ingestBusy: () => ingestBusy, pause: deferWhileBusy });
    let housekeptAt = 0;
    while (!stopping) {
      if (Date.now() - housekeptAt >= HOUSEKEEPING_MS) {
        housekeptAt = Date.now();
        await units.run('idempotency.purge', {}).catch((error) => log.warn('housekeeping failed', { error: (error as Error).message }));
      }
      try {
        await units.run('instances.heartbeat', { id: init.instance.id });
        send({ type: 'heartbeat', at: Date.now() });
      } catch (error) {
        log.warn('heartbeat failed', { error: (error as Error).message });
      }
      await sleepUnlessStopped(init.heartbeatMs);
    }
    // The batch in hand is finished and applied before the thread says it has stopped.
    await tickets;
    await units.run('instances.stop', { id: init.instance.id }).catch(() => {});
  } catch (error) {
    send({ type: 'failed', error: (error as Error).message });
    throw error;
  } finally {
    await database?.close();
  }
  send({ type: 'stopped' });
}

self.addEventListener('message', (event: MessageEvent<ToWorker | { type: string }>) => {
  const message = event.data;
  if (message.type === 'init') {
    // A failure was reported as `failed`; the supervisor replaces this thread.
    run(message as WorkerInit).catch(() => {});
  } else if (message.type === 'wake') {
    wakeAll();
  } else if (message.type === 'ingest') {
    ingestBusy = (message as { busy: boolean }).busy;
    workerLog?.info(
      ingestBusy ? `webhooks arriving fast: ticket processing deferred (at most ${DEFER_AT_MOST_MS / 1000} s) so that acknowledging comes first` : 'ticket processing back to full speed',
    );
    if (!ingestBusy) endAll(deferrals);
  } else if (message.type === 'stop') {
    stopping = true;
    wakeAll();
    endAll(pauses);
    endAll(deferrals);
  }
});
