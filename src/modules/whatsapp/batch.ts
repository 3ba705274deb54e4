// A large WhatsApp delivery (README "WhatsApp"): Meta batches thousands of statuses in one POST.
// Stored item by item with a job each, 42,000 statuses made 42,000 jobs in a 41-second transaction
// that held the embedded database (and so every tenant) for all of it. Instead the webhook cuts the
// delivery into chunks (CHUNK_WEIGHT: 500 statuses, or 25 messages) and stores each as one `batch`
// event with one `whatsapp.batch` job, each chunk in its own short transaction; Meta gets its 200
// once every chunk is committed, so an acknowledged delivery is never lost and one half stored is
// stored again whole by Meta's retry (chunks and items are once-only by their keys). The job stores
// the chunk's items once (a status by wamid and status, a message by wamid, as a small delivery's
// are) and acts on the new ones in its own transaction: statuses in three set-wise statements
// (moving each copy only forward, as inbound.ts does one by one), messages one by one.
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

/** What one job run may take on: a status is a share of three set-wise statements, a message its
 * own few (a decision, a note, a reply). About 100 ms of the embedded database's time at most. */
export const CHUNK_WEIGHT = 500;
const weightOf = (item: Item) => (item.type === 'message' ? 20 : 1);

/** A delivery up to this many items is stored item by item with a job each, as ever (webhook.ts). */
export const SMALL_DELIVERY = 50;

