// The job queue's statements: enqueue (inside the caller's transaction), claim with FOR UPDATE SKIP
// LOCKED, settle (done, retry after a back-off, dead), renew and take back leases, fire schedules,
// and the operator's list / show / retry. Times come from the caller's clock (`now`), so a test can
// move it; the database's own clock is used only to judge instances' heartbeats.
import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { isoTimeText } from '../db/keyset.ts';
import { queryText, type Db } from '../db/client.ts';
import type { JobState } from '../db/schema/index.ts';
import { newId } from '../lib/ids.ts';
import type { Settings } from '../settings.ts';
import { cadenceOf, nextFiring, retryPolicyOf, type JobInfo, type JobKind, type Schedule } from './job-kind.ts';

/** An instance that has not beaten for this long is dead: its jobs are taken back at once rather
 * than when their leases run out (the same rule as the ticket queue's). */
const DEAD_INSTANCE_AFTER = '15 seconds';

export interface EnqueueOptions {
  orgId?: string | null;
  /** At most one queued job per (kind, organisation, key); a running one does not count. */
  dedupeKey?: string | null;
  /** When it may run (default now); `delaySeconds` is the same said relatively. */
  runAt?: Date;
  delaySeconds?: number;
  priority?: number;
  now?: Date;
}

export interface Enqueued {
  id: string;
  /** False when a queued job with the same dedupe key was there already (its id is returned). */
  created: boolean;
}

export class InvalidJobPayloadError extends Error {
  override readonly name = 'InvalidJobPayloadError';
}

/** The first thing wrong with `payload` for `kind`, naming the field, or null. */
export function payloadProblem(kind: Pick<JobKind, 'kind' | 'payload'>, payload: unknown): string | null {
  const [first] = Value.Errors(kind.payload, payload);
  return first ? `job ${kind.kind}: payload${first.path.replaceAll('/', '.') || ''} ${first.message.toLowerCase()}` : null;
}

const INSERT = `
  insert into jobs (id, kind, org_id, payload, dedupe_key, priority, run_at, max_attempts, created_at, updated_at)
  values ($1, $2, $3, $4::jsonb, $5, $6, $7::timestamptz, $8, $9::timestamptz, $9::timestamptz)
  on conflict (kind, (coalesce(org_id, '')), dedupe_key) where state = 'queued' and dedupe_key is not null do nothing
  returning id`;
const QUEUED_TWIN = `select id from jobs where kind = $1 and coalesce(org_id, '') = coalesce($2, '') and dedupe_key = $3 and state = 'queued'`;

/** Enough of a kind to enqueue it: its name, its retry policy and its payload's schema, whose
 * static type is what `enqueueJob` takes as the payload (enqueueing kind K with another kind's
 * payload does not compile; the check against the schema at run time stays, for what TypeScript
 * cannot see: ranges, lengths, patterns). */
export type EnqueuedKind<P extends TSchema> = Pick<JobKind<P>, 'kind' | 'payload' | 'retry'>;

/** Adds a job, in `db`'s transaction if it is one: the job exists if and only if the caller's
 * change commits. Wake the worker after the commit (Supervisor.wakeJobs) for it to run at once. */
export function enqueueJob<P extends TSchema>(
  db: Db,
  kind: EnqueuedKind<P>,
  payload: Static<P>,
  options: EnqueueOptions = {},
): Promise<Enqueued> {
  return insertJob(db, kind, payload, options);
}

async function insertJob(db: Db, kind: EnqueuedKind<TSchema>, payload: unknown, options: EnqueueOptions): Promise<Enqueued> {
  const problem = payloadProblem(kind, payload);
  if (problem) throw new InvalidJobPayloadError(problem);
  const now = options.now ?? new Date();
  const runAt = options.runAt ?? new Date(now.getTime() + (options.delaySeconds ?? 0) * 1000);
  const orgId = options.orgId ?? null;
  const dedupeKey = options.dedupeKey ?? null;
  // Twice at most: a twin seen by the insert may be claimed before it is read back.
  for (let round = 0; round < 2; round++) {
    const id = newId('job');
    const params = [
      id,
      kind.kind,
      orgId,
      JSON.stringify(payload ?? {}),
      dedupeKey,
      options.priority ?? 0,
      runAt.toISOString(),
      retryPolicyOf(kind).maxAttempts,
      now.toISOString(),
    ];
    const [inserted] = await queryText<{ id: string }>(db, INSERT, params);
    if (inserted) return { id: inserted.id, created: true };
    const [twin] = await queryText<{ id: string }>(db, QUEUED_TWIN, [kind.kind, orgId, dedupeKey]);
    if (twin) return { id: twin.id, created: false };
  }
  throw new Error(`job ${kind.kind}: could not enqueue (key ${dedupeKey} raced twice)`);
}

