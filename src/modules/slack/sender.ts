// Slack, outbound (docs/chat-platforms.md "Slack"): every call to Slack — an approval request posted to the CSM's DM, a
// copy updated after a decision, an answer in a thread, a private notice — is a row of the chat
// outbox (`chat_sends`), queued in the transaction that decided it and sent by a `chat.send` job
// with the outbox's back-off: 429 (never sooner than Retry-After), 5xx, timeouts and Slack's
// `ratelimited` are tried again, dead after 8 attempts; any other `ok: false` stops at once. Slack
// has no idempotency key: a send that timed out may arrive twice; each claim sends once. The same
// outbox and job carry Google Chat's calls (rows with platform `google_chat`, sent by
// google-chat/transport.ts).
import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../db/client.ts';
import { OPEN_ACTION_STATUSES } from '../../db/schema/index.ts';
import { messageOf } from '../../lib/errors.ts';
import { openSecret } from '../../lib/secret-box.ts';
import { type AttemptResult, OUTBOX_TIMEOUT_MS, retryAfterOf, unanswered } from '../../queue/outbox-attempts.ts';
import type { ActionSettings } from '../agent-actions/settings.ts';
import { slackInstallationOfOrg } from '../chat/installations.ts';
import { installedPlatformSender, queueChatSend } from '../chat/outbox.ts';
import type { ChatPlatform, CopyUpdate, Pending, SendAnswer } from '../chat/port.ts';
import { approvalBlocks, decidedBlocks } from './messages.ts';

const queue = queueChatSend;

/** `response_url` is used only on Slack's host (or the configured API's, for local fakes): the
 * webhook keeps a click's only when this allows it, so what reaches the outbox below is allowed. */
export function responseUrlAllowed(raw: string | null | undefined, apiBase: string): raw is string {
  if (!raw) return false;
  try {
    const url = new URL(raw);
    return url.protocol === 'https:'
      ? url.host === 'hooks.slack.com' || url.host === new URL(apiBase).host
      : url.host === new URL(apiBase).host && new URL(apiBase).protocol === 'http:';
  } catch {
    return false;
  }
}

/** An answer in a thread (app mentions), from the outbox. */
export const queueSlackReply = (
  db: Db,
  input: { orgId: string; installationId: string; channel: string; threadTs: string; text: string },
) =>
  queue(db, {
    orgId: input.orgId,
    installationId: input.installationId,
    kind: 'reply',
    request: { channel: input.channel, thread_ts: input.threadTs, text: input.text },
  });

/** A notice only `user` sees: through the click's response_url (an allowed one) when given, else chat.postEphemeral. */
export const queueSlackEphemeral = (
  db: Db,
  input: { orgId: string; installationId: string; channel: string | null; user: string; text: string; responseUrl?: string | null },
) =>
  queue(db, {
    orgId: input.orgId,
    installationId: input.installationId,
    kind: 'ephemeral',
    request: input.responseUrl
      ? { response_url: input.responseUrl, text: input.text }
      : { channel: input.channel, user: input.user, text: input.text },
  });

/** After a decision (API, Slack, expiry) or a snooze's end: every Slack copy already posted is
 * updated to show it; after a snooze, a reply in the copy's thread reminds the CSM. */
