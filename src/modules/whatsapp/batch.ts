// A large WhatsApp delivery (README "WhatsApp"): Meta batches thousands of statuses in one POST.
// Stored item by item with a job each, 42,000 statuses made 42,000 jobs in a 41-second transaction
// that held the embedded database (and so every tenant) for all of it. Instead the webhook cuts the
// delivery into chunks (STORED_WEIGHT: 1,000 statuses, or 50 messages) and stores each as one
// `batch` event, each in its own short transaction, the last one with the delivery's one
// `whatsapp.batch` job; Meta gets its 200 once every chunk is committed, so an acknowledged
// delivery is never lost, and one half stored is stored again whole by Meta's retry (chunks and
// items are once-only by their keys). The job takes the chunks in turn, a part at a time
// (PART_WEIGHT: 100 statuses, or 5 messages; a run of about 50 ms on the embedded database), and
// queues itself for the next part, or the next chunk, in the same transaction: it
// stores the part's items once (a status by wamid and status, a message by wamid, as a small
// delivery's are) and acts on the new ones — statuses set-wise, each copy moving only forward to
// the furthest status the part holds for it (inbound.ts does the same one by one), messages one by
// one.
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { t } from 'elysia';
import { rowsOf, type Db } from '../../db/client.ts';
import { newId } from '../../lib/ids.ts';
import { defineJobKind, PermanentJobError } from '../../jobs/kind.ts';
import { enqueueJob } from '../../jobs/queue.ts';
import { processInbound, STATUS_ORDER } from './inbound.ts';
import { queueWhatsAppTemplate, WINDOW_CLOSED } from './sender.ts';
import type { WhatsAppInstallation } from './installations.ts';

/** One thing Meta told us: a message, a status, or something we keep without acting on it. */
export interface Item {
  phoneNumberId: string;
  dedupeKey: string;
  type: 'message' | 'status' | 'other';
  body: unknown;
}

/** A status is a share of two set-wise statements; a message its own few (a decision, a note, a
 * reply). */
const weightOf = (item: Item) => (item.type === 'message' ? 20 : 1);
/** What one stored chunk holds (one short transaction at the webhook). */
export const STORED_WEIGHT = 1_000;
/** What one job run takes on. */
export const PART_WEIGHT = 100;

/** A delivery up to this many items is stored item by item with a job each, as ever (webhook.ts). */
export const SMALL_DELIVERY = 50;

