// The ticket event queue's transactions: claim due events, apply what the worker made of them
// (tickets upserted, customers linked, risk inputs marked, events done — all in one transaction, so
// an event's effects and its "done" commit together), and schedule retries or dead-letter failures.
// Delivery is at least once (a worker that dies lets its lease run out and the event is claimed
// again); the effects are idempotent (tickets are upserted by connector and platform id, and an
// event that is no longer held by its claimant is skipped), so the result is exactly once.
import { queryText, type Db } from '../../../db/client.ts';
import type { Platform } from '../platforms.ts';
import type { EventSource } from '../../../db/schema/index.ts';
import { isFinal, retryDelaySeconds, type FailedOutcome } from './retry.ts';
import { storableText } from '../../../db/storable.ts';
import { markStale } from '../../predictions/stale.ts';
import { fireTicketSignals } from '../../agent-actions/rules.ts';
import type { Settings } from '../../../settings.ts';

export interface ClaimedEvent {
  id: string;
  orgId: string;
  connectorId: string;
  platform: Platform;
  source: EventSource;
  body: string;
  headers: Record<string, string>;
  /** Including this one. */
  attempts: number;
}

/** A worker whose instance has not beaten for this long is dead: its leases are taken back at once
 * rather than when they run out. */
const DEAD_INSTANCE_AFTER = '15 seconds';

export const CLAIM = `
  with due as (
    select id from ticket_events
    where status = 'pending' and run_after <= now()
    order by run_after, id
    limit $2
    for update skip locked
  ), orphaned as (
    select id from ticket_events
    where status = 'processing'
      and (lease_until < now()
           or lease_owner in (select i.id from instances i where i.stopped_at is not null or i.worker_heartbeat_at < now() - interval '${DEAD_INSTANCE_AFTER}'))
    order by lease_until
    limit $2
    for update skip locked
  )
  update ticket_events e
  set status = 'processing', lease_owner = $1, lease_until = now() + make_interval(secs => $3), attempts = e.attempts + 1
  from connectors c
  -- = any(array(…)), not in (…): PostgreSQL's generic plan for this prepared statement guesses the
  -- limit at 10% of the table and joined it to a scan of the whole queue (76 ms instead of 8 for
  -- 20,000 pending, and growing with the table); an array of ids is always looked up by key.
  where e.id = any (array(select id from due union select id from orphaned)) and c.id = e.connector_id
  returning e.id, e.org_id, e.connector_id, c.platform, e.source, e.body, e.headers, e.attempts`;

