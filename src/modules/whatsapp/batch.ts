// A large WhatsApp delivery (docs/chat-platforms.md "WhatsApp"): Meta batches thousands of statuses in one POST.
// Stored item by item with a job each, 42,000 statuses made 42,000 jobs in a 41-second transaction
// that held the embedded database (and so every tenant) for all of it; stored as jsonb chunks of
// 1,000 (one transaction each) the acknowledgement still held it for 0.2 s. Now the webhook stores
// the delivery as it came, as ONE `delivery` event per installation it names: its raw text (a
// column kept uncompressed: one cheap write) with its one `whatsapp.batch` job, in one short
// transaction, and Meta gets its 200 once that has committed, so an acknowledged delivery is never
// lost and a redelivery finds the event by the body's digest.
// The job (a `handle` kind) reads the text once and parses it in the worker thread, then works
// through the items a part per unit, each part sized by the time the last one took (aiming at
// 30 ms on the database): the part's items stored once (a status by wamid and status, a message by
// wamid, as a small delivery's are) and acted on — statuses set-wise, each copy moving only forward
// to the furthest status the part holds for it (inbound.ts does the same one by one), messages one
// by one — and the event's progress, in the same transaction. A job run again (a worker that died)
// starts where the progress says.
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Type as t } from '@sinclair/typebox';
import { rowsOf, type Db } from '../../db/client.ts';
import { transaction } from '../../db/transaction.ts';
import { nextSizeByTime, timed } from '../../db/units-of-work.ts';
import { newId } from '../../lib/ids.ts';
import { defineJobKind, PermanentJobError } from '../../queue/job-kind.ts';
import { enqueueJob } from '../../queue/job-queue.ts';
import { processInbound, STATUS_ORDER } from './inbound.ts';
import type { DecisionSettings } from '../agent-actions/who-decides.ts';
import type { Settings } from '../../settings.ts';
import { isJsonObject } from '../signed-webhooks/payload.ts';
import { itemsOf, parseBody, type Item, type StatusBody } from './items.ts';
import { queueWhatsAppTemplate, WINDOW_CLOSED } from './sender.ts';
import type { WhatsAppInstallation } from './installations.ts';

/** A status is a share of two set-wise statements; a message its own few (a decision, a note, a
 * reply). */
const weightOf = (item: Item) => (item.type === 'message' ? 20 : 1);

/** A delivery up to this many items is stored item by item with a job each, as ever (webhook.ts). */
export const SMALL_DELIVERY = 50;

/** Parts are sized by the time the last one took in the database (nextSizeByTime), in weight. At
 * 15 ms (was 30) a 40,000-status delivery beside 100,000 customers ran 6 of 808 parts over 100 ms
 * of wall time instead of 28 of 248 (bench:isolation, embedded, load 8-9), for a job 1.5x longer. */
const PART_SIZING = { targetMs: 15, min: 20, max: 2_000 };
const PART_FIRST = 100;

/** The end of the part that starts at `from`: items up to `limit` weight (one at least). */
export function partEnd(items: Item[], from: number, limit: number): number {
  let weight = 0;
  let end = from;
  while (end < items.length && (end === from || weight + weightOf(items[end]!) <= limit)) weight += weightOf(items[end++]!);
  return end;
}

/** A delivery's text is stored in pieces of this many characters (about 1 MB), each a short
 * transaction of its own: a 4 MB text written at once held the embedded database for 60–170 ms on
 * a busy machine, a piece of 1 MB for 20–50 ms. */
export const RAW_PIECE = 1_000_000;

/** `text` cut into pieces of at most `size` characters, never between the two halves of a
 * surrogate pair (a half alone has no UTF-8 form). */
export function piecesOf(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + size);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += end - 1 > at ? -1 : 1;
    pieces.push(text.slice(at, end));
    at = end;
  }
  return pieces;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const pieceKey = (key: string, index: number) => `${key}:piece:${index}`;

