// WhatsApp, outbound (docs/chat-platforms.md "WhatsApp"): every call to Meta's Cloud API — an approval request, the
// follow-up of a decided copy, a confirmation, a private notice — is a row of the chat outbox
// (`chat_sends`, platform `whatsapp`), queued in the transaction that decided it and sent by the
// `chat.send` job with the outbox's back-off (429, 5xx, timeouts and Meta's throughput errors tried
// again, never sooner than Retry-After; dead after 8; any other error stops at once).
// Meta has no idempotency key: a send that timed out may have arrived and is sent again, so the CSM
// may see it twice; each claim sends once.
// The 24-hour window: free messages (buttons, texts) only within 24 hours of the CSM's last
// message to us; outside it, or when Meta answers 131047 (window closed), an approval goes as the
// template — once — and a follow-up is not sent: its copy records `window_closed`.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { OPEN_ACTION_STATUSES, type ChatSendKind } from '../../db/schema/index.ts';
import { messageOf } from '../../lib/errors.ts';
import { openSecret } from '../../lib/secret-box.ts';
import { OUTBOX_TIMEOUT_MS, retryAfterOf, settleAttempt, unanswered, type AttemptResult } from '../../queue/outbox-attempts.ts';
import type { ActionSettings } from '../agent-actions/settings.ts';
import type { ActionFacts } from '../chat/facts.ts';
import { actionFacts } from '../chat/facts.ts';
import { CHAT_SEND, installedPlatformSender, queueChatSend, settlePost } from '../chat/outbox.ts';
import type { ChatPlatform, OwnOutboxRows, RecordedSend } from '../chat/port.ts';
import { isJsonObject } from '../signed-webhooks/payload.ts';
import { whatsappInstallationOfOrg } from './installations.ts';
import { followUpText, interactiveApproval, templateApproval, textMessage } from './messages.ts';

/** Meta's error code for a free message outside the 24-hour window. */
export const WINDOW_CLOSED = 131047;
/** Meta's throttling and transient codes (tried again): app and phone-number throughput, pair rate
 * limit, "something went wrong", service unavailable. */
const RETRYABLE_CODES = new Set([1, 2, 4, 80007, 130429, 131000, 131056]);

/** Inside Meta's 24-hour window of the CSM's last inbound message (SQL, on `m`, the csms row). */
export const WINDOW_OPEN = sql`(m.whatsapp_inbound_at is not null and m.whatsapp_inbound_at > now() - interval '24 hours')`;

const queue = (db: Db, row: Omit<Parameters<typeof queueChatSend>[1], 'platform'>) => queueChatSend(db, { ...row, platform: 'whatsapp' });

/** A text to a number that just wrote to us (a confirmation, a question, a private notice), as a
 * reply to its message. */
export const queueWhatsAppText = (
  db: Db,
  input: { orgId: string; installationId: string; to: string; text: string; replyTo?: string | null },
) =>
  queue(db, {
    orgId: input.orgId,
    installationId: input.installationId,
    kind: 'reply',
    request: { to: input.to, text: input.text, reply_to: input.replyTo ?? null },
  });

/** After a decision (API, any platform, expiry): each WhatsApp copy gets a follow-up text when its
 * CSM's window is open (the copy the decision came from included: that is its confirmation);
 * otherwise the copy records `window_closed`. */
export async function queueWhatsAppUpdates(
  db: Db,
  input: { orgId: string; actionId: string; via?: { notificationId: string } | null },
): Promise<number> {
  const copies = rowsOf<{ id: string; target: string | null; platform_message_id: string; open: boolean; installation_id: string | null }>(
    await db.execute(sql`
      select n.id, n.target, n.platform_message_id, ${WINDOW_OPEN} as open,
        (select s.installation_id from chat_sends s where s.notification_id = n.id and s.kind = 'post' and s.status = 'delivered' order by s.created_at desc limit 1) as installation_id
      from action_notifications n left join csms m on m.org_id = n.org_id and m.id = n.csm_id
      where n.org_id = ${input.orgId} and n.action_id = ${input.actionId} and n.platform = 'whatsapp'
        and n.status in ('sent', 'updated', 'window_closed') and n.platform_message_id is not null
      order by n.id`),
  );
  const fallback = copies.some((c) => !c.installation_id) ? await whatsappInstallationOfOrg(db, input.orgId) : null;
  for (const copy of copies) {
    const installationId = copy.installation_id ?? fallback?.id;
    if (!copy.open || !copy.target || !installationId) {
      await db.execute(
        sql`update action_notifications set status = 'window_closed', updated_at = now() where org_id = ${input.orgId} and id = ${copy.id}`,
      );
      continue;
    }
    await queue(db, {
      orgId: input.orgId,
      installationId,
      kind: 'update',
      notificationId: copy.id,
      actionId: input.actionId,
      request: { to: copy.target, reply_to: copy.platform_message_id },
    });
  }
  return copies.length;
}

/** The approval again as the template, when Meta reported the interactive one failed with 131047
 * after accepting it; once per copy (never when a template was already sent for it). */