export async function queueSlackUpdates(db: Db, input: CopyUpdate): Promise<number> {
  // Each copy is updated through the installation that posted it (its token can edit it).
  const copies = rowsOf<{
    id: string;
    platform_channel: string | null;
    platform_message_id: string | null;
    installation_id: string | null;
  }>(
    await db.execute(sql`
      select n.id, n.platform_channel, n.platform_message_id,
        (select s.installation_id from chat_sends s where s.notification_id = n.id and s.kind = 'post' and s.status = 'delivered' order by s.created_at desc limit 1) as installation_id
      from action_notifications n
      where n.org_id = ${input.orgId} and n.action_id = ${input.actionId} and n.platform = 'slack' and n.status in ('sent', 'updated') and n.platform_message_id is not null
      order by n.id`),
  );
  if (copies.length === 0) return 0;
  const fallback = copies.some((c) => !c.installation_id) ? await slackInstallationOfOrg(db, input.orgId) : null;
  for (const copy of copies) {
    const installationId = copy.installation_id ?? fallback?.id;
    if (!installationId) continue;
    const viaClick = input.via?.notificationId === copy.id && Boolean(input.via.responseUrl);
    await queue(db, {
      orgId: input.orgId,
      installationId,
      kind: 'update',
      notificationId: copy.id,
      actionId: input.actionId,
      request: viaClick ? { response_url: input.via!.responseUrl } : { channel: copy.platform_channel, ts: copy.platform_message_id },
    });
    if (input.reminder && copy.platform_channel && copy.platform_message_id) {
      await queue(db, {
        orgId: input.orgId,
        installationId,
        kind: 'reply',
        actionId: input.actionId,
        request: {
          channel: copy.platform_channel,
          thread_ts: copy.platform_message_id,
          text: 'The snooze is over: this action waits for your decision again.',
        },
      });
    }
  }
  return copies.length;
}

/** Slack behind the chat core's port (chat/platforms.ts). */
export const slackPlatform: ChatPlatform = {
  ...installedPlatformSender('slack', queueSlackUpdates),
  callOf: (kind, request) => {
    const responseUrl = typeof request.response_url === 'string' ? request.response_url : null;
    if (kind === 'post' || kind === 'reply') return 'chat.postMessage';
    return responseUrl ?? (kind === 'update' ? 'chat.update' : 'chat.postEphemeral');
  },
  attempt: (pending, settings) => attemptSend(pending, settings),
  // A CSM found by e-mail is known by the Slack user id from now on (their clicks are matched by it).
  postedTo: async (db, copy) =>
    void (await db.execute(
      sql`update csms set slack_user_id = ${copy.target}, updated_at = now() where org_id = ${copy.orgId} and id = (select csm_id from action_notifications where org_id = ${copy.orgId} and id = ${copy.notificationId}) and slack_user_id is null`,
    )),
  // Every Slack copy of the action shows the decision (this one included, now that it has a ts).
  decidedBeforePosted: async (db, copy) => void (await queueSlackUpdates(db, { orgId: copy.orgId, actionId: copy.actionId })),
};

// --- one attempt --------------------------------------------------------------------------------

export type SlackAnswer = AttemptResult & { data: SlackData | null };

/** What Slack's Web API answers, as far as we read it. */
export interface SlackData {
  ok?: boolean;
  error?: string;
  channel?: string;
  ts?: string;
  user?: { id?: string };
}

/** One call: Slack's Web API method (`chat.postMessage`…) with the bot token, or a response_url.
 * Never throws. */
export async function callSlack(
  target: { method: string; token: string } | { responseUrl: string },
  body: Record<string, unknown>,
  apiBase: string,
): Promise<SlackAnswer> {
  const started = performance.now();
  const done = (partial: Omit<SlackAnswer, 'ms'>): SlackAnswer => ({ ...partial, ms: Math.round(performance.now() - started) });
  const url = 'responseUrl' in target ? target.responseUrl : `${apiBase}/${target.method}`;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'revintel-slack/1' };
  if ('token' in target) headers.authorization = `Bearer ${target.token}`;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(OUTBOX_TIMEOUT_MS),
    });
    const text = await response.text().catch(() => '');
    const status = response.status;
    if (status === 429 || status === 408 || status >= 500) {
      return done({
        status,
        error: `answered ${status}`,
        retryAfterSeconds: retryAfterOf(response.headers.get('retry-after')),
        final: false,
        data: null,
      });
    }
    if (status < 200 || status >= 300)
      return done({ status, error: `answered ${status}: not retried`, retryAfterSeconds: null, final: true, data: null });
    let data: SlackData | null = null;
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
    // A response_url answers "ok" (or JSON); the Web API answers JSON with `ok`.
    if (data && data.ok === false) {
      const code = String(data.error ?? 'unknown_error');
      if (code === 'ratelimited')
        return done({
          status: 429,
          error: 'ok:false ratelimited',
          retryAfterSeconds: retryAfterOf(response.headers.get('retry-after')),
          final: false,
          data,
        });
      return done({ status, error: `ok:false ${code}: not retried`, retryAfterSeconds: null, final: true, data });
    }
    if (!data && !('responseUrl' in target))
      return done({ status, error: 'the answer is not JSON', retryAfterSeconds: null, final: false, data: null });
    return done({ status, error: null, retryAfterSeconds: null, final: false, data: data ?? { ok: true } });
  } catch (error) {
    return done({ status: null, error: unanswered(error), retryAfterSeconds: null, final: false, data: null });
  }
}