/** The items cut into runs of at most `limit` weight, in their order. */
export function chunksOf(items: Item[], limit: number): Item[][] {
  const chunks: Item[][] = [];
  let chunk: Item[] = [];
  let weight = 0;
  for (const item of items) {
    if (chunk.length > 0 && weight + weightOf(item) > limit) {
      chunks.push(chunk);
      chunk = [];
      weight = 0;
    }
    chunk.push(item);
    weight += weightOf(item);
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** Stores one installation's items as chunks, each with its job, each in a transaction of its own;
 * how many chunks were new (a redelivery finds them all). */
export async function storeBatches(db: Db, installation: WhatsAppInstallation, items: Item[], rawBody: Uint8Array): Promise<number> {
  const delivery = createHash('sha256').update(rawBody).digest('hex').slice(0, 32);
  const keyOf = (index: number) => `batch:${delivery}:${installation.id}:${index}`;
  let stored = 0;
  const chunks = chunksOf(items, STORED_WEIGHT);
  for (const [index, chunk] of chunks.entries()) {
    const last = index === chunks.length - 1;
    const created = await db.transaction(async (tx) => {
      const [row] = rowsOf<{ id: string }>(
        await tx.execute(sql`
          insert into chat_inbound_events (id, platform, dedupe_key, installation_id, org_id, type, outcome, detail, body)
          values (${newId('che')}, 'whatsapp', ${keyOf(index)}, ${installation.id}, ${installation.org_id}, 'batch', 'received',
                  ${`${chunk.length} items, part ${index + 1} of ${chunks.length}`}, ${JSON.stringify({ items: chunk, next: last ? null : keyOf(index + 1) })}::jsonb)
          on conflict (platform, dedupe_key) do nothing returning id`),
      );
      if (!row) return false;
      // One job for the whole delivery, with its last chunk: the chunks are worked through one
      // after another (each part queues the next), and nothing competes with storing them.
      if (last) {
        const [first] = index === 0 ? [row] : rowsOf<{ id: string }>(await tx.execute(sql`select id from chat_inbound_events where platform = 'whatsapp' and dedupe_key = ${keyOf(0)}`));
        await enqueueJob(tx as unknown as Db, whatsappBatchJob, { eventId: first!.id, from: 0 }, { orgId: installation.org_id, dedupeKey: first!.id });
      }
      return true;
    });
    if (created) stored++;
    // On the embedded database every query runs on this thread, and one transaction's awaits never
    // leave the microtask queue: let waiting requests in between chunks.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return stored;
}

interface Batch {
  id: string;
  org_id: string;
  installation_id: string;
  /** The next chunk's key (its job is queued when this one is done). */
  body: { items: Item[]; next?: string | null };
}

interface Row {
  id: string;
  dedupe_key: string;
  type: Item['type'];
  outcome: 'received' | 'processed' | 'ignored';
  detail: string | null;
  body: unknown;
}

/** What the part's new statuses do, decided set-wise before their rows are written: each copy moved
 * to the furthest status the part holds for it, only forward. Sets each row's outcome and detail. */
async function recordStatuses(db: Db, batch: Batch, statuses: Row[], now: Date): Promise<void> {
  const known: { event_id: string; wamid: string; status: string; at: string; why: string | null; window_closed: boolean }[] = [];
  for (const row of statuses) {
    const body = (row.body ?? {}) as Record<string, any>;
    const status = String(body.status ?? '');
    if (!(STATUS_ORDER as readonly string[]).includes(status)) {
      Object.assign(row, { outcome: 'ignored', detail: `status "${status.slice(0, 40)}" is not one we record` });
      continue;
    }
    const errors: { code?: unknown; title?: unknown; message?: unknown }[] = Array.isArray(body.errors) ? body.errors : [];
    const seconds = typeof body.timestamp === 'string' && /^\d{1,12}$/.test(body.timestamp) ? Number(body.timestamp) * 1000 : NaN;
    known.push({
      event_id: row.id,
      wamid: String(body.id ?? ''),
      status,
      at: new Date(Number.isFinite(seconds) && seconds <= now.getTime() ? seconds : now.getTime()).toISOString(),
      why: errors.map((e) => `${String(e?.code ?? '')} ${String(e?.title ?? e?.message ?? '')}`.trim()).join('; ').slice(0, 500) || null,
      window_closed: status === 'failed' && errors.some((e) => Number(e?.code) === WINDOW_CLOSED),
    });
  }
  if (known.length === 0) return;
  const order = sql`array['sent', 'delivered', 'read', 'failed']::text[]`;
  const moved = rowsOf<{ event_id: string; id: string; action_id: string; action_status: string; status: string; window_closed: boolean }>(
    await db.execute(sql`
      with incoming as (
        select * from jsonb_to_recordset(${JSON.stringify(known)}::jsonb) as x(event_id text, wamid text, status text, at timestamptz, why text, window_closed boolean)
      ), furthest as (
        select distinct on (wamid) * from incoming order by wamid, array_position(${order}, status) desc, at desc, event_id
      )
      update action_notifications n set platform_status = f.status, platform_status_at = f.at,
        last_error = case when f.status = 'failed' then f.why else n.last_error end, updated_at = now()
      from furthest f, agent_actions a
      where n.org_id = ${batch.org_id} and n.platform = 'whatsapp' and n.platform_message_id = f.wamid and a.org_id = n.org_id and a.id = n.action_id
        and (n.platform_status is null or array_position(${order}, n.platform_status) < array_position(${order}, f.status))
      returning f.event_id, n.id, n.action_id, a.status as action_status, f.status, f.window_closed`),
  );
  const byEvent = new Map(moved.map((m) => [m.event_id, m]));
  for (const row of statuses) {
    if (row.outcome !== 'received') continue;
    const copy = byEvent.get(row.id);
    if (!copy) {
      Object.assign(row, { outcome: 'ignored', detail: 'not a current approval message, or an older status' });
      continue;
    }
    // As for one status (inbound.ts): a 131047 on an approval still waiting sends the template, once.
    if (copy.window_closed && (copy.action_status === 'proposed' || copy.action_status === 'pending_approval')) {
      const queued = await queueWhatsAppTemplate(db, { orgId: batch.org_id, installationId: batch.installation_id, notificationId: copy.id, actionId: copy.action_id });
      Object.assign(row, { outcome: 'processed', detail: `failed (131047) on ${copy.id}${queued ? ': the template is queued' : ': the template was sent already'}` });
    } else Object.assign(row, { outcome: 'processed', detail: `${copy.status} on ${copy.id}` });
  }
}

/** One part of a chunk, in `db`'s transaction (the job's): its new items stored once and acted on;
 * the next part queued, or the chunk settled. */
export async function processBatch(db: Db, input: { orgId: string; eventId: string; from: number; now?: Date }): Promise<{ items: number; new: number; next: number | null }> {
  const [batch] = rowsOf<Batch>(
    await db.execute(sql`
      select id, org_id, installation_id, body from chat_inbound_events
      where org_id = ${input.orgId} and id = ${input.eventId} and platform = 'whatsapp' and type = 'batch' and outcome = 'received' for update`),
  );
  if (!batch) return { items: 0, new: 0, next: null };
  const now = input.now ?? new Date();
  const all = Array.isArray(batch.body?.items) ? batch.body.items : [];
  const part = chunksOf(all.slice(input.from), PART_WEIGHT)[0] ?? [];
  const next = input.from + part.length < all.length ? input.from + part.length : null;
  // Which items are new: looked up by the unique key, before anything is written.
  const keys = [...new Set(part.map((item) => String(item.dedupeKey).slice(0, 300)))];
  const seen = new Set(
    keys.length ? rowsOf<{ dedupe_key: string }>(await db.execute(sql`select dedupe_key from chat_inbound_events where platform = 'whatsapp' and dedupe_key in (select jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))`)).map((r) => r.dedupe_key) : [],
  );
  const rows: Row[] = [];
  for (const item of part) {
    const dedupeKey = String(item.dedupeKey).slice(0, 300);
    if (seen.has(dedupeKey)) continue;
    seen.add(dedupeKey);
    const other = item.type === 'other';
    rows.push({ id: newId('che'), dedupe_key: dedupeKey, type: item.type, outcome: other ? 'ignored' : 'received', detail: other ? 'field not handled' : null, body: other ? null : item.body });
  }
  await recordStatuses(db, batch, rows.filter((row) => row.type === 'status'), now);
  if (rows.length > 0) {
    // Another process storing the same item meanwhile (PostgreSQL) wins; a status's effect is
    // idempotent, and a message is acted on by whoever stored it.
    const inserted = rowsOf<{ id: string }>(
      await db.execute(sql`
        insert into chat_inbound_events (id, platform, dedupe_key, installation_id, org_id, type, outcome, detail, body)
        select x.id, 'whatsapp', x.dedupe_key, ${batch.installation_id}, ${batch.org_id}, x.type, x.outcome, x.detail, x.body
        from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(id text, dedupe_key text, type text, outcome text, detail text, body jsonb)
        on conflict (platform, dedupe_key) do nothing returning id`),
    );
    const stored = new Set(inserted.map((r) => r.id));
    for (const row of rows) if (row.type === 'message' && stored.has(row.id)) await processInbound(db, { orgId: batch.org_id, eventId: row.id, now });
  }
  if (next !== null) await enqueueJob(db, whatsappBatchJob, { eventId: batch.id, from: next }, { orgId: batch.org_id, dedupeKey: `${batch.id}:${next}` });
  else {
    await db.execute(sql`update chat_inbound_events set outcome = 'processed', detail = ${`${all.length} items`} where org_id = ${batch.org_id} and id = ${batch.id}`);
    const [following] = batch.body.next ? rowsOf<{ id: string }>(await db.execute(sql`select id from chat_inbound_events where platform = 'whatsapp' and dedupe_key = ${batch.body.next} and org_id = ${batch.org_id}`)) : [];
    if (following) await enqueueJob(db, whatsappBatchJob, { eventId: following.id, from: 0 }, { orgId: batch.org_id, dedupeKey: following.id });
  }
  return { items: part.length, new: rows.length, next };
}

/** `whatsapp.batch`: one part of a chunk of a large delivery; its effects, the next part's job and
 * this job's completion commit together. */
export const whatsappBatchJob = defineJobKind({
  kind: 'whatsapp.batch',
  payload: t.Object({ eventId: t.String({ minLength: 1, maxLength: 100 }), from: t.Integer({ minimum: 0 }) }),
  retry: { maxAttempts: 8, baseSeconds: 2, maxSeconds: 300 },
  perform: async (db, payload, job) => {
    if (!job.orgId) throw new PermanentJobError('whatsapp.batch needs an organisation');
    return processBatch(db, { orgId: job.orgId, eventId: payload.eventId, from: payload.from });
  },
});