/** Jobs for a statement's part (jobsQueuedInStatement): one a key. */
export interface JobInStatement<P extends TSchema> {
  payload: Static<P>;
  orgId: string | null;
  dedupeKey: string;
}

/**
 * Jobs queued by a part of the caller's own statement (a data-modifying `with` clause), for a writer
 * whose rows and their job must commit together: one statement needs no transaction, one round trip
 * where `begin`, the rows' insert, enqueueJob's insert and its read-back of a twin, and `commit` were
 * five. `text` inserts, due now, the jobs handed to `params` that satisfy `only` (a condition on
 * `j.dedupe_key` and `j.org_id` that may read the statement's other parts), with the parameters from
 * `$firstParam` on, and returns each queued job's `dedupe_key`. A twin already queued is left as it
 * is and not read back (the caller learns which keys it queued, not the twin's id).
 */
export function jobsQueuedInStatement<P extends TSchema>(kind: EnqueuedKind<P>, options: { firstParam: number; only: string }) {
  const p = (n: number) => `$${options.firstParam + n}`;
  return {
    text: `
      insert into jobs (id, kind, org_id, payload, dedupe_key, priority, run_at, max_attempts, created_at, updated_at)
      select j.id, ${p(0)}, j.org_id, j.payload::jsonb, j.dedupe_key, 0, ${p(1)}::timestamptz, ${p(2)}::int, ${p(1)}::timestamptz, ${p(1)}::timestamptz
      from unnest(${p(3)}::text[], ${p(4)}::text[], ${p(5)}::text[], ${p(6)}::text[]) as j(id, org_id, payload, dedupe_key)
      where ${options.only}
      on conflict (kind, (coalesce(org_id, '')), dedupe_key) where state = 'queued' and dedupe_key is not null do nothing
      returning dedupe_key`,
    params(jobs: JobInStatement<P>[], now = new Date()): unknown[] {
      for (const job of jobs) {
        const problem = payloadProblem(kind, job.payload);
        if (problem) throw new InvalidJobPayloadError(problem);
      }
      return [
        kind.kind,
        now.toISOString(),
        retryPolicyOf(kind).maxAttempts,
        jobs.map(() => newId('job')),
        jobs.map((job) => job.orgId),
        jobs.map((job) => JSON.stringify(job.payload ?? {})),
        jobs.map((job) => job.dedupeKey),
      ];
    },
  };
}

/** "Run `kind` for this key `delaySeconds` after the first mark not yet processed": the first mark
 * enqueues the run, later ones find it queued and leave its time alone, so a steady stream of marks
 * never postpones it for ever; a mark after the run has started makes the next run. */
export function markDebounced<P extends TSchema>(
  db: Db,
  kind: EnqueuedKind<P>,
  key: string,
  delaySeconds: number,
  options: { orgId?: string | null; payload?: Static<P>; now?: Date } = {},
): Promise<Enqueued> {
  // Without a payload, `{}`: a kind whose schema requires a field refuses it at run time.
  return insertJob(db, kind, options.payload ?? {}, { orgId: options.orgId, dedupeKey: key, delaySeconds, now: options.now });
}

export interface ClaimedJob extends JobInfo {
  payload: unknown;
  maxAttempts: number;
}

