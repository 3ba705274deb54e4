// Messages between the main thread and the worker thread (besides unit requests, db/units.ts).
import type { LogLevel } from '../config.ts';
import type { InstanceInfo } from './units.ts';

export interface WorkerInit {
  type: 'init';
  /** postgres: the worker opens its own pool. embedded: it asks the main thread, which owns PGlite. */
  databaseUrl: string | null;
  instance: InstanceInfo;
  heartbeatMs: number;
  logLevel: LogLevel;
}

export interface WorkerStop {
  type: 'stop';
}

/** Ticket events were committed: look for work now. */
export interface WorkerWake {
  type: 'wake';
}

/** Webhooks are arriving faster than INGEST_PRIORITY_ABOVE a second (or no longer are): while
 * they do, the worker defers its work so that acknowledging them comes first. */
export interface WorkerIngest {
  type: 'ingest';
  busy: boolean;
}

export type ToWorker = WorkerInit | WorkerStop | WorkerWake | WorkerIngest;

export type FromWorker =
  | { type: 'ready' }
  | { type: 'heartbeat'; at: number }
  | { type: 'failed'; error: string }
  | { type: 'stopped' };
