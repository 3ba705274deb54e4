// The worker thread's job loop: fire due schedules, claim due jobs into free slots (CONCURRENCY at
// a time), run each by its kind, and record the outcomes — several at once when they finish
// together (one transaction for many, as the ticket queue's group commit). Leases of running jobs
// are renewed while they run. Woken when jobs are enqueued in this process, and by a finished job
// when another is due; polling finds the rest (other processes' jobs).
import type { UnitRunner } from '../db/units-of-work.ts';
import type { Logger } from '../lib/log.ts';
import { messageOf } from '../lib/errors.ts';
import { idleBackoff, IDLE_POLL_MAX_MS } from '../lib/waker.ts';
import { failedJobOutcome } from '../queue/job-failures.ts';
import type { JobInfo, JobKind } from '../queue/job-kind.ts';
import type { JobUnits } from '../queue/job-units.ts';
import type { Settings } from '../settings.ts';
import { payloadProblem, scheduledKinds, type ClaimedJob, type JobOutcome } from '../queue/job-queue.ts';

export interface JobLoopOptions {
  units: UnitRunner<JobUnits>;
  kinds: readonly JobKind[];
  /** What the handlers read as `ctx.settings`, and the schedules that follow settings. */
  settings: Settings;
  owner: string;
  log: Logger;
  isStopping: () => boolean;
  /** Resolves at a wake-up, a stop, or after `ms`. */
  idle: (ms: number) => Promise<void>;
  /** Ends the current (or next) idle: a slot came free. */
  wake: () => void;
  /** Jobs run at once (default 16): also how many one claim takes. */
  concurrency?: number;
  /** How often to look when nothing wakes the loop (default 1 s). */
  pollMs?: number;
  /** The longest wait between looks when idle (lib/waker.ts's idleBackoff). */
  idleMaxMs?: number;
  /** A claim's lease (default 60 s), renewed every third of it while the job runs. */
  leaseSeconds?: number;
  /** The queue's clock (tests move it) and the back-off's randomness. */
  clock?: () => number;
  random?: () => number;
}

