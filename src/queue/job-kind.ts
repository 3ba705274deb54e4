// What a job kind is: one file in its feature's folder (modules/<feature>/jobs/) declaring its payload
// (TypeBox), its work, its retry policy and, optionally, its schedule; jobs/kind-registry.ts lists them.
//
// The work takes one of two shapes, because in embedded mode only the main thread may hold a
// transaction (db/units-of-work.ts):
// - `perform(db, payload, job)` runs on whichever side owns the database, in one transaction
//   together with marking the job done: its effects and "done" commit together (exactly once).
//   For database work: purges, recomputations, rows to write.
// - `handle(payload, ctx)` runs in the worker thread and reaches the database only through the
//   kind's own `units` (`ctx.run`), each its own transaction: for work that computes or calls out
//   (fitting a model, posting to Slack). Delivery is at least once: a worker that dies after a unit
//   committed runs the job again, so the handler must be safe to repeat.
import type { Static, TSchema } from '@sinclair/typebox';
import type { Db } from '../db/client.ts';
import type { UnitRegistry, UnitArgs, UnitResult } from '../db/units-of-work.ts';
import type { Settings } from '../settings.ts';

export interface RetryPolicy {
  /** Attempts before the job is dead. */
  maxAttempts: number;
  /** Back-off after the n-th failure: a random point up to min(maxSeconds, baseSeconds · 2^(n-1)). */
  baseSeconds: number;
  maxSeconds: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 8, baseSeconds: 2, maxSeconds: 600 };

/** Fires a run every `everySeconds`, or once a day at `dailyAt` ("HH:MM", UTC). */
export type Schedule = { everySeconds: number } | { dailyAt: string };

/** A kind's schedule, fixed or read from the settings of the loop that fires it. */
export type ScheduleOf = Schedule | ((settings: Settings) => Schedule);

/** Which job is running (what a handler may want to log or key by). */
export interface JobInfo {
  id: string;
  kind: string;
  orgId: string | null;
  /** Including this one. */
  attempts: number;
}

export interface JobContext<U extends UnitRegistry> {
  job: JobInfo;
  /** The settings of the loop running the job (the worker's, from its init message). */
  settings: Settings;
  /** Runs one of the kind's units: one transaction, on the side that owns the database. */
  run<K extends keyof U & string>(unit: K, args: UnitArgs<U, K>): Promise<UnitResult<U, K>>;
}

/** A failure no retry can fix (bad payload, a refused request): the job is dead at once. */
export class PermanentJobError extends Error {
  override readonly name = 'PermanentJobError';
}

interface KindBase<P extends TSchema> {
  kind: string;
  payload: P;
  retry?: Partial<RetryPolicy>;
  schedule?: ScheduleOf;
}

export interface PerformKind<P extends TSchema, R> extends KindBase<P> {
  // Method syntax: a kind with a narrower payload still counts as a JobKind.
  perform(db: Db, payload: Static<P>, job: JobInfo, settings: Settings): Promise<R>;
}

export interface HandleKind<P extends TSchema, R, U extends UnitRegistry> extends KindBase<P> {
  units?: U;
  handle(payload: Static<P>, ctx: JobContext<U>): Promise<R>;
}

export type JobKind<P extends TSchema = TSchema, R = unknown, U extends UnitRegistry = UnitRegistry> =
  | PerformKind<P, R>
  | HandleKind<P, R, U>;

/** Declares a job kind (an identity function that keeps the payload's and units' types). */
export function defineJobKind<P extends TSchema, R>(kind: PerformKind<P, R>): PerformKind<P, R>;
export function defineJobKind<P extends TSchema, R, U extends UnitRegistry = {}>(kind: HandleKind<P, R, U>): HandleKind<P, R, U>;
export function defineJobKind(kind: JobKind): JobKind {
  return kind;
}

export const retryPolicyOf = (kind: Pick<KindBase<TSchema>, 'retry'>): RetryPolicy => ({ ...DEFAULT_RETRY, ...kind.retry });

/** Exponential back-off with full jitter, so jobs that failed together do not come back together. */
export function backoffSeconds(policy: RetryPolicy, attempts: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxSeconds, policy.baseSeconds * 2 ** Math.max(0, attempts - 1));
  return Math.max(0.5, ceiling * random());
}

/** The schedule as stored ("every 600s", "daily 03:30"): a changed one restarts its timing. */
export function cadenceOf(schedule: Schedule): string {
  return 'everySeconds' in schedule ? `every ${schedule.everySeconds}s` : `daily ${schedule.dailyAt}`;
}

/** The first firing strictly after `after`. Every-N schedules are aligned to multiples of N since
 * the epoch, so processes that start at different times agree on the slots. */
export function nextFiring(schedule: Schedule, after: Date): Date {
  if ('everySeconds' in schedule) {
    const period = schedule.everySeconds * 1000;
    return new Date((Math.floor(after.getTime() / period) + 1) * period);
  }
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(schedule.dailyAt);
  if (!match) throw new Error(`dailyAt must be HH:MM (UTC), not ${schedule.dailyAt}`);
  const at = new Date(Date.UTC(after.getUTCFullYear(), after.getUTCMonth(), after.getUTCDate(), Number(match[1]), Number(match[2])));
  if (at <= after) at.setUTCDate(at.getUTCDate() + 1);
  return at;
}