const permanent = (error: string): SlackAnswer => ({ status: null, error, ms: 0, retryAfterSeconds: null, final: true, data: null });

/** Sends one row of the chat outbox; what came of it, and for a post the message's place. */
export async function attemptSend(pending: Pending, settings: ActionSettings): Promise<SendAnswer> {
  const key = settings.secretKey;
  const call = (target: Parameters<typeof callSlack>[0], body: Record<string, unknown>) => callSlack(target, body, settings.slackApiBase);
  if (!key) return { ...permanent('SECRET_KEY is not available: the bot token cannot be opened'), final: false };
  if (!pending.credentials_sealed) return permanent('the Slack installation was removed');
  let token: string;
  try {
    token = openSecret(pending.credentials_sealed, key, pending.installation_id);
  } catch (error) {
    return permanent(`the bot token does not open: ${messageOf(error)}`);
  }
  const request = pending.request;
  switch (pending.kind) {
    case 'post': {
      if (!pending.facts || !pending.nonce) return permanent('the action or its copy is gone');
      if (!(OPEN_ACTION_STATUSES as readonly string[]).includes(pending.facts.status) || pending.facts.status === 'approved') {
        return permanent(`the action was ${pending.facts.status} before its copy was sent`);
      }
      let target = pending.target;
      if (!target) {
        if (!pending.csm_email) return permanent('the CSM has no Slack user id and no e-mail');
        const found = await call({ method: 'users.lookupByEmail', token }, { email: pending.csm_email });
        if (found.error) return { ...found, error: `users.lookupByEmail ${pending.csm_email}: ${found.error}` };
        target = String(found.data?.user?.id ?? '');
        if (!target) return permanent(`users.lookupByEmail ${pending.csm_email}: no user id in the answer`);
      }
      const message = approvalBlocks(pending.facts, pending.nonce);
      const sent = await call({ method: 'chat.postMessage', token }, { channel: target, text: message.text, blocks: message.blocks });
      return { ...sent, target, channel: sent.data?.channel, ts: sent.data?.ts };
    }
    case 'update': {
      if (!pending.facts) return permanent('the action is gone');
      // A copy of an action waiting for a decision again (its snooze ended) gets its buttons back.
      const waiting = pending.facts.status === 'pending_approval' && pending.nonce;
      const message = waiting ? approvalBlocks(pending.facts, pending.nonce!) : decidedBlocks(pending.facts);
      if (typeof request.response_url === 'string')
        return call({ responseUrl: request.response_url }, { replace_original: true, text: message.text, blocks: message.blocks });
      return call(
        { method: 'chat.update', token },
        { channel: request.channel, ts: request.ts, text: message.text, blocks: message.blocks },
      );
    }
    case 'reply':
      return call({ method: 'chat.postMessage', token }, { channel: request.channel, thread_ts: request.thread_ts, text: request.text });
    case 'ephemeral':
      if (typeof request.response_url === 'string')
        return call({ responseUrl: request.response_url }, { response_type: 'ephemeral', replace_original: false, text: request.text });
      return call({ method: 'chat.postEphemeral', token }, { channel: request.channel, user: request.user, text: request.text });
  }
}