export async function queueWhatsAppTemplate(
  db: Db,
  input: { orgId: string; installationId: string; notificationId: string; actionId: string },
): Promise<boolean> {
  const [sent] = rowsOf<{ id: string }>(
    await db.execute(
      sql`select id from chat_sends where org_id = ${input.orgId} and notification_id = ${input.notificationId} and kind = 'post' and request @> '{"template": true}'::jsonb limit 1`,
    ),
  );
  if (sent) return false;
  await db.execute(
    sql`update action_notifications set status = 'pending', updated_at = now() where org_id = ${input.orgId} and id = ${input.notificationId}`,
  );
  await queue(db, {
    orgId: input.orgId,
    installationId: input.installationId,
    kind: 'post',
    notificationId: input.notificationId,
    actionId: input.actionId,
    request: { template: true },
  });
  return true;
}

/** WhatsApp behind the chat core's port (chat/platforms.ts). Its rows need the CSM's 24-hour
 * window, so the chat.send job loads, sends and records them with whatsappOutboxRows. */
export const whatsappPlatform: ChatPlatform = {
  ...installedPlatformSender('whatsapp', queueWhatsAppUpdates),
  callOf: () => 'messages',
  attempt: null,
  // A WhatsApp copy is a message, not edited: a decision taken before it was posted is a follow-up.
  decidedBeforePosted: async (db, copy) => void (await queueWhatsAppUpdates(db, { orgId: copy.orgId, actionId: copy.actionId })),
};

// --- one attempt --------------------------------------------------------------------------------

export interface WhatsAppPending {
  id: string;
  org_id: string;
  installation_id: string;
  phone_number_id: string;
  credentials_sealed: string | null;
  kind: ChatSendKind;
  request: Record<string, unknown>;
  notification_id: string | null;
  action_id: string | null;
  target: string | null;
  nonce: string | null;
  window_open: boolean;
  facts: ActionFacts | null;
}

async function loadWhatsApp(db: Db, args: { orgId: string; sendId: string }): Promise<WhatsAppPending | null> {
  const [row] = rowsOf<Omit<WhatsAppPending, 'facts'>>(
    await db.execute(sql`
      select s.id, s.org_id, s.installation_id, i.external_id as phone_number_id, i.credentials_sealed, s.kind, s.request, s.notification_id, s.action_id,
        n.target, n.nonce, coalesce(${WINDOW_OPEN}, false) as window_open
      from chat_sends s join chat_installations i on i.id = s.installation_id
      left join action_notifications n on n.org_id = s.org_id and n.id = s.notification_id
      left join csms m on m.org_id = n.org_id and m.id = n.csm_id
      where s.org_id = ${args.orgId} and s.id = ${args.sendId} and s.status = 'pending' and s.platform = 'whatsapp'`),
  );
  if (!row) return null;
  const facts = row.action_id && (row.kind === 'post' || row.kind === 'update') ? await actionFacts(db, row.org_id, row.action_id) : null;
  return { ...row, facts };
}

/** What the Graph API answers, as far as we read it (each field checked before use). */
interface GraphAnswer {
  messages?: { id?: unknown }[];
  error?: { code?: unknown; message?: unknown };
}

export type WhatsAppAnswer = AttemptResult & { wamid: string | null; code: number | null };

/** One `POST {base}/{phone_number_id}/messages` with the access token. Never throws. */
export async function callGraph(
  apiBase: string,
  phoneNumberId: string,
  token: string,
  body: Record<string, unknown>,
): Promise<WhatsAppAnswer> {
  const started = performance.now();
  const done = (partial: Omit<WhatsAppAnswer, 'ms'>): WhatsAppAnswer => ({ ...partial, ms: Math.round(performance.now() - started) });
  const url = `${apiBase}/${encodeURIComponent(phoneNumberId)}/messages`;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'user-agent': 'revintel-whatsapp/1' },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(OUTBOX_TIMEOUT_MS),
    });
    const status = response.status;
    let data: GraphAnswer | null = null;
    try {
      const parsed: unknown = JSON.parse(await response.text());
      data = isJsonObject(parsed) ? parsed : null;
    } catch {
      data = null;
    }
    const retryAfter = retryAfterOf(response.headers.get('retry-after'));
    if (status >= 200 && status < 300) {
      const first = Array.isArray(data?.messages) ? data.messages[0]?.id : undefined;
      const wamid = typeof first === 'string' ? first : null;
      if (!wamid)
        return done({
          status: null,
          error: 'the answer has no messages[0].id',
          retryAfterSeconds: null,
          final: false,
          wamid: null,
          code: null,
        });
      return done({ status, error: null, retryAfterSeconds: null, final: false, wamid, code: null });
    }
    // Meta's errors: `{error: {code, message, error_data: {details}}}`; the message never holds the token.
    const code = typeof data?.error?.code === 'number' ? data.error.code : null;
    const what = `answered ${status}${code !== null ? ` (error ${code}${data?.error?.message ? `: ${String(data.error.message).slice(0, 200)}` : ''})` : ''}`;
    const retryable = status === 429 || status === 408 || status >= 500 || (code !== null && RETRYABLE_CODES.has(code));
    return done({
      status,
      error: retryable ? what : `${what}: not retried`,
      retryAfterSeconds: retryAfter,
      final: !retryable,
      wamid: null,
      code,
    });
  } catch (error) {
    return done({ status: null, error: unanswered(error), retryAfterSeconds: null, final: false, wamid: null, code: null });
  }
}

