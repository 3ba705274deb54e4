// The worker thread's entry (a second entrypoint of `bun build --compile`). For now it keeps this
// instance's heartbeat in the database; the ticket queue of a later issue runs in the same loop.
declare const self: Worker;

import { connectPostgres } from '../db/client.ts';
import { localRunner, portRunner, type UnitRunner } from '../db/units.ts';
import { createLogger } from '../lib/log.ts';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.ts';
import { workerUnits, type WorkerUnits } from './units.ts';

const send = (message: FromWorker) => self.postMessage(message);

/** How often housekeeping (expired idempotency keys) runs. */
const HOUSEKEEPING_MS = 10 * 60_000;

let stopping = false;
let wake: (() => void) | null = null;

async function run(init: WorkerInit) {
  const log = createLogger(init.logLevel, { thread: 'worker' });
  const database = init.databaseUrl ? connectPostgres(init.databaseUrl, 2) : null;
  const units: UnitRunner<WorkerUnits> = database ? localRunner(database.db, workerUnits) : portRunner<WorkerUnits>(self);
  try {
    await units.run('instances.register', init.instance);
    send({ type: 'ready' });
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
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, init.heartbeatMs);
      });
    }
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
  } else if (message.type === 'stop') {
    stopping = true;
    wake?.();
  }
});
