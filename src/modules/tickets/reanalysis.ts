// Re-analysis of stored tickets after the intelligence changed (docs/tickets.md "Ticket intelligence: how it
// is measured"): every ticket of an organisation whose `intelligence_version` is not this build's
// is read again and its sentiment, urgency, topics and churn signals rewritten — both the current
// ones and the ones it had when it came in (`first_*`, which the churn model's features read): the
// old values were made by rules this build no longer trusts, and the stored text is what the
// ticket says. Customers whose first intelligence changed are marked stale and rescored, as after
// a new ticket. No agent-action rule fires: an old ticket read again is no news.
//
// A chunk of tickets at a time: reading and writing are units (a transaction each, on the side that
// owns the database); the analysis runs in the job's own thread between them, so the server's main
// thread is held only for the statements. Idempotent: a ticket analysed by this version is not
// selected again, and a write only lands if the ticket was not changed by a new event meanwhile
// (its last event is the one that was read).
import { Type as t } from '@sinclair/typebox';
import { queryText, type Db } from '../../db/client.ts';
import { defineJobKind, PermanentJobError } from '../../queue/job-kind.ts';
import { enqueueJob } from '../../queue/job-queue.ts';
import { markStale } from '../predictions/stale.ts';
import type { Settings } from '../../settings.ts';
import type { TicketPriority } from './adapters/types.ts';
import { analyseTicket, INTELLIGENCE_METHOD, INTELLIGENCE_VERSION, type TicketIntelligence } from './intelligence.ts';

/** Tickets per chunk: about 40 ms of analysis and two short statements. */
export const REANALYSE_CHUNK = 250;

interface StoredTicket {
  id: string;
  customer_id: string | null;
  subject: string | null;
  description: string | null;
  priority_normalised: TicketPriority | null;
  last_event_id: string | null;
  recent_contacts: number;
  first_sentiment: number | null;
  first_urgency: string | null;
  first_churn_signals: string[] | null;
}

/** Tickets with text not yet analysed by this version, by id after `after`. Recent contacts as the
 * worker counts them when a ticket comes in: the same requester's tickets in the 7 days before. */
const READ_CHUNK = `
  select t.id, t.customer_id, t.subject, t.description, t.priority_normalised, t.last_event_id,
    t.first_sentiment, t.first_urgency, t.first_churn_signals,
    (select count(*)::int from tickets o
      where o.org_id = t.org_id and o.requester_email = t.requester_email and o.id <> t.id
        and o.source_created_at > coalesce(t.source_created_at, t.created_at) - interval '7 days'
        and o.source_created_at <= coalesce(t.source_created_at, t.created_at)) as recent_contacts
  from tickets t
  where t.org_id = $1 and t.id > $2 and (t.subject is not null or t.description is not null)
    and t.intelligence_version is distinct from $3
  order by t.id
  limit $4`;

export async function readChunk(db: Db, args: { orgId: string; after: string; limit: number }): Promise<StoredTicket[]> {
  return queryText<StoredTicket>(db, READ_CHUNK, [args.orgId, args.after, INTELLIGENCE_VERSION, args.limit]);
}

interface Analysed {
  id: string;
  lastEventId: string | null;
  customerId: string | null;
  intelligence: TicketIntelligence;
  firstChanged: boolean;
}

const WRITE_CHUNK = `
  update tickets t set sentiment = a.sentiment, urgency = a.urgency, topics = a.topics, churn_signals = a.churn_signals,
    first_sentiment = a.sentiment, first_urgency = a.urgency, first_churn_signals = a.churn_signals,
    intelligence_method = $8, intelligence_version = $9, updated_at = now()
  from (select x.id, x.last_event_id, x.sentiment, x.urgency, x.topics::jsonb as topics, x.churn_signals::jsonb as churn_signals
        from unnest($2::text[], $3::text[], $4::real[], $5::text[], $6::text[], $7::text[]) as x(id, last_event_id, sentiment, urgency, topics, churn_signals)) a
  where t.org_id = $1 and t.id = a.id and t.last_event_id is not distinct from a.last_event_id
    and t.intelligence_version is distinct from $9
  returning t.id`;