// Organisations take turns, so one with a backlog of thousands cannot keep another's job waiting
// behind it (jobs without an organisation, the service's housekeeping, take theirs as '').
// - `orgs_after` / `orgs_before`: the organisations with queued jobs, one index probe each (a loose
//   scan of jobs_org_due_idx), from just after `$6`, the last one the asking loop served, round to
//   it again: the rotation.
// - `served`: the first `$2` of them with a due job of the asking loop's kinds, and how many jobs
//   each has running already (on any worker).
// - `candidates`: each one's next due jobs, its own highest priority then longest waiting first,
//   locked with SKIP LOCKED (several servers on one PostgreSQL claim at once). An organisation's
//   k-th job takes turn k after the ones it has running.
// - `picked`: turns in order, organisations in rotation order within a turn.
// Cost: one probe per organisation with queued work and one short index range per one served,
// whatever the length of any one organisation's backlog.
const CLAIM = `
  with recursive orgs_after(org) as (
    (select coalesce(org_id, '') from jobs where state = 'queued' and coalesce(org_id, '') > $6 order by 1 limit 1)
    union all
    select (select coalesce(j.org_id, '') from jobs j where j.state = 'queued' and coalesce(j.org_id, '') > o.org order by 1 limit 1)
    from orgs_after o where o.org is not null
  ),
  orgs_before(org) as (
    (select coalesce(org_id, '') from jobs where state = 'queued' order by 1 limit 1)
    union all
    select (select coalesce(j.org_id, '') from jobs j where j.state = 'queued' and coalesce(j.org_id, '') > o.org order by 1 limit 1)
    from orgs_before o where o.org < $6
  ),
  rotation as (
    select org, 0 as lap from orgs_after where org is not null
    union all
    select org, 1 as lap from orgs_before where org <= $6
  ),
  served as (
    select s.org, s.running, row_number() over (order by s.lap, s.org) as place
    from (
      select r.org, r.lap, (select count(*) from jobs x where x.state = 'running' and coalesce(x.org_id, '') = r.org) as running
      from rotation r
      cross join lateral (
        select 1 from jobs d where d.state = 'queued' and coalesce(d.org_id, '') = r.org and d.run_at <= $4::timestamptz and d.kind = any($5::text[]) limit 1
      ) due
      limit $2
    ) s
  ),
  candidates as (
    select c.id, s.place, s.running + row_number() over (partition by s.org order by c.priority desc, c.run_at, c.id) as turn
    from served s cross join lateral (
      select j.id, j.priority, j.run_at from jobs j
      where j.state = 'queued' and coalesce(j.org_id, '') = s.org and j.run_at <= $4::timestamptz and j.kind = any($5::text[])
      order by j.priority desc, j.run_at, j.id
      limit $2
      for update skip locked
    ) c
  ),
  picked as (select id, place from candidates order by turn, place limit $2)
  update jobs j
  set state = 'running', lease_owner = $1, lease_until = $4::timestamptz + make_interval(secs => $3), attempts = j.attempts + 1, updated_at = $4::timestamptz
  from picked p
  where j.id = p.id
  returning j.id, j.kind, j.org_id, j.payload, j.attempts, j.max_attempts, j.priority, j.run_at, p.place`;

/** Takes up to `limit` due jobs of `kinds` (the ones this build knows) for `owner`, organisations
 * taking turns from the one after `after` (the `turn` of this loop's last claim; '' to start), each
 * organisation's jobs highest priority and longest waiting first. `turn` is where the next claim
 * goes on from. */
export async function claimJobs(
  db: Db,
  args: { owner: string; limit: number; leaseSeconds: number; kinds: string[]; now: Date; after?: string },
): Promise<{ jobs: ClaimedJob[]; turn: string; nextDueAt: string | null }> {
  // Walk the index, whatever the statistics say: right after a burst of inserts (and the embedded
  // database never analyzes on its own) the planner believes an organisation has one queued job and
  // would rather sort all 50,000 it has than read the first 16 in index order. The plan's costs,
  // inflated so, would then set PostgreSQL compiling it (JIT, two seconds): off too. For this
  // transaction only.
  await queryText(
    db,
    `select set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true), set_config('jit', 'off', true)`,
    [],
  );
  const rows = await queryText<{
    id: string;
    kind: string;
    org_id: string | null;
    payload: unknown;
    attempts: number;
    max_attempts: number;
    priority: number;
    run_at: Date | string;
    place: number | string;
  }>(db, CLAIM, [args.owner, args.limit, args.leaseSeconds, args.now.toISOString(), args.kinds, args.after ?? '']);
  // The furthest organisation served in the rotation (place is its position, in the database's
  // own order of ids) is where the next claim starts after.
  const last = rows.reduce<(typeof rows)[number] | null>((far, r) => (far === null || Number(r.place) > Number(far.place) ? r : far), null);
  const jobs = rows
    .sort((a, b) => b.priority - a.priority || new Date(a.run_at).getTime() - new Date(b.run_at).getTime() || (a.id < b.id ? -1 : 1))
    .map((r) => ({ id: r.id, kind: r.kind, orgId: r.org_id, payload: r.payload, attempts: r.attempts, maxAttempts: r.max_attempts }));
  // Nothing due: when the next queued job comes due (a debounced recompute, a retry), so an idle
  // loop looks then instead of at the end of its back-off, up to 5 s later.
  const nextDueAt = rows.length > 0 ? null : await nextQueuedDue(db, { kinds: args.kinds, now: args.now });
  return {
    jobs,
    turn: last ? (last.org_id ?? '') : (args.after ?? ''),
    nextDueAt,
  };
}

