// The job queue's units of work (db/units-of-work.ts), for the kinds a build knows: what the job
// loop asks the database's owner to do. Arguments carry times as ISO text: units also cross the
// admin socket.
import type { Db } from '../db/client.ts';
import type { UnitRegistry } from '../db/units-of-work.ts';
import type { Settings } from '../settings.ts';
import type { JobInfo, JobKind } from './job-kind.ts';
import {
  claimJobs,
  fireSchedules,
  lockHeldJob,
  nextQueuedDue,
  recoverLeases,
  registerSchedules,
  renewLeases,
  settleJobs,
  type JobOutcome,
  type ScheduledKind,
} from './job-queue.ts';

export function jobUnits(kinds: readonly JobKind[]) {
  const byName = new Map(kinds.map((k) => [k.kind, k]));
  return {
    /** Claims only the kinds the asking loop runs (a subset of this registry's); `after` is the
     * organisation the loop's last claim served last (organisations take turns); with `schedules`,
     * fires those that are due first (see jobs.fire-schedules). */
    'jobs.claim': async (
      db: Db,
      args: {
        owner: string;
        limit: number;
        leaseSeconds: number;
        now: string;
        kinds: string[];
        after?: string;
        schedules?: ScheduledKind[];
      },
    ) => {
      const now = new Date(args.now);
      // The loop's schedules, when one is due, fire in the same transaction: an idle server's
      // upkeep (two kinds every 15 s) costs one look fewer each time.
      const fired = args.schedules ? await fireSchedules(db, { schedules: args.schedules, now }) : null;
      const claim = await claimJobs(db, { ...args, kinds: args.kinds.filter((kind) => byName.has(kind)), now });
      return { ...claim, schedules: fired };
    },
    /** Records outcomes; with `kinds` (the loop's), says when its next job is due (nextQueuedDue). */
    'jobs.settle': async (db: Db, args: { owner: string; outcomes: JobOutcome[]; now: string; kinds?: string[] }) => {
      const now = new Date(args.now);
      const ids = await settleJobs(db, { ...args, now });
      return { ids, nextDueAt: args.kinds ? await nextQueuedDue(db, { kinds: args.kinds, now }) : null };
    },
    /** A `perform` kind's work and its "done", in one transaction; nothing when the lease was lost.
     * With `kinds`, says when the loop's next job is due, as jobs.settle. */
    'jobs.perform': async (
      db: Db,
      args: { owner: string; job: JobInfo & { payload: unknown }; now: string; kinds?: string[] },
      settings: Settings,
    ) => {
      const kind = byName.get(args.job.kind);
      if (!kind || !('perform' in kind)) throw new Error(`job kind ${args.job.kind} has no perform step`);
      const now = new Date(args.now);
      const nextDue = async () => (args.kinds ? await nextQueuedDue(db, { kinds: args.kinds, now }) : null);
      if (!(await lockHeldJob(db, args.job.id, args.owner))) return { held: false as const, nextDueAt: await nextDue() };
      const { payload, ...job } = args.job;
      const result = (await kind.perform(db, payload as never, job, settings)) ?? null;
      await settleJobs(db, { owner: args.owner, outcomes: [{ id: job.id, state: 'done', result }], now });
      return { held: true as const, result, nextDueAt: await nextDue() };
    },
    /** One of a `handle` kind's own units. */
    'jobs.unit': (db: Db, args: { kind: string; unit: string; args: unknown }, settings: Settings) => {
      const kind = byName.get(args.kind);
      const unit = kind && 'handle' in kind ? kind.units?.[args.unit] : undefined;
      if (!unit) throw new Error(`job kind ${args.kind} has no unit ${args.unit}`);
      return unit(db, args.args as never, settings);
    },
    'jobs.renew': (db: Db, args: { owner: string; ids: string[]; leaseSeconds: number; now: string }) =>
      renewLeases(db, { ...args, now: new Date(args.now) }),
    /** `all`: the embedded database's owner starting, whatever was running is an earlier run's. */
    'jobs.recover': (db: Db, args: { now: string; all?: boolean }) => recoverLeases(db, { now: new Date(args.now), all: args.all }),
    'jobs.register-schedules': (db: Db, args: { schedules: ScheduledKind[]; now: string }) =>
      registerSchedules(db, { ...args, now: new Date(args.now) }),
    'jobs.fire-schedules': (db: Db, args: { schedules: ScheduledKind[]; now: string }) =>
      fireSchedules(db, { ...args, now: new Date(args.now) }),
  } satisfies UnitRegistry;
}

export type JobUnits = ReturnType<typeof jobUnits>;
