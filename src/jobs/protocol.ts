// The worker's door: every message between the main thread and the worker thread, unit calls
// included (db/units-of-work.ts). Each side dispatches them with one exhaustive switch.
import type { LogLevel } from '../config.ts';
import type { UnitReply, UnitRequest } from '../db/units-of-work.ts';
import type { InstanceInfo } from './worker-units.ts';
import type { Settings } from '../settings.ts';

/** `main` runs the ticket queue and most jobs and beats; `fitting` runs only the jobs that fit
 * models (seconds of CPU each), so that they never hold up ticket processing. */
export type WorkerRole = 'main' | 'fitting';

export interface WorkerInit {
  type: 'init';
  role: WorkerRole;
  /** postgres: the worker opens its own pool. embedded: it asks the main thread, which owns PGlite. */
  databaseUrl: string | null;
  instance: InstanceInfo;
  heartbeatMs: number;
  logLevel: LogLevel;
  /** The process's first main worker, not a replacement: on the embedded database every running
   * job then belongs to a run that is gone. A replacement leaves the fitting thread's job alone. */
  firstStart: boolean;
  /** The process's settings the job kinds read (the worker cannot see `serve`'s flags). */
  settings: Settings;
  /** `main` only: whether it runs the upkeep kinds too (the embedded database) or leaves them to the
   * main thread (PostgreSQL, where it runs only while there is other work). */
  upkeep: boolean;
}

/** Which queue has new work: its loop looks now rather than at its next poll. */
export type Queue = 'tickets' | 'jobs';

export type ToWorker =
  | WorkerInit
  | { type: 'stop' }
  | { type: 'wake'; queue: Queue }
  /** Webhooks are arriving faster than INGEST_PRIORITY_ABOVE a second (or no longer are): while
   * they do, the ticket loop defers its work so that acknowledging them comes first. */
  | { type: 'ingest'; busy: boolean }
  | UnitReply;

export type FromWorker =
  | { type: 'ready' }
  | { type: 'heartbeat'; at: number }
  | { type: 'failed'; error: string }
  | { type: 'stopped' }
  | UnitRequest;

/** For the `default` of a switch over a union: a message type added to it and not handled is a
 * compile error. */
export function unhandled(message: never): never {
  throw new Error(`unhandled message ${JSON.stringify(message)}`);
}