/** When the next queued job of `kinds` is due: `now` if one is due already, else the earliest
 * run_at, or null with none queued. Asked when a job finishes, in the transaction that records it,
 * so that its loop looks again only when there is something to take (the first due row is one
 * probe of jobs_due_idx, however long the backlog). */
export async function nextQueuedDue(db: Db, args: { kinds: string[]; now: Date }): Promise<string | null> {
  const [row] = await queryText<{ next: Date | string | null }>(
    db,
    `select case when exists (select 1 from jobs where state = 'queued' and run_at <= $1::timestamptz and kind = any($2::text[]))
       then $1::timestamptz else (select min(run_at) from jobs where state = 'queued' and kind = any($2::text[])) end as next`,
    [args.now.toISOString(), args.kinds],
  );
  return row?.next == null ? null : new Date(row.next).toISOString();
}

/** What became of a claimed job: done (with its result), back to the queue at `runAt`, or dead. */
export type JobOutcome =
  | { id: string; state: 'done'; result: unknown }
  | { id: string; state: 'queued'; runAt: string; error: string }
  | { id: string; state: 'dead'; error: string };

// A job going back to the queue drops its dedupe key if a twin was queued meanwhile (only one queued
// job per key): both run, as a job asked for while another was running should.
const KEY_UNLESS_TWIN = (alias: string) => `
  case when ${alias}.dedupe_key is not null and exists (
    select 1 from jobs t where t.state = 'queued' and t.kind = ${alias}.kind and coalesce(t.org_id, '') = coalesce(${alias}.org_id, '')
      and t.dedupe_key = ${alias}.dedupe_key and t.id <> ${alias}.id) then null else ${alias}.dedupe_key end`;

const SETTLE = `
  update jobs j
  set state = o.state,
      result = case when o.state = 'done' then o.result else j.result end,
      last_error = case when o.state = 'done' then j.last_error else o.error end,
      run_at = coalesce(o.run_at, j.run_at),
      dedupe_key = case when o.state = 'queued' then ${KEY_UNLESS_TWIN('j')} else j.dedupe_key end,
      finished_at = case when o.state in ('done', 'dead') then $3::timestamptz end,
      lease_owner = null, lease_until = null, updated_at = $3::timestamptz
  from jsonb_to_recordset($2::jsonb) as o(id text, state text, result jsonb, error text, run_at timestamptz)
  where j.id = o.id and j.state = 'running' and j.lease_owner = $1
  returning j.id`;

/** Records outcomes of jobs `owner` still holds (one whose lease passed to another worker is that
 * worker's now, and is left alone). Returns the ids settled. */
export async function settleJobs(db: Db, args: { owner: string; outcomes: JobOutcome[]; now: Date }): Promise<string[]> {
  if (args.outcomes.length === 0) return [];
  const rows = args.outcomes.map((o) => ({
    id: o.id,
    state: o.state,
    result: o.state === 'done' ? (o.result ?? null) : null,
    error: o.state === 'done' ? null : o.error.slice(0, 2000),
    run_at: o.state === 'queued' ? o.runAt : null,
  }));
  return (await queryText<{ id: string }>(db, SETTLE, [args.owner, JSON.stringify(rows), args.now.toISOString()])).map((r) => r.id);
}