/** Writes the chunk's analyses (those whose ticket did not change meanwhile) and marks stale the
 * customers whose tickets' first intelligence changed, as a processed ticket does. */
export async function writeChunk(
  db: Db,
  args: { orgId: string; analysed: Analysed[] },
  settings: Settings,
): Promise<{ written: number; rescored: number }> {
  if (args.analysed.length === 0) return { written: 0, rescored: 0 };
  const a = args.analysed;
  const written = await queryText<{ id: string }>(db, WRITE_CHUNK, [
    args.orgId,
    a.map((x) => x.id),
    a.map((x) => x.lastEventId),
    a.map((x) => x.intelligence.sentiment),
    a.map((x) => x.intelligence.urgency),
    a.map((x) => JSON.stringify(x.intelligence.topics)),
    a.map((x) => JSON.stringify(x.intelligence.churnSignals)),
    INTELLIGENCE_METHOD,
    INTELLIGENCE_VERSION,
  ]);
  const writtenIds = new Set(written.map((row) => row.id));
  const customers = [
    ...new Set(a.filter((x) => x.firstChanged && x.customerId !== null && writtenIds.has(x.id)).map((x) => x.customerId as string)),
  ];
  await markStale(
    db,
    customers.map((customerId) => ({ orgId: args.orgId, customerId })),
    settings.predictions,
  );
  return { written: written.length, rescored: customers.length };
}

const sameList = (a: string[] | null, b: string[]) => a !== null && a.length === b.length && a.every((x, i) => x === b[i]);

export function analyseStored(rows: StoredTicket[]): Analysed[] {
  return rows.map((row) => {
    const intelligence = analyseTicket(
      { subject: row.subject, description: row.description, priority: row.priority_normalised },
      { recentContacts: row.recent_contacts },
    );
    const firstChanged =
      row.first_sentiment !== intelligence.sentiment ||
      row.first_urgency !== intelligence.urgency ||
      !sameList(row.first_churn_signals, intelligence.churnSignals);
    return { id: row.id, lastEventId: row.last_event_id, customerId: row.customer_id, intelligence, firstChanged };
  });
}

export const reanalyseUnits = {
  'read-chunk': readChunk,
  'write-chunk': writeChunk,
};

export const reanalyseTicketsJob = defineJobKind({
  kind: 'tickets.reanalyze',
  payload: t.Object({ chunkSize: t.Optional(t.Integer({ minimum: 1, maximum: 10_000 })) }),
  retry: { maxAttempts: 5 },
  units: reanalyseUnits,
  handle: async (payload, ctx) => {
    const orgId = ctx.job.orgId;
    if (!orgId) throw new PermanentJobError('tickets.reanalyze needs an organisation');
    const limit = payload.chunkSize ?? REANALYSE_CHUNK;
    let after = '';
    let read = 0;
    let written = 0;
    let rescored = 0;
    for (;;) {
      const rows = await ctx.run('read-chunk', { orgId, after, limit });
      if (rows.length === 0) break;
      read += rows.length;
      const result = await ctx.run('write-chunk', { orgId, analysed: analyseStored(rows) });
      written += result.written;
      rescored += result.rescored;
      after = rows[rows.length - 1]!.id;
      if (rows.length < limit) break;
    }
    return { read, written, customers_rescored: rescored, version: INTELLIGENCE_VERSION };
  },
});

/** Queues the re-analysis of an organisation's tickets (one queued at a time). */
export const requestReanalysis = (db: Db, orgId: string) =>
  enqueueJob(db, reanalyseTicketsJob, {}, { orgId, dedupeKey: 'all', priority: 3 });
