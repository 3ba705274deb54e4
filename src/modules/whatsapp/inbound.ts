// What an inbound WhatsApp event does (docs/chat-platforms.md "WhatsApp"), as a `whatsapp.inbound` job queued
// in the transaction that stored the event: the webhook answers Meta at once, and an acknowledged
// event is processed even if the process dies right after (the job is durable). The job's effects
// and its completion commit together, and the event leaves `received` in the same transaction, so
// it acts once however often the job or Meta's delivery is repeated.
// - a status (sent, delivered, read, failed) is recorded on the copy it names, never going back; a
//   failure with 131047 (window closed) sends a waiting approval again as the template, once;
// - a message from a number no active CSM of the organisation has changes nothing: told so;
// - a message opens the CSM's 24-hour window;
// - a button (interactive reply or template quick reply) decides, when its nonce is the copy's;
// - a text replying to an approval message: approve / reject / "snooze 3d", else a note on it;
// - any other text: a note on the one customer of the CSM it names, else a question back.
import { timingSafeEqual } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Type as t } from '@sinclair/typebox';
import { rowsOf, type Db } from '../../db/client.ts';
import { newId } from '../../lib/ids.ts';
import { defineJobKind, PermanentJobError } from '../../queue/job-kind.ts';
import { decideAsCsm, type ChatDecider as Decider } from '../chat/decisions.ts';
import type { Decision } from '../chat/port.ts';
import type { MessageBody, StatusBody } from './items.ts';
import { decisionWords, HELP_TEXT, parsePayload } from './messages.ts';
import { queueWhatsAppTemplate, queueWhatsAppText, WINDOW_CLOSED } from './sender.ts';
import type { DecisionSettings } from '../agent-actions/who-decides.ts';

/** A status only moves forward: Meta does not promise order. */
export const STATUS_ORDER = ['sent', 'delivered', 'read', 'failed'] as const;

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

interface StoredEvent {
  id: string;
  org_id: string;
  installation_id: string;
  type: string;
  /** A status's or a message's body, as stored from the delivery. */
  body: StatusBody & MessageBody;
}

type Outcome = 'processed' | 'denied' | 'ignored';

const settle = (db: Db, event: StoredEvent, outcome: Outcome, detail: string | null) =>
  db.execute(
    sql`update chat_inbound_events set outcome = ${outcome}, detail = ${detail} where org_id = ${event.org_id} and id = ${event.id}`,
  );

/** The time a message or status names (Unix seconds as a string), never later than now. */
function timeOf(raw: unknown, now: Date): Date {
  const seconds = typeof raw === 'string' && /^\d{1,12}$/.test(raw) ? Number(raw) : NaN;
  return Number.isFinite(seconds) && seconds * 1000 <= now.getTime() ? new Date(seconds * 1000) : now;
}

async function recordStatus(db: Db, event: StoredEvent, now: Date): Promise<void> {
  const status = String(event.body.status ?? '');
  const wamid = String(event.body.id ?? '');
  if (!(STATUS_ORDER as readonly string[]).includes(status))
    return void (await settle(db, event, 'ignored', `status "${status.slice(0, 40)}" is not one we record`));
  const order = sql`array['sent', 'delivered', 'read', 'failed']::text[]`;
  const errors: { code?: unknown; title?: unknown; message?: unknown }[] = Array.isArray(event.body.errors) ? event.body.errors : [];
  const why =
    errors
      .map((e) => `${String(e?.code ?? '')} ${String(e?.title ?? e?.message ?? '')}`.trim())
      .join('; ')
      .slice(0, 500) || null;
  const updated = rowsOf<{ id: string; action_id: string; action_status: string }>(
    await db.execute(sql`
      update action_notifications n set platform_status = ${status}, platform_status_at = ${timeOf(event.body.timestamp, now).toISOString()}::timestamptz,
        last_error = case when ${status} = 'failed' then ${why} else n.last_error end, updated_at = now()
      from agent_actions a
      where n.org_id = ${event.org_id} and n.platform = 'whatsapp' and n.platform_message_id = ${wamid} and a.org_id = n.org_id and a.id = n.action_id
        and (n.platform_status is null or array_position(${order}, n.platform_status) < array_position(${order}, ${status}::text))
      returning n.id, n.action_id, a.status as action_status`),
  );
  const copy = updated[0];
  if (!copy) return void (await settle(db, event, 'ignored', 'not a current approval message, or an older status'));
  // Meta often accepts a free message outside the window and reports 131047 afterwards: the
  // approval still waiting for a decision goes again as the template, once.
  const windowClosed = status === 'failed' && errors.some((e) => Number(e?.code) === WINDOW_CLOSED);
  if (windowClosed && (copy.action_status === 'proposed' || copy.action_status === 'pending_approval')) {
    const queued = await queueWhatsAppTemplate(db, {
      orgId: event.org_id,
      installationId: event.installation_id,
      notificationId: copy.id,
      actionId: copy.action_id,
    });
    return void (await settle(
      db,
      event,
      'processed',
      `failed (131047) on ${copy.id}${queued ? ': the template is queued' : ': the template was sent already'}`,
    ));
  }
  await settle(db, event, 'processed', `${status} on ${copy.id}`);
}