/** Takes up to `limit` due events (and any a dead worker held) for `owner`. */
export async function claimEvents(db: Db, args: { owner: string; limit: number; leaseSeconds: number }): Promise<ClaimedEvent[]> {
  const rows = await queryText<{
    id: string;
    org_id: string;
    connector_id: string;
    platform: Platform;
    source: EventSource;
    body: string;
    headers: Record<string, string>;
    attempts: number;
  }>(db, CLAIM, [args.owner, args.limit, args.leaseSeconds]);
  return rows
    .map((r) => ({
      id: r.id,
      orgId: r.org_id,
      connectorId: r.connector_id,
      platform: r.platform,
      source: r.source,
      body: r.body,
      headers: r.headers,
      attempts: r.attempts,
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** In how many ms the next pending event comes due (a retry's back-off ending; by the database's
 * clock), or null when none is pending. An idle ticket loop looks again then, not only at the end
 * of its back-off. */
export async function nextEventDueMs(db: Db): Promise<number | null> {
  const [row] = await queryText<{ in_ms: number | null }>(
    db,
    `select (extract(epoch from min(run_after) - now()) * 1000)::float8 as in_ms from ticket_events where status = 'pending'`,
    [],
  );
  return row?.in_ms == null ? null : Math.max(0, Number(row.in_ms));
}

/** How long the oldest due event has waited (ms, by the database's clock; null when none is due).
 * A fresh event is due from the moment it is received; a retry from the moment its back-off ends. */
export async function oldestDueWaitMs(db: Db): Promise<number | null> {
  const [row] = await queryText<{ waited_ms: number | null }>(
    db,
    // The first entry of the due index, not min() over it: this runs every second of a burst,
    // while tens of thousands of events wait.
    `select (extract(epoch from now() - run_after) * 1000)::float8 as waited_ms
     from ticket_events where status = 'pending' and run_after <= now()
     order by run_after, id limit 1`,
    [],
  );
  return row?.waited_ms == null ? null : Math.max(0, Number(row.waited_ms));
}

/** On the embedded database one process owns it: whatever is `processing` at its start was held by
 * a worker of an earlier run, which is gone. */
export async function releaseAllLeases(db: Db): Promise<number> {
  const rows = await queryText<{ id: string }>(
    db,
    `update ticket_events set status = 'pending', lease_owner = null, lease_until = null where status = 'processing' returning id`,
    [],
  );
  return rows.length;
}

/** A ticket as the worker made it: the platform's fields (read from a storable payload: see
 * db/storable.ts) and its intelligence. */
export interface AnalysedTicket {
  externalId: string;
  subject: string | null;
  description: string | null;
  status: string | null;
  statusNormalised: string | null;
  priority: string | null;
  priorityNormalised: string | null;
  requesterEmail: string | null;
  createdAt: string | null;
  updatedAt: string | null;
  /** Null when the event carried no text to judge (a HubSpot property change): the ticket keeps
   * what it had. */
  intelligence: { sentiment: number; urgency: string; topics: string[]; churnSignals: string[]; method: string; version: string } | null;
}

export type EventOutcome = { eventId: string; ok: true; tickets: AnalysedTicket[] } | FailedOutcome;

/** The events of `ids` still held by `owner`, locked until the transaction ends: an event whose lease
 * passed to another worker is that worker's to apply. */
async function stillHeld(
  db: Db,
  owner: string,
  ids: string[],
): Promise<Map<string, { orgId: string; connectorId: string; attempts: number }>> {
  const rows = await queryText<{ id: string; org_id: string; connector_id: string; attempts: number }>(
    db,
    `select id, org_id, connector_id, attempts from ticket_events where id = any($1::text[]) and status = 'processing' and lease_owner = $2 for update`,
    [ids, owner],
  );
  return new Map(rows.map((r) => [r.id, { orgId: r.org_id, connectorId: r.connector_id, attempts: r.attempts }]));
}

// Every descriptive field keeps its stored value when an event does not carry it (HubSpot sends one
// property per event); an event older than the stored version changes nothing; a version equal to
// the stored one changes nothing either (so a re-delivery does not even move updated_at).
const KEPT_UNLESS_SENT = [
  'subject',
  'description',
  'status',
  'status_normalised',
  'priority',
  'priority_normalised',
  'requester_email',
  'source_created_at',
];
const INTELLIGENCE = ['sentiment', 'urgency', 'topics', 'churn_signals', 'intelligence_method', 'intelligence_version'];
// The intelligence is replaced whole, or kept whole when the event had no text to judge.
const merged = (column: string) =>
  INTELLIGENCE.includes(column)
    ? `case when excluded.intelligence_method is null then tickets.${column} else excluded.${column} end`
    : `coalesce(excluded.${column}, tickets.${column})`;
const CHANGED = [...KEPT_UNLESS_SENT, ...INTELLIGENCE, 'customer_id', 'source_updated_at'];
// The first intelligence a ticket gets is kept for good (what was known when it came in: churn
// predictions for past days read it); a ticket first seen without text gets it from the first event
// that has some.
const FIRST_INTELLIGENCE = [
  ['first_sentiment', 'sentiment'],
  ['first_urgency', 'urgency'],
  ['first_churn_signals', 'churn_signals'],
] as const;
/** What a new ticket gets: a ticket never judged has no topics and no signals, not null ones. */
const inserted = (column: string) => (column === 'topics' || column === 'churn_signals' ? `coalesce(${column}, '[]'::jsonb)` : column);

const UPSERT_TICKETS = `
  with input as (
    select * from jsonb_to_recordset($1::jsonb) as x(
      id text, org_id text, connector_id text, external_id text, subject text, description text, status text, status_normalised text,
      priority text, priority_normalised text, requester_email text, source_created_at timestamptz, source_updated_at timestamptz,
      sentiment real, urgency text, topics jsonb, churn_signals jsonb, intelligence_method text, intelligence_version text, last_event_id text)
  ), linked as (
    -- The customer: by the requester's e-mail, else by its domain (oldest match first).
    select i.*, coalesce(
      (select c.id from customers c where c.org_id = i.org_id and lower(c.email) = i.requester_email and c.deleted_at is null order by c.created_at, c.id limit 1),
      (select c.id from customers c where c.org_id = i.org_id and lower(c.domain) = split_part(i.requester_email, '@', 2) and c.deleted_at is null order by c.created_at, c.id limit 1)
    ) as customer_id
    from input i
  )
  insert into tickets as tickets (id, org_id, connector_id, external_id, customer_id, ${[...KEPT_UNLESS_SENT, 'source_updated_at', ...INTELLIGENCE, 'last_event_id'].join(', ')},
    ${FIRST_INTELLIGENCE.map(([first]) => first).join(', ')})
  select id, org_id, connector_id, external_id, customer_id, ${[...KEPT_UNLESS_SENT, 'source_updated_at', ...INTELLIGENCE, 'last_event_id'].map(inserted).join(', ')},
    ${FIRST_INTELLIGENCE.map(([, column]) => column).join(', ')}
  from linked
  on conflict (connector_id, external_id) do update set
    ${[...KEPT_UNLESS_SENT, ...INTELLIGENCE, 'customer_id', 'source_updated_at'].map((c) => `${c} = ${merged(c)}`).join(',\n    ')},
    ${FIRST_INTELLIGENCE.map(([first]) => `${first} = coalesce(tickets.${first}, excluded.${first})`).join(',\n    ')},
    last_event_id = excluded.last_event_id,
    updated_at = now()
  where (tickets.source_updated_at is null or excluded.source_updated_at is null or excluded.source_updated_at >= tickets.source_updated_at)
    and (${CHANGED.map((c) => `tickets.${c}`).join(', ')}) is distinct from (${CHANGED.map(merged).join(', ')})
  returning id, org_id, customer_id`;

const TICKET_IDS = `
  select t.connector_id, t.external_id, t.id from tickets t
  join unnest($1::text[], $2::text[]) as k(connector_id, external_id) on t.connector_id = k.connector_id and t.external_id = k.external_id`;

const MARK_DONE = `
  update ticket_events e set status = 'done', processed_at = now(), lease_owner = null, lease_until = null, last_error = null, ticket_ids = d.ticket_ids::jsonb
  from unnest($1::text[], $2::text[]) as d(id, ticket_ids)
  where e.id = d.id`;

const MARK_FAILED = `
  update ticket_events e set status = f.status, run_after = now() + make_interval(secs => f.delay_seconds), last_error = f.error,
    lease_owner = null, lease_until = null, processed_at = case when f.status = 'dead' then now() else null end
  from unnest($1::text[], $2::text[], $3::float8[], $4::text[]) as f(id, status, delay_seconds, error)
  where e.id = f.id`;

export interface ApplyResult {
  done: number;
  failed: number;
  dead: number;
  skipped: number;
  tickets: number;
  /** Tickets linked to a customer: their predictions were marked stale and their signals fired,
   * both of which may queue jobs (the worker wakes its job loop for them). */
  linked: number;
}

/** Applies a batch of outcomes in one transaction (the caller's). */
export async function applyOutcomes(
  db: Db,
  args: { owner: string; outcomes: EventOutcome[]; newTicketId: () => string },
  settings: Settings,
): Promise<ApplyResult> {
  const held = await stillHeld(
    db,
    args.owner,
    args.outcomes.map((o) => o.eventId),
  );
  const result: ApplyResult = { done: 0, failed: 0, dead: 0, skipped: 0, tickets: 0, linked: 0 };

  // Tickets: one row per (connector, platform id) — of several versions in this batch, the newest
  // (or, for equal times, the later event) — so one statement never updates a row twice.
  const versions = new Map<string, Record<string, unknown>>();
  const keysOfEvent = new Map<string, string[]>();
  for (const outcome of args.outcomes) {
    const event = held.get(outcome.eventId);
    if (!event) {
      result.skipped++;
      continue;
    }
    if (!outcome.ok) continue;
    const keys: string[] = [];
    for (const t of outcome.tickets) {
      const key = `${event.connectorId}\0${t.externalId}`;
      keys.push(key);
      const row = {
        id: args.newTicketId(),
        org_id: event.orgId,
        connector_id: event.connectorId,
        external_id: t.externalId,
        subject: t.subject,
        description: t.description,
        status: t.status,
        status_normalised: t.statusNormalised,
        priority: t.priority,
        priority_normalised: t.priorityNormalised,
        requester_email: t.requesterEmail,
        source_created_at: t.createdAt,
        source_updated_at: t.updatedAt,
        sentiment: t.intelligence?.sentiment ?? null,
        urgency: t.intelligence?.urgency ?? null,
        topics: t.intelligence?.topics ?? null,
        churn_signals: t.intelligence?.churnSignals ?? null,
        intelligence_method: t.intelligence?.method ?? null,
        intelligence_version: t.intelligence?.version ?? null,
        last_event_id: outcome.eventId,
      };
      const previous = versions.get(key);
      const newer =
        !previous?.source_updated_at ||
        !row.source_updated_at ||
        Date.parse(row.source_updated_at) >= Date.parse(previous.source_updated_at as string);
      if (newer) versions.set(key, previous ? { ...row, id: previous.id } : row);
    }
    keysOfEvent.set(outcome.eventId, keys);
  }

  if (versions.size > 0) {
    const written = await queryText<{ id: string; org_id: string; customer_id: string | null }>(db, UPSERT_TICKETS, [
      JSON.stringify([...versions.values()]),
    ]);
    result.tickets = written.length;
    const linked = written.filter((t) => t.customer_id !== null);
    result.linked = linked.length;
    // Their churn predictions are stale now, and are rescored a few seconds later.
    await markStale(
      db,
      linked.map((t) => ({ orgId: t.org_id, customerId: t.customer_id! })),
      settings.predictions,
    );
    await fireTicketSignals(
      db,
      linked.map((t) => t.id),
      settings.actions,
    );
  }
  const idOfKey = new Map<string, string>();
  if (versions.size > 0) {
    const keys = [...versions.keys()].map((k) => k.split('\0') as [string, string]);
    const rows = await queryText<{ connector_id: string; external_id: string; id: string }>(db, TICKET_IDS, [
      keys.map((k) => k[0]),
      keys.map((k) => k[1]),
    ]);
    for (const row of rows) idOfKey.set(`${row.connector_id}\0${row.external_id}`, row.id);
  }

  const doneIds: string[] = [];
  const doneTickets: string[] = [];
  const failed = { ids: [] as string[], statuses: [] as string[], delays: [] as number[], errors: [] as string[] };
  for (const outcome of args.outcomes) {
    const event = held.get(outcome.eventId);
    if (!event) continue;
    if (outcome.ok) {
      doneIds.push(outcome.eventId);
      doneTickets.push(JSON.stringify((keysOfEvent.get(outcome.eventId) ?? []).map((k) => idOfKey.get(k)).filter(Boolean)));
      result.done++;
    } else {
      const dead = isFinal(outcome, event.attempts);
      failed.ids.push(outcome.eventId);
      failed.statuses.push(dead ? 'dead' : 'pending');
      failed.delays.push(dead ? 0 : retryDelaySeconds(event.attempts));
      // Errors quote the payload (and a cut can split a surrogate pair).
      failed.errors.push(storableText(outcome.error.slice(0, 2000)));
      if (dead) result.dead++;
      else result.failed++;
    }
  }
  if (doneIds.length > 0) await queryText(db, MARK_DONE, [doneIds, doneTickets]);
  if (failed.ids.length > 0) await queryText(db, MARK_FAILED, [failed.ids, failed.statuses, failed.delays, failed.errors]);
  return result;
}

/** The key under which recent contacts are counted. */
export const contactKey = (orgId: string, email: string) => `${orgId}\0${email}`;

/** For each (org, requester e-mail), how many tickets they opened in the last 7 days, by contactKey. */
export async function recentContacts(db: Db, pairs: { orgId: string; email: string }[]): Promise<Record<string, number>> {
  if (pairs.length === 0) return {};
  const rows = await queryText<{ org_id: string; email: string; n: number }>(
    db,
    `select t.org_id, t.requester_email as email, count(*)::int as n
     from (select distinct org_id, email from unnest($1::text[], $2::text[]) as p(org_id, email)) p
     join tickets t on t.org_id = p.org_id and t.requester_email = p.email and t.source_created_at > now() - interval '7 days'
     group by t.org_id, t.requester_email`,
    [pairs.map((p) => p.orgId), pairs.map((p) => p.email)],
  );
  return Object.fromEntries(rows.map((r) => [contactKey(r.org_id, r.email), r.n]));
}

// --- the operator's view: revintel events list|show|replay ----------------------------------------

export interface EventSummary {
  id: string;
  org_id: string;
  connector_id: string;
  connector_name: string;
  source: EventSource;
  status: string;
  attempts: number;
  run_after: string;
  last_error: string | null;
  ticket_ids: string[] | null;
  received_at: string;
  processed_at: string | null;
}

const SUMMARY_COLUMNS = `e.id, e.org_id, e.connector_id, c.name as connector_name, e.source, e.status, e.attempts, e.run_after, e.last_error, e.ticket_ids, e.received_at, e.processed_at`;

/** As the drivers give it: times as Dates (or text). */
type SummaryRow = Omit<EventSummary, 'run_after' | 'received_at' | 'processed_at'> & {
  run_after: Date | string;
  received_at: Date | string;
  processed_at: Date | string | null;
};

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

function summary({ body: _body, headers: _headers, ...row }: SummaryRow & { body?: string; headers?: unknown }): EventSummary {
  return { ...row, run_after: iso(row.run_after)!, received_at: iso(row.received_at)!, processed_at: iso(row.processed_at) };
}

export interface ListEventsFilter {
  orgId?: string;
  connectorId?: string;
  status?: string;
  limit: number;
}

/** Newest first. */
export async function listEvents(db: Db, filter: ListEventsFilter): Promise<EventSummary[]> {
  const rows = await queryText<SummaryRow>(
    db,
    `select ${SUMMARY_COLUMNS} from ticket_events e join connectors c on c.id = e.connector_id
     where ($1::text is null or e.org_id = $1) and ($2::text is null or e.connector_id = $2) and ($3::text is null or e.status = $3)
     order by e.received_at desc, e.id desc limit $4`,
    [filter.orgId ?? null, filter.connectorId ?? null, filter.status ?? null, filter.limit],
  );
  return rows.map(summary);
}

/** An organisation's events for the API (GET /api/ticket-events): newest first, a page after the
 * cursor's (received_at, id), on the (org_id, received_at desc, id desc) index. `sort_value` is the
 * time as PostgreSQL's text, to the microsecond, for the cursor. */
export async function listOrgEvents(
  db: Db,
  filter: { orgId: string; connectorId?: string; status?: string; limit: number; after?: { value: string; id: string } },
): Promise<(EventSummary & { sort_value: string })[]> {
  const rows = await queryText<SummaryRow & { sort_value: string }>(
    db,
    `select ${SUMMARY_COLUMNS}, e.received_at::text as sort_value from ticket_events e join connectors c on c.id = e.connector_id
     where e.org_id = $1 and ($2::text is null or e.connector_id = $2) and ($3::text is null or e.status = $3)
       and ($4::timestamptz is null or (e.received_at, e.id) < ($4::timestamptz, $5::text))
     order by e.received_at desc, e.id desc limit $6`,
    [filter.orgId, filter.connectorId ?? null, filter.status ?? null, filter.after?.value ?? null, filter.after?.id ?? null, filter.limit],
  );
  return rows.map((row) => ({ ...summary(row), sort_value: row.sort_value }));
}

/** One event with its body and kept headers. */
export async function showEvent(db: Db, id: string): Promise<(EventSummary & { body: string; headers: Record<string, string> }) | null> {
  const [row] = await queryText<SummaryRow & { body: string; headers: Record<string, string> }>(
    db,
    `select ${SUMMARY_COLUMNS}, e.body, e.headers from ticket_events e join connectors c on c.id = e.connector_id where e.id = $1`,
    [id],
  );
  return row ? { ...summary(row), body: row.body, headers: row.headers } : null;
}

/** Dead (or still waiting) events go back to the queue, due now, with their attempts counted
 * afresh. Events being processed or done are left alone and reported. With `orgId` (the API), only
 * that organisation's events: another's are "not found". */
export async function replayEvents(
  db: Db,
  args: { ids?: string[]; allDead?: { orgId?: string }; orgId?: string },
): Promise<{ replayed: string[]; refused: { id: string; status: string }[] }> {
  const rows = args.ids
    ? await queryText<{ id: string }>(
        db,
        `update ticket_events set status = 'pending', attempts = 0, run_after = now(), last_error = null, processed_at = null, lease_owner = null, lease_until = null
         where id = any($1::text[]) and status in ('dead', 'pending') and ($2::text is null or org_id = $2) returning id`,
        [args.ids, args.orgId ?? null],
      )
    : await queryText<{ id: string }>(
        db,
        `update ticket_events set status = 'pending', attempts = 0, run_after = now(), last_error = null, processed_at = null
         where status = 'dead' and ($1::text is null or org_id = $1) returning id`,
        [args.allDead?.orgId ?? null],
      );
  const replayed = rows.map((r) => r.id);
  const others = (args.ids ?? []).filter((id) => !replayed.includes(id));
  const refused = others.length
    ? await queryText<{ id: string; status: string }>(
        db,
        `select id, status from ticket_events where id = any($1::text[]) and ($2::text is null or org_id = $2)`,
        [others, args.orgId ?? null],
      )
    : [];
  const found = new Set(refused.map((r) => r.id));
  return { replayed, refused: [...refused, ...others.filter((id) => !found.has(id)).map((id) => ({ id, status: 'not found' }))] };
}