/**
 * Stores a large delivery for one installation as one event with its job: its text first, a piece
 * per transaction (requests let in between), then the event and the job in one transaction. The
 * caller answers Meta once this has returned, so an acknowledged delivery is never lost; one cut
 * off before its event is stored again whole by Meta's retry (the pieces are once-only by their
 * keys). False when it was stored before.
 */
export async function storeDelivery(
  db: Db,
  installation: WhatsAppInstallation,
  input: { text: string; digest: string; items: number; phoneNumberId: string },
): Promise<boolean> {
  const key = `delivery:${input.digest}:${installation.id}`;
  const [known] = rowsOf<{ id: string }>(
    await db.execute(sql`select id from chat_inbound_events where platform = 'whatsapp' and dedupe_key = ${key}`),
  );
  if (known) return false;
  const pieces = piecesOf(input.text, RAW_PIECE);
  for (const [index, piece] of pieces.entries()) {
    await db.execute(sql`
      insert into chat_inbound_events (id, platform, dedupe_key, installation_id, org_id, type, outcome, detail, raw)
      values (${newId('che')}, 'whatsapp', ${pieceKey(key, index)}, ${installation.id}, ${installation.org_id}, 'delivery-piece', 'ignored',
              ${`piece ${index + 1} of ${pieces.length} of a delivery`}, ${piece})
      on conflict (platform, dedupe_key) do nothing`);
    // On the embedded database every query runs on this thread: let waiting requests in.
    await nextTurn();
  }
  return transaction(db, async (tx) => {
    const [row] = rowsOf<{ id: string }>(
      await tx.execute(sql`
        insert into chat_inbound_events (id, platform, dedupe_key, installation_id, org_id, type, outcome, detail, body)
        values (${newId('che')}, 'whatsapp', ${key}, ${installation.id}, ${installation.org_id}, 'delivery', 'received',
                ${`${input.items} items, ${input.text.length} characters`}, ${JSON.stringify({ phone_number_id: input.phoneNumberId, items: input.items, pieces: pieces.length, done: 0 })}::jsonb)
        on conflict (platform, dedupe_key) do nothing returning id`),
    );
    if (!row) return false;
    await enqueueJob(tx, whatsappBatchJob, { eventId: row.id }, { orgId: installation.org_id, dedupeKey: row.id });
    return true;
  });
}

/** The digest a delivery is known by (its body's bytes). */
export const deliveryDigest = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex').slice(0, 32);

interface Event {
  id: string;
  org_id: string;
  installation_id: string;
  dedupe_key: string;
  type: 'delivery' | 'batch';
  /** A delivery's: its number, its item count and how many are done. An older release's `batch`
   * chunk: its items and the next chunk's key (a job queued before an upgrade still runs). */
  body: { phone_number_id?: string; items?: number | Item[]; pieces?: number; done?: number; next?: string | null };
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
async function recordStatuses(db: Db, event: Event, statuses: Row[], now: Date): Promise<void> {
  const known: { event_id: string; wamid: string; status: string; at: string; why: string | null; window_closed: boolean }[] = [];
  for (const row of statuses) {
    const body: StatusBody = isJsonObject(row.body) ? row.body : {};
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
      why:
        errors
          .map((e) => `${String(e?.code ?? '')} ${String(e?.title ?? e?.message ?? '')}`.trim())
          .join('; ')
          .slice(0, 500) || null,
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
      where n.org_id = ${event.org_id} and n.platform = 'whatsapp' and n.platform_message_id = f.wamid and a.org_id = n.org_id and a.id = n.action_id
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
      const queued = await queueWhatsAppTemplate(db, {
        orgId: event.org_id,
        installationId: event.installation_id,
        notificationId: copy.id,
        actionId: copy.action_id,
      });
      Object.assign(row, {
        outcome: 'processed',
        detail: `failed (131047) on ${copy.id}${queued ? ': the template is queued' : ': the template was sent already'}`,
      });
    } else Object.assign(row, { outcome: 'processed', detail: `${copy.status} on ${copy.id}` });
  }
}