/** The active CSM of the organisation with this WhatsApp number (wa_id: E.164 without the +). */
async function csmByNumber(db: Db, orgId: string, waId: string): Promise<Decider | null> {
  if (!/^[1-9][0-9]{6,14}$/.test(waId)) return null;
  const [row] = rowsOf<Decider>(
    await db.execute(
      sql`select id, name, email, role from csms where org_id = ${orgId} and phone = ${`+${waId}`} and active order by id limit 1`,
    ),
  );
  return row ?? null;
}

interface Copy {
  id: string;
  action_id: string;
  nonce: string;
  customer_id: string;
  customer_name: string;
}

const COPY = sql`select n.id, n.action_id, n.nonce, a.customer_id, c.name as customer_name
  from action_notifications n join agent_actions a on a.org_id = n.org_id and a.id = n.action_id join customers c on c.org_id = a.org_id and c.id = a.customer_id`;

/** The customers of `csm` whose name the text contains as words (case-blind). */
async function customersNamed(db: Db, orgId: string, csm: Decider, text: string): Promise<{ id: string; name: string }[]> {
  const candidates = rowsOf<{ id: string; name: string }>(
    await db.execute(sql`
      select id, name from customers
      where org_id = ${orgId} and deleted_at is null and lower(csm->>'email') = ${csm.email} and length(name) >= 2 and strpos(lower(${text}), lower(name)) > 0
      order by name, id limit 20`),
  );
  const lower = text.toLowerCase();
  const boundary = (ch: string | undefined) => ch === undefined || !/[\p{L}\p{N}]/u.test(ch);
  return candidates.filter((c) => {
    const name = c.name.toLowerCase();
    for (let at = lower.indexOf(name); at >= 0; at = lower.indexOf(name, at + 1)) {
      if (boundary(lower[at - 1]) && boundary(lower[at + name.length])) return true;
    }
    return false;
  });
}

async function addNote(db: Db, orgId: string, customerId: string, csm: Decider, text: string): Promise<void> {
  await db.execute(
    sql`insert into customer_notes (id, org_id, customer_id, author, body) values (${newId('note')}, ${orgId}, ${customerId}, ${`csm:${csm.email}`}, ${text.slice(0, 4000)})`,
  );
}