/** Whether `owner` still holds `id`, locking the row to the end of the transaction. */
export async function lockHeldJob(db: Db, id: string, owner: string): Promise<boolean> {
  const rows = await queryText<{ id: string }>(
    db,
    `select id from jobs where id = $1 and state = 'running' and lease_owner = $2 for update`,
    [id, owner],
  );
  return rows.length > 0;
}

/** Extends the leases `owner` holds on `ids` (a long job stays its worker's while it runs). */
export async function renewLeases(db: Db, args: { owner: string; ids: string[]; leaseSeconds: number; now: Date }): Promise<number> {
  if (args.ids.length === 0) return 0;
  const rows = await queryText<{ id: string }>(
    db,
    `update jobs set lease_until = $4::timestamptz + make_interval(secs => $3) where id = any($1::text[]) and state = 'running' and lease_owner = $2 returning id`,
    [args.ids, args.owner, args.leaseSeconds, args.now.toISOString()],
  );
  return rows.length;
}

/** Takes back jobs whose worker is gone: the lease ran out, or its instance stopped beating (or, with
 * `all`, every running job: at the start of the embedded database's one owner, whatever runs
 * belonged to a process that is gone). A job on its last attempt is dead; the others run again now. */
export async function recoverLeases(db: Db, args: { now: Date; all?: boolean }): Promise<{ requeued: number; dead: number }> {
  const lost = args.all
    ? `select id from jobs where state = 'running' for update skip locked`
    : `select id from jobs where state = 'running' and (lease_until < $1::timestamptz or lease_owner in (
         select i.id from instances i where i.stopped_at is not null or i.worker_heartbeat_at < now() - interval '${DEAD_INSTANCE_AFTER}'))
       for update skip locked`;
  const rows = await queryText<{ state: JobState }>(
    db,
    `with lost as (${lost})
     update jobs j
     set state = case when j.attempts >= j.max_attempts then 'dead' else 'queued' end,
         last_error = 'its worker stopped before finishing it (lease taken back)',
         dedupe_key = case when j.attempts >= j.max_attempts then j.dedupe_key else ${KEY_UNLESS_TWIN('j')} end,
         finished_at = case when j.attempts >= j.max_attempts then $1::timestamptz end,
         run_at = $1::timestamptz, lease_owner = null, lease_until = null, updated_at = $1::timestamptz
     where j.id in (select id from lost)
     returning j.state`,
    [args.now.toISOString()],
  );
  return { requeued: rows.filter((r) => r.state === 'queued').length, dead: rows.filter((r) => r.state === 'dead').length };
}

// --- schedules -----------------------------------------------------------------------------------

export interface ScheduledKind {
  kind: string;
  schedule: Schedule;
  maxAttempts: number;
}

export const scheduledKinds = (kinds: readonly JobKind[], settings: Settings): ScheduledKind[] =>
  kinds.flatMap((k) =>
    k.schedule
      ? [
          {
            kind: k.kind,
            schedule: typeof k.schedule === 'function' ? k.schedule(settings) : k.schedule,
            maxAttempts: retryPolicyOf(k).maxAttempts,
          },
        ]
      : [],
  );

/** Records this build's schedules; a kind whose cadence changed starts over from `now`. */
export async function registerSchedules(db: Db, args: { schedules: ScheduledKind[]; now: Date }): Promise<void> {
  for (const s of args.schedules) {
    await queryText(
      db,
      `insert into job_schedules (kind, cadence, next_run_at) values ($1, $2, $3::timestamptz)
       on conflict (kind) do update set cadence = excluded.cadence, next_run_at = excluded.next_run_at where job_schedules.cadence <> excluded.cadence`,
      [s.kind, cadenceOf(s.schedule), nextFiring(s.schedule, args.now).toISOString()],
    );
  }
}

/** Enqueues the runs of schedules that are due and moves each to its next firing, in one
 * transaction: the row is locked (others skip it) and, once committed, no longer due, so each
 * firing happens once across every process. A run still queued from the last firing absorbs this
 * one (dedupe key "schedule"). Returns when the next schedule is due (null: none). */