/** The part's new items stored once and acted on, in `db`'s transaction. */
async function storeItems(db: Db, event: Event, part: Item[], now: Date, settings: DecisionSettings): Promise<number> {
  // Which items are new: looked up by the unique key, before anything is written.
  const keys = [...new Set(part.map((item) => String(item.dedupeKey).slice(0, 300)))];
  const seen = new Set(
    keys.length
      ? rowsOf<{ dedupe_key: string }>(
          await db.execute(
            sql`select dedupe_key from chat_inbound_events where platform = 'whatsapp' and dedupe_key in (select jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))`,
          ),
        ).map((r) => r.dedupe_key)
      : [],
  );
  const rows: Row[] = [];
  for (const item of part) {
    const dedupeKey = String(item.dedupeKey).slice(0, 300);
    if (seen.has(dedupeKey)) continue;
    seen.add(dedupeKey);
    const other = item.type === 'other';
    rows.push({
      id: newId('che'),
      dedupe_key: dedupeKey,
      type: item.type,
      outcome: other ? 'ignored' : 'received',
      detail: other ? 'field not handled' : null,
      body: other ? null : item.body,
    });
  }
  await recordStatuses(
    db,
    event,
    rows.filter((row) => row.type === 'status'),
    now,
  );
  if (rows.length === 0) return 0;
  // Another process storing the same item meanwhile (PostgreSQL) wins; a status's effect is
  // idempotent, and a message is acted on by whoever stored it.
  const inserted = rowsOf<{ id: string }>(
    await db.execute(sql`
      insert into chat_inbound_events (id, platform, dedupe_key, installation_id, org_id, type, outcome, detail, body)
      select x.id, 'whatsapp', x.dedupe_key, ${event.installation_id}, ${event.org_id}, x.type, x.outcome, x.detail, x.body
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(id text, dedupe_key text, type text, outcome text, detail text, body jsonb)
      on conflict (platform, dedupe_key) do nothing returning id`),
  );
  const stored = new Set(inserted.map((r) => r.id));
  for (const row of rows)
    if (row.type === 'message' && stored.has(row.id)) await processInbound(db, { orgId: event.org_id, eventId: row.id, now }, settings);
  return rows.length;
}

const EVENT_COLUMNS = sql`id, org_id, installation_id, dedupe_key, type, body`;
const eventWhere = (orgId: string, eventId: string) =>
  sql`where org_id = ${orgId} and id = ${eventId} and platform = 'whatsapp' and type in ('delivery', 'batch') and outcome = 'received'`;