export async function runJobLoop(options: JobLoopOptions): Promise<void> {
  const { units, owner, log } = options;
  const concurrency = options.concurrency ?? 16;
  const pollMs = options.pollMs ?? 1_000;
  // A poll interval given is kept as is unless a longest wait is given too.
  const idle = idleBackoff(pollMs, options.idleMaxMs ?? (options.pollMs ? pollMs : IDLE_POLL_MAX_MS));
  const leaseSeconds = options.leaseSeconds ?? 60;
  const clock = options.clock ?? Date.now;
  const random = options.random ?? Math.random;
  const now = () => new Date(clock()).toISOString();
  const kinds = new Map(options.kinds.map((k) => [k.kind, k]));
  const schedules = scheduledKinds(options.kinds, options.settings);
  // The kinds that fire on a schedule: finding only them is housekeeping, not a sign of more work.
  const scheduled = new Set(schedules.map((s) => s.kind));
  const running = new Map<string, Promise<void>>();
  const kindNames = [...kinds.keys()];
  const settle = groupCommit(
    (outcomes) => units.run('jobs.settle', { owner, outcomes, now: now(), kinds: kindNames }).then((settled) => settled.nextDueAt),
    log,
  );

  /** Runs a claimed job and records its outcome; answers when the loop's next job is due, as the
   * transaction that recorded it saw (undefined: not known). */
  async function runOne(job: ClaimedJob): Promise<string | null | undefined> {
    const kind = kinds.get(job.kind)!;
    const problem = payloadProblem(kind, job.payload);
    if (problem) return settle({ id: job.id, state: 'dead', error: `${problem} (permanent: not retried)` });
    const info: JobInfo = { id: job.id, kind: job.kind, orgId: job.orgId, attempts: job.attempts };
    const started = performance.now();
    // At debug level every finished job is a line (its result is small by design): the trail of
    // one action through its sends, execution and deliveries.
    const finished = (result: unknown) =>
      log.debug('job done', {
        job_id: job.id,
        kind: job.kind,
        org_id: job.orgId,
        attempt: job.attempts,
        ms: Math.round(performance.now() - started),
        result,
      });
    try {
      if ('perform' in kind) {
        const done = await units.run('jobs.perform', { owner, job: { ...info, payload: job.payload }, now: now(), kinds: kindNames });
        if (!done.held) log.warn('job lease lost before it finished; another worker has it', { job_id: job.id, kind: job.kind });
        else finished(done.result);
        return done.nextDueAt;
      }
      const result = await kind.handle(job.payload, {
        job: info,
        settings: options.settings,
        run: (unit, args) => units.run('jobs.unit', { kind: kind.kind, unit, args }) as never,
      });
      const nextDueAt = await settle({ id: job.id, state: 'done', result: result ?? null });
      finished(result ?? null);
      return nextDueAt;
    } catch (error) {
      const outcome = failedJobOutcome(kind, job, error, clock(), random);
      log.warn(outcome.state === 'dead' ? 'job dead' : 'job failed; will retry', {
        job_id: job.id,
        kind: job.kind,
        error: 'error' in outcome ? outcome.error : undefined,
      });
      return settle(outcome);
    }
  }

  const renewer = setInterval(
    () => {
      if (running.size === 0) return;
      units
        .run('jobs.renew', { owner, ids: [...running.keys()], leaseSeconds, now: now() })
        .catch((error) => log.warn('could not renew job leases', { error: messageOf(error) }));
    },
    (leaseSeconds * 1000) / 3,
  );
  renewer.unref?.();

  // A loop without schedules (the fitting thread's) has no firing to wake for: it waits the poll
  // interval. Left at 0, its idle would be 0 ms and it would claim in a tight loop.
  let nextScheduleAt = schedules.length > 0 ? 0 : Infinity;
  // The organisation this loop's last claim served last: the next claim starts after it.
  let turn = '';
  // Until when the loop is waiting (-Infinity while it is not), and the earliest due time the
  // jobs finished since its last claim reported: a finished job wakes the loop only when a job is
  // due before it would look anyway.
  let waitingUntil = Number.NEGATIVE_INFINITY;
  let reportedDueAt = Number.POSITIVE_INFINITY;
  const jobFinished = (nextDueAt: string | null | undefined) => {
    const at = nextDueAt === undefined ? clock() : nextDueAt === null ? Number.POSITIVE_INFINITY : Date.parse(nextDueAt);
    if (at <= clock() || at < waitingUntil) options.wake();
    else reportedDueAt = Math.min(reportedDueAt, at);
  };
  try {
    if (schedules.length > 0) {
      await units
        .run('jobs.register-schedules', { schedules, now: now() })
        .catch((error) => log.warn('could not register job schedules', { error: messageOf(error) }));
    }
    const scheduleFired = (result: { fired: string[]; nextAt: string | null }) => {
      if (result.fired.length) log.debug('scheduled jobs fired', { kinds: result.fired });
      nextScheduleAt = result.nextAt ? Math.max(Date.parse(result.nextAt), clock() + 100) : Infinity;
    };
    const scheduleFailed = (error: unknown) => {
      log.warn('could not fire job schedules', { error: messageOf(error) });
      nextScheduleAt = clock() + pollMs;
    };
    while (!options.isStopping()) {
      const fire = schedules.length > 0 && clock() >= nextScheduleAt;
      // Slots are refilled once half of them are free (or all): a claim per finished job would
      // cost a transaction per job when jobs are short.
      const free = concurrency - running.size;
      const refill = running.size === 0 || free >= concurrency / 2;
      let claimed: ClaimedJob[] = [];
      let nextDueAt = Infinity;
      if (refill) {
        // Due schedules fire in the claim's transaction, and what they queued is claimed with it.
        try {
          const claim = await units.run('jobs.claim', {
            owner,
            limit: free,
            leaseSeconds,
            now: now(),
            kinds: [...kinds.keys()],
            after: turn,
            schedules: fire ? schedules : undefined,
          });
          claimed = claim.jobs;
          turn = claim.turn;
          if (claim.nextDueAt) nextDueAt = Date.parse(claim.nextDueAt);
          if (claim.schedules) scheduleFired(claim.schedules);
        } catch (error) {
          log.warn('could not claim jobs', { error: messageOf(error) });
          if (fire) scheduleFailed(error);
        }
      } else if (fire) {
        try {
          scheduleFired(await units.run('jobs.fire-schedules', { schedules, now: now() }));
        } catch (error) {
          scheduleFailed(error);
        }
      }
      reportedDueAt = Number.POSITIVE_INFINITY; // the claim has seen what they reported
      for (const job of claimed) {
        running.set(
          job.id,
          runOne(job).then(
            (nextDueAt) => {
              running.delete(job.id);
              jobFinished(nextDueAt);
            },
            () => {
              running.delete(job.id);
              jobFinished(undefined);
            },
          ),
        );
      }
      // Every free slot filled: more may be due.
      if (refill && claimed.length === free) continue;
      // A claim that found work polls again soon (another process's work may follow it); scheduled
      // housekeeping (two kinds fire every 15 s) does not reset the back-off, or an idle server
      // would look five times between firings instead of twice. Jobs running need no poll of their
      // own: each says, in the transaction that records it, when the loop's next job is due (a
      // follow-up it queued, a retry), and wakes the loop if that is before its next look.
      if (claimed.some((job) => !scheduled.has(job.kind))) idle.found();
      const wait = Math.max(0, Math.min(idle.empty(), nextScheduleAt - clock(), nextDueAt - clock(), reportedDueAt - clock()));
      waitingUntil = clock() + wait;
      await options.idle(wait);
      waitingUntil = Number.NEGATIVE_INFINITY;
    }
  } finally {
    // The jobs in hand finish and are recorded before the loop says it has stopped.
    await Promise.all(running.values());
    clearInterval(renewer);
  }
}

/** Outcomes recorded as they come, those arriving while a write is in flight together in the next:
 * one transaction for many when jobs finish together. A batch that cannot be written is written
 * outcome by outcome, so one bad row fails alone; one that still fails keeps its lease until it runs
 * out, and the job runs again. */
function groupCommit(
  write: (outcomes: JobOutcome[]) => Promise<string | null>,
  log: Logger,
): (outcome: JobOutcome) => Promise<string | null | undefined> {
  let waiting: { outcome: JobOutcome; done: (nextDueAt: string | null | undefined) => void }[] = [];
  let draining = false;
  async function drain() {
    draining = true;
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      // When the loop's next job is due, as the write saw it (undefined: written outcome by outcome).
      let nextDueAt: string | null | undefined;
      try {
        nextDueAt = await write(batch.map((w) => w.outcome));
      } catch {
        for (const w of batch) {
          await write([w.outcome]).catch((error) =>
            log.error('could not record a job outcome; its lease will run out and it will run again', {
              job_id: w.outcome.id,
              error: messageOf(error),
            }),
          );
        }
      }
      for (const w of batch) w.done(nextDueAt);
    }
    draining = false;
  }
  return (outcome) =>
    new Promise<string | null | undefined>((resolve) => {
      waiting.push({ outcome, done: resolve });
      if (!draining) void drain();
    });
}