export async function fireSchedules(
  db: Db,
  args: { schedules: ScheduledKind[]; now: Date },
): Promise<{ fired: string[]; nextAt: string | null }> {
  const fired: string[] = [];
  const known = new Map(args.schedules.map((s) => [s.kind, s]));
  const due = await queryText<{ kind: string; cadence: string }>(
    db,
    `select kind, cadence from job_schedules where next_run_at <= $1::timestamptz and kind = any($2::text[]) for update skip locked`,
    [args.now.toISOString(), [...known.keys()]],
  );
  for (const row of due) {
    const s = known.get(row.kind)!;
    // Another build's cadence (a rolling deploy): its processes fire it.
    if (cadenceOf(s.schedule) !== row.cadence) continue;
    await queryText(db, `update job_schedules set next_run_at = $2::timestamptz, last_run_at = $3::timestamptz where kind = $1`, [
      s.kind,
      nextFiring(s.schedule, args.now).toISOString(),
      args.now.toISOString(),
    ]);
    const [inserted] = await queryText<{ id: string }>(db, INSERT, [
      newId('job'),
      s.kind,
      null,
      '{}',
      'schedule',
      0,
      args.now.toISOString(),
      s.maxAttempts,
      args.now.toISOString(),
    ]);
    if (inserted) fired.push(s.kind);
  }
  const [next] = await queryText<{ next_at: string | null }>(
    db,
    `select to_char(min(next_run_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as next_at from job_schedules where kind = any($1::text[])`,
    [[...known.keys()]],
  );
  return { fired, nextAt: next?.next_at ?? null };
}

// --- the operator's view (revintel jobs) ---------------------------------------------------------

export interface JobView {
  id: string;
  kind: string;
  org_id: string | null;
  state: JobState;
  priority: number;
  attempts: number;
  max_attempts: number;
  dedupe_key: string | null;
  run_at: string;
  lease_owner: string | null;
  lease_until: string | null;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
}

const iso = isoTimeText;
const VIEW_COLUMNS = `id, kind, org_id, state, priority, attempts, max_attempts, dedupe_key, ${iso('run_at')} as run_at, lease_owner,
  ${iso('lease_until')} as lease_until, last_error, ${iso('created_at')} as created_at, ${iso('finished_at')} as finished_at`;

export async function listJobs(db: Db, filter: { state?: JobState; kind?: string; orgId?: string; limit?: number }): Promise<JobView[]> {
  return queryText<JobView>(
    db,
    `select ${VIEW_COLUMNS} from jobs
     where ($1::text is null or state = $1) and ($2::text is null or kind = $2) and ($3::text is null or org_id = $3)
     order by created_at desc, id desc limit $4`,
    [filter.state ?? null, filter.kind ?? null, filter.orgId ?? null, Math.min(Math.max(filter.limit ?? 50, 1), 1000)],
  );
}

export async function showJob(db: Db, id: string): Promise<(JobView & { payload: unknown; result: unknown }) | null> {
  const [row] = await queryText<JobView & { payload: unknown; result: unknown }>(
    db,
    `select ${VIEW_COLUMNS}, payload, result from jobs where id = $1`,
    [id],
  );
  return row ?? null;
}

/** Dead jobs back to the queue with fresh attempts (by id, or every dead job of a kind). A job
 * whose key is queued again already stays dead: the queued one will do its work. */
export async function retryDeadJobs(
  db: Db,
  args: { ids?: string[]; kind?: string; now: Date },
): Promise<{ retried: string[]; skipped: string[] }> {
  const candidates = args.ids
    ? await queryText<{ id: string }>(db, `select id from jobs where id = any($1::text[]) and state = 'dead' for update`, [args.ids])
    : await queryText<{ id: string }>(db, `select id from jobs where state = 'dead' and ($1::text is null or kind = $1) for update`, [
        args.kind ?? null,
      ]);
  const retried: string[] = [];
  for (const { id } of candidates) {
    const rows = await queryText<{ id: string }>(
      db,
      `update jobs j set state = 'queued', attempts = 0, run_at = $2::timestamptz, finished_at = null, updated_at = $2::timestamptz
       where j.id = $1 and not exists (
         select 1 from jobs t where t.state = 'queued' and t.kind = j.kind and coalesce(t.org_id, '') = coalesce(j.org_id, '') and t.dedupe_key = j.dedupe_key)
       returning j.id`,
      [id, args.now.toISOString()],
    );
    if (rows.length) retried.push(id);
  }
  const skipped = (args.ids ?? candidates.map((c) => c.id)).filter((id) => !retried.includes(id));
  return { retried, skipped };
}