const units = {
  /** The event's item source — how many pieces of text (the caller parses them), or an older
   * release's chunk's items as stored — and how many items are done; null when it is settled. */
  load: async (db: Db, args: { orgId: string; eventId: string }) => {
    const [event] = rowsOf<Event>(
      await db.execute(sql`select ${EVENT_COLUMNS} from chat_inbound_events ${eventWhere(args.orgId, args.eventId)}`),
    );
    if (!event) return null;
    const items = Array.isArray(event.body?.items) ? event.body.items : null;
    return {
      key: event.dedupe_key,
      pieces: event.body?.pieces ?? 0,
      items,
      phoneNumberId: event.body?.phone_number_id ?? null,
      done: event.body?.done ?? 0,
    };
  },
  /** One piece of a delivery's text (a piece per unit: reading 4 MB at once is a long stretch). */
  piece: async (db: Db, args: { orgId: string; key: string; index: number }) => {
    const [row] = rowsOf<{ raw: string | null }>(
      await db.execute(
        sql`select raw from chat_inbound_events where platform = 'whatsapp' and dedupe_key = ${pieceKey(args.key, args.index)} and org_id = ${args.orgId}`,
      ),
    );
    if (row?.raw == null) throw new PermanentJobError(`piece ${args.index} of the delivery ${args.key} is missing`);
    return { text: row.raw };
  },
  /** Items `from`…`from + items.length` of the event: stored, acted on, and counted done. Answers how
   * many are done now (another run's progress when it got there first), or null when the event is
   * settled. The last part settles it. */
  part: timed(
    async (
      db: Db,
      args: { orgId: string; eventId: string; from: number; items: Item[]; total: number },
      settings: Settings,
    ): Promise<{ done: number | null; new: number }> => {
      const [event] = rowsOf<Event>(
        await db.execute(sql`select ${EVENT_COLUMNS} from chat_inbound_events ${eventWhere(args.orgId, args.eventId)} for update`),
      );
      if (!event) return { done: null, new: 0 };
      const done = event.body?.done ?? 0;
      if (done !== args.from) return { done, new: 0 };
      const fresh = await storeItems(db, event, args.items, new Date(), settings.actions);
      const now = args.from + args.items.length;
      if (now < args.total) {
        await db.execute(
          sql`update chat_inbound_events set body = jsonb_set(body, '{done}', ${String(now)}::jsonb) where org_id = ${event.org_id} and id = ${event.id}`,
        );
        return { done: now, new: fresh };
      }
      await db.execute(
        sql`update chat_inbound_events set outcome = 'processed', detail = ${`${args.total} items`}, body = jsonb_set(body, '{done}', ${String(now)}::jsonb) where org_id = ${event.org_id} and id = ${event.id}`,
      );
      // Every item is a row of its own now: the text is not kept (its pieces stay, empty, as keys).
      const pieces = Array.from({ length: event.body?.pieces ?? 0 }, (_, index) => pieceKey(event.dedupe_key, index));
      if (pieces.length > 0)
        await db.execute(
          sql`update chat_inbound_events set raw = null where platform = 'whatsapp' and dedupe_key in (select jsonb_array_elements_text(${JSON.stringify(pieces)}::jsonb)) and org_id = ${event.org_id}`,
        );
      // An older release's chunk names the next one, whose job is queued as this one ends.
      const [following] = event.body?.next
        ? rowsOf<{ id: string }>(
            await db.execute(
              sql`select id from chat_inbound_events where platform = 'whatsapp' and dedupe_key = ${event.body.next} and org_id = ${event.org_id}`,
            ),
          )
        : [];
      if (following) await enqueueJob(db, whatsappBatchJob, { eventId: following.id }, { orgId: event.org_id, dedupeKey: following.id });
      return { done: null, new: fresh };
    },
  ),
};

/** `whatsapp.batch`: works through one stored delivery, a part per unit. `partWeight` fixes the
 * parts' size (tests; default: sized by time). */
export const whatsappBatchJob = defineJobKind({
  kind: 'whatsapp.batch',
  // `from`: jobs an older release queued (progress is now kept on the event).
  payload: t.Object({
    eventId: t.String({ minLength: 1, maxLength: 100 }),
    from: t.Optional(t.Integer({ minimum: 0 })),
    partWeight: t.Optional(t.Integer({ minimum: 1, maximum: 100_000 })),
  }),
  retry: { maxAttempts: 8, baseSeconds: 2, maxSeconds: 300 },
  units,
  handle: async (payload, ctx) => {
    const orgId = ctx.job.orgId;
    if (!orgId) throw new PermanentJobError('whatsapp.batch needs an organisation');
    const event = await ctx.run('load', { orgId, eventId: payload.eventId });
    if (!event) return { items: 0, parts: 0, new: 0 };
    let items = event.items;
    if (!items) {
      let text = '';
      for (let index = 0; index < event.pieces; index++) text += (await ctx.run('piece', { orgId, key: event.key, index })).text;
      // Parsed here, off the thread that owns the embedded database.
      items = text ? itemsOf(parseBody(text)).filter((item) => item.phoneNumberId === event.phoneNumberId) : [];
    }
    let done: number | null = event.done;
    let weight = payload.partWeight ?? PART_FIRST;
    let parts = 0;
    let fresh = 0;
    while (done !== null && (done < items.length || parts === 0)) {
      const end = partEnd(items, done, weight);
      const part: { done: number | null; new: number; ms: number } = await ctx.run('part', {
        orgId,
        eventId: payload.eventId,
        from: done,
        items: items.slice(done, end),
        total: items.length,
      });
      parts++;
      fresh += part.new;
      done = part.done;
      if (payload.partWeight === undefined) weight = nextSizeByTime(weight, part.ms, PART_SIZING);
    }
    return { items: items.length, parts, new: fresh };
  },
});