/** The items cut into chunks of at most CHUNK_WEIGHT, in their order. */
export function chunksOf(items: Item[]): Item[][] {
  const chunks: Item[][] = [];
  let chunk: Item[] = [];
  let weight = 0;
  for (const item of items) {
    if (chunk.length > 0 && weight + weightOf(item) > CHUNK_WEIGHT) {
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
  let stored = 0;
  const chunks = chunksOf(items);
  for (const [index, chunk] of chunks.entries()) {
    const created = await db.transaction(async (tx) => {
      const [row] = rowsOf<{ id: string }>(
        await tx.execute(sql`
          insert into chat_inbound_events (id, platform, dedupe_key, installation_id, org_id, type, outcome, detail, body)
          values (${newId('che')}, 'whatsapp', ${`batch:${delivery}:${installation.id}:${index}`}, ${installation.id}, ${installation.org_id}, 'batch', 'received',
                  ${`${chunk.length} items, part ${index + 1} of ${chunks.length}`}, ${JSON.stringify({ items: chunk })}::jsonb)
          on conflict (platform, dedupe_key) do nothing returning id`),
      );
      if (!row) return false;
      await enqueueJob(tx as unknown as Db, whatsappBatchJob, { eventId: row.id }, { orgId: installation.org_id, dedupeKey: row.id });
      return true;
    });
    if (created) stored++;
  }
  return stored;
}

interface Batch {
  id: string;
  org_id: string;
  installation_id: string;
  body: { items: Item[] };
}

type Settled = { id: string; outcome: 'processed' | 'ignored'; detail: string };

/** The chunk's new statuses acted on together: each copy moved to the furthest status the chunk
 * holds for it, only forward; the rest settled as ignored. */
async function recordStatuses(db: Db, batch: Batch, statuses: { eventId: string; body: Record<string, any> }[], now: Date): Promise<void> {
  const settled: Settled[] = [];
  const known: { event_id: string; wamid: string; status: string; at: string; why: string | null; window_closed: boolean }[] = [];
  for (const { eventId, body } of statuses) {
    const status = String(body.status ?? '');
    if (!(STATUS_ORDER as readonly string[]).includes(status)) {
      settled.push({ id: eventId, outcome: 'ignored', detail: `status "${status.slice(0, 40)}" is not one we record` });
      continue;
    }
    const errors: { code?: unknown; title?: unknown; message?: unknown }[] = Array.isArray(body.errors) ? body.errors : [];
    const seconds = typeof body.timestamp === 'string' && /^\d{1,12}$/.test(body.timestamp) ? Number(body.timestamp) * 1000 : NaN;
    known.push({
      event_id: eventId,
      wamid: String(body.id ?? ''),
      status,
      at: new Date(Number.isFinite(seconds) && seconds <= now.getTime() ? seconds : now.getTime()).toISOString(),
      why: errors.map((e) => `${String(e?.code ?? '')} ${String(e?.title ?? e?.message ?? '')}`.trim()).join('; ').slice(0, 500) || null,
      window_closed: status === 'failed' && errors.some((e) => Number(e?.code) === WINDOW_CLOSED),
    });
  }
  const order = sql`array['sent', 'delivered', 'read', 'failed']::text[]`;
  const moved = known.length
    ? rowsOf<{ event_id: string; id: string; action_id: string; action_status: string; status: string; window_closed: boolean }>(
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
      )
    : [];
  const byEvent = new Map(moved.map((m) => [m.event_id, m]));
  for (const status of known) {
    const copy = byEvent.get(status.event_id);
    if (!copy) {
      settled.push({ id: status.event_id, outcome: 'ignored', detail: 'not a current approval message, or an older status' });
      continue;
    }
    // As for one status (inbound.ts): a 131047 on an approval still waiting sends the template, once.
    if (copy.window_closed && (copy.action_status === 'proposed' || copy.action_status === 'pending_approval')) {
      const queued = await queueWhatsAppTemplate(db, { orgId: batch.org_id, installationId: batch.installation_id, notificationId: copy.id, actionId: copy.action_id });
      settled.push({ id: status.event_id, outcome: 'processed', detail: `failed (131047) on ${copy.id}${queued ? ': the template is queued' : ': the template was sent already'}` });
    } else settled.push({ id: status.event_id, outcome: 'processed', detail: `${copy.status} on ${copy.id}` });
  }
  if (settled.length === 0) return;
  await db.execute(sql`
    update chat_inbound_events e set outcome = x.outcome, detail = x.detail
    from jsonb_to_recordset(${JSON.stringify(settled)}::jsonb) as x(id text, outcome text, detail text)
    where e.org_id = ${batch.org_id} and e.id = x.id`);
}

/** One chunk, in `db`'s transaction (the job's): its items stored once, the new ones acted on. */
export async function processBatch(db: Db, input: { orgId: string; eventId: string; now?: Date }): Promise<{ items: number; new: number }> {
  const [batch] = rowsOf<Batch>(
    await db.execute(sql`
      select id, org_id, installation_id, body from chat_inbound_events
      where org_id = ${input.orgId} and id = ${input.eventId} and platform = 'whatsapp' and type = 'batch' and outcome = 'received' for update`),
  );
  if (!batch) return { items: 0, new: 0 };
  const now = input.now ?? new Date();
  const items = Array.isArray(batch.body?.items) ? batch.body.items : [];
  const rows = items.map((item) => ({
    id: newId('che'),
    dedupe_key: String(item.dedupeKey).slice(0, 300),
    type: item.type,
    outcome: item.type === 'other' ? 'ignored' : 'received',
    detail: item.type === 'other' ? 'field not handled' : null,
    body: item.type === 'other' ? null : item.body,
  }));
  const inserted = rows.length
    ? rowsOf<{ id: string; dedupe_key: string }>(
        await db.execute(sql`
          insert into chat_inbound_events (id, platform, dedupe_key, installation_id, org_id, type, outcome, detail, body)
          select x.id, 'whatsapp', x.dedupe_key, ${batch.installation_id}, ${batch.org_id}, x.type, x.outcome, x.detail, x.body
          from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(id text, dedupe_key text, type text, outcome text, detail text, body jsonb)
          on conflict (platform, dedupe_key) do nothing returning id, dedupe_key`),
      )
    : [];
  const fresh = new Set(inserted.map((r) => r.id));
  const statuses: { eventId: string; body: Record<string, any> }[] = [];
  const messages: string[] = [];
  for (const [i, row] of rows.entries()) {
    if (!fresh.has(row.id)) continue;
    if (row.type === 'status') statuses.push({ eventId: row.id, body: (items[i]!.body ?? {}) as Record<string, any> });
    else if (row.type === 'message') messages.push(row.id);
  }
  await recordStatuses(db, batch, statuses, now);
  for (const eventId of messages) await processInbound(db, { orgId: batch.org_id, eventId, now });
  await db.execute(sql`update chat_inbound_events set outcome = 'processed', detail = ${`${items.length} items, ${fresh.size} new`} where org_id = ${batch.org_id} and id = ${batch.id}`);
  return { items: items.length, new: fresh.size };
}

/** `whatsapp.batch`: one chunk of a large delivery; its effects and the job's completion commit
 * together. */
export const whatsappBatchJob = defineJobKind({
  kind: 'whatsapp.batch',
  payload: t.Object({ eventId: t.String({ minLength: 1, maxLength: 100 }) }),
  retry: { maxAttempts: 8, baseSeconds: 2, maxSeconds: 300 },
  perform: async (db, payload, job) => {
    if (!job.orgId) throw new PermanentJobError('whatsapp.batch needs an organisation');
    return processBatch(db, { orgId: job.orgId, eventId: payload.eventId });
  },
});