async function handleMessage(db: Db, event: StoredEvent, now: Date, settings: DecisionSettings): Promise<void> {
  const message = event.body.message ?? {};
  const from = String(message.from ?? '');
  const orgId = event.org_id;
  const tell = (text: string) =>
    queueWhatsAppText(db, {
      orgId,
      installationId: event.installation_id,
      to: from,
      text,
      replyTo: typeof message.id === 'string' ? message.id : null,
    });
  const csm = await csmByNumber(db, orgId, from);
  if (!csm) {
    await settle(db, event, 'denied', 'not the number of an active CSM of this organisation');
    if (/^[1-9][0-9]{6,14}$/.test(from)) await tell('Sorry, only CSMs of this organisation may use this number: nothing was changed.');
    return;
  }
  // Meta's window opens with the CSM's message: free messages may be sent for 24 hours.
  const at = timeOf(message.timestamp, now).toISOString();
  await db.execute(
    sql`update csms set whatsapp_inbound_at = greatest(whatsapp_inbound_at, ${at}::timestamptz), updated_at = now() where org_id = ${orgId} and id = ${csm.id}`,
  );

  const decide = async (copy: Copy, decision: Decision, snoozeDays?: number) => {
    const decided = await decideAsCsm(
      db,
      {
        orgId,
        actionId: copy.action_id,
        decision,
        csm,
        platform: 'whatsapp',
        actor: `whatsapp:${from}`,
        now,
        snoozeDays,
        via: { notificationId: copy.id, responseUrl: null },
      },
      settings,
    );
    if (!decided.ok) {
      await settle(db, event, 'denied', decided.why);
      return void (await tell(decided.why));
    }
    // The confirmation is the follow-up of the copy decided on (queued by the decision).
    await settle(db, event, 'processed', `${decision} ${copy.action_id} by ${csm.id}`);
  };

  const button =
    message.type === 'interactive' && message.interactive?.type === 'button_reply'
      ? message.interactive.button_reply?.id
      : message.type === 'button'
        ? message.button?.payload
        : undefined;
  if (button !== undefined) {
    const parsed = parsePayload(String(button));
    if (!parsed) return void (await settle(db, event, 'ignored', `not one of our buttons (${String(button).slice(0, 60)})`));
    const copies = rowsOf<Copy>(
      await db.execute(
        sql`${COPY} where n.org_id = ${orgId} and n.action_id = ${parsed.actionId} and n.platform = 'whatsapp' order by n.id`,
      ),
    );
    const copy = copies.find((c) => sameText(c.nonce, parsed.nonce));
    if (!copy) {
      const why = 'This button does not belong to a current approval request: nothing was changed.';
      await settle(db, event, 'denied', why);
      return void (await tell(why));
    }
    return decide(copy, parsed.decision);
  }

  if (message.type !== 'text')
    return void (await settle(db, event, 'ignored', `message type ${String(message.type).slice(0, 40)} is not handled`));
  const text = String(message.text?.body ?? '').trim();
  const replyTo = typeof message.context?.id === 'string' ? message.context.id : null;
  const [copy] = replyTo
    ? rowsOf<Copy>(
        await db.execute(
          sql`${COPY} where n.org_id = ${orgId} and n.platform = 'whatsapp' and n.platform_message_id = ${replyTo} order by n.id limit 1`,
        ),
      )
    : [];
  if (copy) {
    const words = decisionWords(text);
    if (words) return decide(copy, words.decision, words.days);
    if (!text) return void (await settle(db, event, 'ignored', 'an empty reply'));
    await addNote(db, orgId, copy.customer_id, csm, text);
    await settle(db, event, 'processed', `note on ${copy.customer_id}`);
    return void (await tell(`Noted on ${copy.customer_name}.`));
  }
  if (/^(help|\?)$/i.test(text)) {
    await settle(db, event, 'processed', 'help');
    return void (await tell(HELP_TEXT));
  }
  const named = text ? await customersNamed(db, orgId, csm, text) : [];
  if (named.length === 1) {
    await addNote(db, orgId, named[0]!.id, csm, text);
    await settle(db, event, 'processed', `note on ${named[0]!.id}`);
    return void (await tell(`Noted on ${named[0]!.name}.`));
  }
  await settle(db, event, 'ignored', named.length === 0 ? "names none of the CSM's customers" : `names ${named.length} customers`);
  await tell(
    named.length === 0
      ? 'Which customer is this about? Name one of your customers in the message (nothing was saved).'
      : `Which customer is this about: ${named
          .slice(0, 5)
          .map((c) => c.name)
          .join(', ')}? Name only one (nothing was saved).`,
  );
}

/** Processes one stored event, in `db`'s transaction (the job's). */
export async function processInbound(
  db: Db,
  input: { orgId: string; eventId: string; now?: Date },
  settings: DecisionSettings,
): Promise<{ outcome: string }> {
  const [event] = rowsOf<StoredEvent>(
    await db.execute(sql`
      select id, org_id, installation_id, type, body from chat_inbound_events
      where org_id = ${input.orgId} and id = ${input.eventId} and platform = 'whatsapp' and outcome = 'received' for update`),
  );
  if (!event) return { outcome: 'already processed' };
  const now = input.now ?? new Date();
  if (event.type === 'status') await recordStatus(db, event, now);
  else await handleMessage(db, event, now, settings);
  const [row] = rowsOf<{ outcome: string }>(
    await db.execute(sql`select outcome from chat_inbound_events where org_id = ${event.org_id} and id = ${event.id}`),
  );
  return { outcome: row!.outcome };
}

/** `whatsapp.inbound`: one stored event processed; its effects and the job's completion commit
 * together. */
export const whatsappInboundJob = defineJobKind({
  kind: 'whatsapp.inbound',
  payload: t.Object({ eventId: t.String({ minLength: 1, maxLength: 100 }) }),
  retry: { maxAttempts: 8, baseSeconds: 2, maxSeconds: 300 },
  perform: async (db, payload, job, settings) => {
    if (!job.orgId) throw new PermanentJobError('whatsapp.inbound needs an organisation');
    return processInbound(db, { orgId: job.orgId, eventId: payload.eventId }, settings.actions);
  },
});