const permanent = (error: string): WhatsAppAnswer => ({
  status: null,
  error,
  ms: 0,
  retryAfterSeconds: null,
  final: true,
  wamid: null,
  code: null,
});

export type WhatsAppAttempt = WhatsAppAnswer & { template: boolean };

/** Sends one row of the outbox: what came of it (for a post, whether it went as the template). */
export async function attemptWhatsApp(pending: WhatsAppPending, settings: ActionSettings): Promise<WhatsAppAttempt> {
  if (!settings.secretKey)
    return { ...permanent('SECRET_KEY is not available: the access token cannot be opened'), final: false, template: false };
  if (!pending.credentials_sealed) return { ...permanent('the WhatsApp installation was removed'), template: false };
  let token: string;
  try {
    token = openSecret(pending.credentials_sealed, settings.secretKey, pending.installation_id);
  } catch (error) {
    return { ...permanent(`the access token does not open: ${messageOf(error)}`), template: false };
  }
  const send = (body: Record<string, unknown>) => callGraph(settings.whatsappApiBase, pending.phone_number_id, token, body);
  const request = pending.request;
  switch (pending.kind) {
    case 'post': {
      if (!pending.facts || !pending.nonce || !pending.target)
        return { ...permanent('the action or its copy is gone, or the CSM has no phone number'), template: false };
      if (!(OPEN_ACTION_STATUSES as readonly string[]).includes(pending.facts.status) || pending.facts.status === 'approved') {
        return { ...permanent(`the action was ${pending.facts.status} before its copy was sent`), template: false };
      }
      const to = pending.target.replace(/^\+/, '');
      const template = { name: settings.whatsappApprovalTemplate, language: settings.whatsappTemplateLanguage };
      if (request.template === true || !pending.window_open)
        return { ...(await send(templateApproval(to, pending.facts, pending.nonce, template))), template: true };
      const sent = await send(interactiveApproval(to, pending.facts, pending.nonce));
      // Our record of the window may be older than Meta's: the template goes instead, once.
      if (sent.code === WINDOW_CLOSED)
        return { ...(await send(templateApproval(to, pending.facts, pending.nonce, template))), template: true };
      return { ...sent, template: false };
    }
    case 'update': {
      if (!pending.facts) return { ...permanent('the action is gone'), template: false };
      return {
        ...(await send(
          textMessage(
            String(request.to).replace(/^\+/, ''),
            followUpText(pending.facts),
            typeof request.reply_to === 'string' ? request.reply_to : null,
          ),
        )),
        template: false,
      };
    }
    case 'reply':
    case 'ephemeral':
      return {
        ...(await send(
          textMessage(String(request.to), String(request.text ?? ''), typeof request.reply_to === 'string' ? request.reply_to : null),
        )),
        template: false,
      };
  }
}

async function recordWhatsApp(
  db: Db,
  args: { orgId: string; sendId: string; answer: WhatsAppAttempt; now: string },
): Promise<RecordedSend> {
  const { answer } = args;
  const row = await settleAttempt<
    typeof CHAT_SEND.payload,
    { kind: ChatSendKind; installation_id: string; notification_id: string | null; action_id: string | null }
  >(db, {
    table: 'chat_sends',
    id: args.sendId,
    orgId: args.orgId,
    job: CHAT_SEND,
    payload: { sendId: args.sendId },
    result: answer,
    now: args.now,
    columns: sql`, kind, installation_id, notification_id, action_id`,
    extra: sql`, request = case when ${answer.template} then request || '{"template": true}'::jsonb else request end`,
  });
  if (!row) return { status: 'delivered', attempts: 0 };
  const copy = row.notification_id;
  if (copy && row.kind === 'post')
    await settlePost(db, whatsappPlatform, { ...row, notificationId: copy, error: answer.error }, { messageId: answer.wamid });
  if (copy && row.kind === 'update') {
    const status = row.status === 'delivered' ? 'updated' : answer.code === WINDOW_CLOSED ? 'window_closed' : null;
    if (status)
      await db.execute(
        sql`update action_notifications set status = ${status}, updated_at = now() where org_id = ${row.org_id} and id = ${copy}`,
      );
  }
  return { status: row.status, attempts: row.attempts };
}

/** WhatsApp's rows of the chat outbox, loaded, sent and recorded here (given to the `chat.send` job
 * in chat/platforms.ts). */
export const whatsappOutboxRows: OwnOutboxRows<WhatsAppPending, WhatsAppAttempt> = {
  load: loadWhatsApp,
  attempt: attemptWhatsApp,
  record: recordWhatsApp,
};
