// Slack, outbound (docs/chat-platforms.md "Slack"): every call to Slack — an approval request posted to the CSM's DM, a
// copy updated after a decision, an answer in a thread, a private notice — is a row of the chat
// outbox (`chat_sends`), queued in the transaction that decided it and sent by a `chat.send` job
// with the outbox's back-off: 429 (never sooner than Retry-After), 5xx, timeouts and Slack's
// `ratelimited` are tried again, dead after 8 attempts; any other `ok: false` stops at once. Slack
// has no idempotency key: a send that timed out may arrive twice; each claim sends once. The same
// outbox and job carry Google Chat's calls (rows with platform `google_chat`, sent by
// google-chat/transport.ts).
import { sql } from 'drizzle-orm';
import { t } from 'elysia';
import { rowsOf, type Db } from '../../db/client.ts';
import { OPEN_ACTION_STATUSES, type ChatPlatform, type ChatSendKind } from '../../db/schema/index.ts';
import { messageOf } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { openSecret } from '../../lib/secret-box.ts';
import { defineJobKind, PermanentJobError } from '../../queue/job-kind.ts';
import { enqueueJob } from '../../queue/job-queue.ts';
import { OUTBOX_TIMEOUT_MS, retryAfterOf, unanswered, writeAttempt, type AttemptResult } from '../agent-actions/outbox.ts';
import { actionSettings } from '../agent-actions/settings.ts';
import type { CopyUpdate, PlatformSender } from '../agent-actions/service.ts';
import { installationOfOrg, slackInstallationOfOrg } from './installations.ts';
import { approvalBlocks, decidedBlocks, type ActionFacts } from './messages.ts';
import { attemptGoogleChatSend } from '../google-chat/transport.ts';
import { attemptWhatsApp, whatsappSendUnits } from '../whatsapp/sender.ts';

/** `response_url` is used only on Slack's host (or the configured API's, for local fakes). */
export function responseUrlAllowed(raw: string | null | undefined, apiBase = actionSettings().slackApiBase): raw is string {
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

/** One call to a chat platform queued in the caller's transaction, with its `chat.send` job. */
export async function queueChatSend(
  db: Db,
  row: {
    platform?: ChatPlatform;
    orgId: string;
    installationId: string;
    kind: ChatSendKind;
    request: Record<string, unknown>;
    notificationId?: string | null;
    actionId?: string | null;
  },
) {
  const id = newId('chs');
  await db.execute(sql`
    insert into chat_sends (id, org_id, installation_id, notification_id, action_id, platform, kind, request, next_attempt_at)
    values (${id}, ${row.orgId}, ${row.installationId}, ${row.notificationId ?? null}, ${row.actionId ?? null}, ${row.platform ?? 'slack'}, ${row.kind}, ${JSON.stringify(row.request)}::jsonb, now())`);
  await enqueueJob(db, chatSendJob, { sendId: id }, { orgId: row.orgId, dedupeKey: id });
  return id;
}
const queue = queueChatSend;

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

/** A notice only `user` sees: through the click's response_url when allowed, else chat.postEphemeral. */
export const queueSlackEphemeral = (
  db: Db,
  input: { orgId: string; installationId: string; channel: string | null; user: string; text: string; responseUrl?: string | null },
) =>
  queue(db, {
    orgId: input.orgId,
    installationId: input.installationId,
    kind: 'ephemeral',
    request: responseUrlAllowed(input.responseUrl)
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
    const viaClick = input.via?.notificationId === copy.id && responseUrlAllowed(input.via.responseUrl);
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

/** A platform whose copies go out through the organisation's installation of it: available when
 * there is one, each copy's post queued on it. */
export function installedPlatformSender(platform: ChatPlatform, queueUpdates: PlatformSender['queueUpdates']): PlatformSender {
  return {
    available: async (db, orgId) => (await installationOfOrg(db, platform, orgId)) !== null,
    queueSend: async (db, input) => {
      const installation = await installationOfOrg(db, platform, input.orgId);
      if (!installation) return;
      await queueChatSend(db, {
        platform,
        orgId: input.orgId,
        installationId: installation.id,
        kind: 'post',
        notificationId: input.notificationId,
        actionId: input.actionId,
        request: {},
      });
    },
    queueUpdates,
  };
}

export const slackSender = installedPlatformSender('slack', queueSlackUpdates);

// --- one attempt --------------------------------------------------------------------------------

export interface Pending {
  id: string;
  org_id: string;
  platform: ChatPlatform;
  installation_id: string;
  /** The platform's id of the installation (Slack team, Google Chat space). */
  installation_external_id: string;
  credentials_sealed: string | null;
  kind: ChatSendKind;
  request: Record<string, unknown>;
  notification_id: string | null;
  action_id: string | null;
  /** A post: the copy's recipient (null: looked up by the CSM's e-mail) and nonce. */
  target: string | null;
  csm_email: string | null;
  nonce: string | null;
  action_status: string | null;
  /** What the message shows (posts and updates). */
  facts: ActionFacts | null;
}

/** What an approval request shows (every platform's messages are drawn from it). */
export async function actionFacts(db: Db, orgId: string, actionId: string): Promise<ActionFacts | null> {
  const [row] = rowsOf<ActionFacts>(
    await db.execute(sql`
      select a.id, a.type, a.params, a.reason, a.rationale, a.status, a.decided_by, a.trigger_count,
        c.name as customer_name, p.arr, p.currency, p.risk, p.probability, p.drivers,
        to_char(a.snoozed_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as snoozed_until,
        to_char(a.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as expires_at
      from agent_actions a join customers c on c.org_id = a.org_id and c.id = a.customer_id
      left join predictions p on p.org_id = a.org_id and p.customer_id = a.customer_id
      where a.org_id = ${orgId} and a.id = ${actionId}`),
  );
  return row ?? null;
}

async function loadPending(db: Db, args: { sendId: string }): Promise<Pending | null> {
  const [row] = rowsOf<Omit<Pending, 'facts'>>(
    await db.execute(sql`
      select s.id, s.org_id, s.platform, s.installation_id, i.external_id as installation_external_id, i.credentials_sealed, s.kind, s.request, s.notification_id, s.action_id,
        n.target, n.nonce, m.email as csm_email, a.status as action_status
      from chat_sends s join chat_installations i on i.id = s.installation_id
      left join action_notifications n on n.id = s.notification_id
      left join csms m on m.id = n.csm_id
      left join agent_actions a on a.id = s.action_id
      where s.id = ${args.sendId} and s.status = 'pending' and s.platform <> 'whatsapp'`),
  );
  if (!row) return null;
  const facts = row.action_id && (row.kind === 'post' || row.kind === 'update') ? await actionFacts(db, row.org_id, row.action_id) : null;
  return { ...row, facts };
}

export type SlackAnswer = AttemptResult & { data: Record<string, any> | null };
/** One attempt's outcome, and for a post where the message is (its channel and ts, or Google's
 * space and message name) and, for Slack, whom it went to. */
export type SendAnswer = SlackAnswer & { target?: string; channel?: string; ts?: string };

/** One call: Slack's Web API method (`chat.postMessage`…) with the bot token, or a response_url.
 * Never throws. */
export async function callSlack(
  target: { method: string; token: string } | { responseUrl: string },
  body: Record<string, unknown>,
): Promise<SlackAnswer> {
  const started = performance.now();
  const done = (partial: Omit<SlackAnswer, 'ms'>): SlackAnswer => ({ ...partial, ms: Math.round(performance.now() - started) });
  const url = 'responseUrl' in target ? target.responseUrl : `${actionSettings().slackApiBase}/${target.method}`;
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
    let data: Record<string, any> | null = null;
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
export async function attemptSend(pending: Pending): Promise<SendAnswer> {
  const key = actionSettings().secretKey;
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
        const found = await callSlack({ method: 'users.lookupByEmail', token }, { email: pending.csm_email });
        if (found.error) return { ...found, error: `users.lookupByEmail ${pending.csm_email}: ${found.error}` };
        target = String(found.data?.user?.id ?? '');
        if (!target) return permanent(`users.lookupByEmail ${pending.csm_email}: no user id in the answer`);
      }
      const message = approvalBlocks(pending.facts, pending.nonce);
      const sent = await callSlack({ method: 'chat.postMessage', token }, { channel: target, text: message.text, blocks: message.blocks });
      return { ...sent, target, channel: sent.data?.channel, ts: sent.data?.ts };
    }
    case 'update': {
      if (!pending.facts) return permanent('the action is gone');
      // A copy of an action waiting for a decision again (its snooze ended) gets its buttons back.
      const waiting = pending.facts.status === 'pending_approval' && pending.nonce;
      const message = waiting ? approvalBlocks(pending.facts, pending.nonce!) : decidedBlocks(pending.facts);
      if (typeof request.response_url === 'string')
        return callSlack({ responseUrl: request.response_url }, { replace_original: true, text: message.text, blocks: message.blocks });
      return callSlack(
        { method: 'chat.update', token },
        { channel: request.channel, ts: request.ts, text: message.text, blocks: message.blocks },
      );
    }
    case 'reply':
      return callSlack(
        { method: 'chat.postMessage', token },
        { channel: request.channel, thread_ts: request.thread_ts, text: request.text },
      );
    case 'ephemeral':
      if (typeof request.response_url === 'string')
        return callSlack(
          { responseUrl: request.response_url },
          { response_type: 'ephemeral', replace_original: false, text: request.text },
        );
      return callSlack({ method: 'chat.postEphemeral', token }, { channel: request.channel, user: request.user, text: request.text });
  }
}

interface Recorded {
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
}

async function recordSend(
  db: Db,
  args: { sendId: string; result: AttemptResult; now: string; target?: string; channel?: string; ts?: string },
): Promise<Recorded> {
  const [row] = rowsOf<{
    attempts: number;
    org_id: string;
    platform: ChatPlatform;
    installation_id: string;
    kind: ChatSendKind;
    notification_id: string | null;
    action_id: string | null;
  }>(
    await db.execute(
      sql`select attempts + 1 as attempts, org_id, platform, installation_id, kind, notification_id, action_id from chat_sends where id = ${args.sendId} and status = 'pending' for update`,
    ),
  );
  if (!row) return { status: 'delivered', attempts: 0 };
  const settled = await writeAttempt(db, {
    table: 'chat_sends',
    id: args.sendId,
    attempts: row.attempts,
    result: args.result,
    now: args.now,
  });
  if (settled.nextAt)
    await enqueueJob(
      db,
      chatSendJob,
      { sendId: args.sendId },
      { orgId: row.org_id, dedupeKey: args.sendId, runAt: new Date(settled.nextAt) },
    );
  if (row.notification_id && row.kind === 'post')
    await settlePost(db, {
      ...row,
      notificationId: row.notification_id,
      status: settled.status,
      error: args.result.error,
      target: args.target,
      channel: args.channel,
      ts: args.ts,
    });
  if (row.notification_id && row.kind === 'update' && settled.status === 'delivered') {
    await db.execute(sql`update action_notifications set status = 'updated', updated_at = now() where id = ${row.notification_id}`);
  }
  return { status: settled.status, attempts: row.attempts };
}

/** A post's outcome on its copy: sent (its channel and ts kept; the action now waits for a
 * decision, and a decision taken meanwhile updates it at once), or failed with the reason (when no
 * copy is left on its way, the action waits in the inbox). */
async function settlePost(
  db: Db,
  row: {
    org_id: string;
    platform: ChatPlatform;
    installation_id: string;
    action_id: string | null;
    attempts: number;
    notificationId: string;
    status: string;
    error: string | null;
    target?: string;
    channel?: string;
    ts?: string;
  },
) {
  if (row.status === 'delivered') {
    await db.execute(sql`
      update action_notifications set status = 'sent', target = coalesce(target, ${row.target ?? null}), platform_channel = ${row.channel ?? null}, platform_message_id = ${row.ts ?? null},
        attempts = ${row.attempts}, last_error = null, updated_at = now()
      where id = ${row.notificationId}`);
    // A CSM found by e-mail is known by the Slack user id from now on (their clicks are matched by it).
    if (row.target && row.platform === 'slack')
      await db.execute(
        sql`update csms set slack_user_id = ${row.target}, updated_at = now() where id = (select csm_id from action_notifications where id = ${row.notificationId}) and slack_user_id is null`,
      );
    if (!row.action_id) return;
    await db.execute(
      sql`update agent_actions set status = 'pending_approval', updated_at = now() where org_id = ${row.org_id} and id = ${row.action_id} and status = 'proposed'`,
    );
    const [action] = rowsOf<{ status: string }>(await db.execute(sql`select status from agent_actions where id = ${row.action_id}`));
    if (action && !['proposed', 'pending_approval'].includes(action.status)) {
      if (row.platform === 'slack') await queueSlackUpdates(db, { orgId: row.org_id, actionId: row.action_id });
      else if (row.platform === 'google_chat' && row.ts) {
        await queue(db, {
          platform: row.platform,
          orgId: row.org_id,
          installationId: row.installation_id,
          kind: 'update',
          notificationId: row.notificationId,
          actionId: row.action_id,
          request: { name: row.ts },
        });
      }
    }
    return;
  }
  await db.execute(sql`
    update action_notifications set status = ${row.status === 'dead' ? 'failed' : 'pending'}, attempts = ${row.attempts}, last_error = ${row.error}, updated_at = now()
    where id = ${row.notificationId}`);
  if (row.status === 'dead' && row.action_id) {
    await db.execute(sql`
      update agent_actions a set status = 'pending_approval', updated_at = now()
      where a.org_id = ${row.org_id} and a.id = ${row.action_id} and a.status = 'proposed'
        and not exists (select 1 from action_notifications n where n.action_id = a.id and n.status in ('pending', 'sent', 'updated'))`);
  }
}

const units = {
  load: (db: Db, args: { sendId: string }) => loadPending(db, args),
  record: (db: Db, args: { sendId: string; result: AttemptResult; now: string; target?: string; channel?: string; ts?: string }) =>
    recordSend(db, args),
  // WhatsApp rows of the same outbox (modules/whatsapp/sender.ts); called through, not spread,
  // because the two modules import each other.
  'whatsapp.load': (db: Db, args: Parameters<typeof whatsappSendUnits.load>[1]) => whatsappSendUnits.load(db, args),
  'whatsapp.record': (db: Db, args: Parameters<typeof whatsappSendUnits.record>[1]) => whatsappSendUnits.record(db, args),
};

/** `chat.send`: one attempt of one call to Slack, Google Chat or WhatsApp (by the row's platform). The row keeps
 * its attempts and back-off (a retry is the next job); the job fails only when the database does. */
export const chatSendJob = defineJobKind({
  kind: 'chat.send',
  payload: t.Object({ sendId: t.String({ minLength: 1, maxLength: 100 }) }),
  retry: { maxAttempts: 5 },
  units,
  handle: async (payload, ctx) => {
    if (!ctx.job.orgId) throw new PermanentJobError('chat.send needs an organisation');
    const pending = await ctx.run('load', payload);
    if (!pending) {
      const orgId = ctx.job.orgId;
      const whatsapp = await ctx.run('whatsapp.load', { orgId, sendId: payload.sendId });
      if (!whatsapp) return { skipped: true };
      const sent = await attemptWhatsApp(whatsapp);
      const result = { status: sent.status, error: sent.error, ms: sent.ms, retryAfterSeconds: sent.retryAfterSeconds, final: sent.final };
      const recorded = await ctx.run('whatsapp.record', {
        orgId,
        sendId: payload.sendId,
        result,
        now: new Date().toISOString(),
        wamid: sent.wamid,
        template: sent.template,
        code: sent.code,
      });
      return { status: recorded.status, attempts: recorded.attempts, http_status: sent.status };
    }
    const { data: _, ...result } = pending.platform === 'google_chat' ? await attemptGoogleChatSend(pending) : await attemptSend(pending);
    const recorded = await ctx.run('record', {
      sendId: payload.sendId,
      ...result,
      result: {
        status: result.status,
        error: result.error,
        ms: result.ms,
        retryAfterSeconds: result.retryAfterSeconds,
        final: result.final,
      },
      now: new Date().toISOString(),
    });
    return { status: recorded.status, attempts: recorded.attempts, http_status: result.status };
  },
});

// --- the operator's view (revintel outbox list|retry) ---------------------------------------------

/** Chat sends in the outbox's shape: `endpoint_id` is the installation, `url` names the platform
 * and the call, `event_id` the action's copy (or the action). Newest first. */
export async function listChatSends(db: Db, input: { orgId?: string; status?: string; limit: number }) {
  return rowsOf<{
    id: string;
    endpoint_id: string;
    url: string;
    event_id: string;
    event_type: string;
    status: string;
    attempts: number;
    next_attempt_at: string | null;
    last_status: number | null;
    last_error: string | null;
    history: unknown[];
    delivered_at: string | null;
    created_at: string;
  }>(
    await db.execute(sql`
      select s.id, s.installation_id as endpoint_id, s.platform || ':' || (case when s.platform = 'google_chat' then (case s.kind when 'update' then 'spaces.messages.patch' else 'spaces.messages.create' end)
          when s.platform = 'whatsapp' then 'messages'
          else (case s.kind when 'post' then 'chat.postMessage' when 'update' then coalesce(s.request->>'response_url', 'chat.update') when 'reply' then 'chat.postMessage' else coalesce(s.request->>'response_url', 'chat.postEphemeral') end) end) as url,
        coalesce(s.notification_id, s.action_id, '') as event_id, s.platform || '.' || s.kind as event_type, s.status, s.attempts,
        to_char(s.next_attempt_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as next_attempt_at, s.last_status, s.last_error, s.history,
        to_char(s.delivered_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as delivered_at, to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at
      from chat_sends s
      where (${input.orgId ?? null}::text is null or s.org_id = ${input.orgId ?? null}) and (${input.status ?? null}::text is null or s.status = ${input.status ?? null})
      order by s.created_at desc, s.id desc limit ${input.limit}`),
  );
}

/** Dead chat sends back to pending with fresh attempts, due now (a dead post's copy waits again). */
export async function retryChatSends(db: Db, input: { ids?: string[]; orgId?: string }): Promise<string[]> {
  const where = input.ids
    ? sql`id in (${sql.join(
        input.ids.map((id) => sql`${id}`),
        sql`, `,
      )})`
    : input.orgId
      ? sql`org_id = ${input.orgId}`
      : sql`true`;
  const rows = rowsOf<{ id: string; org_id: string; notification_id: string | null; kind: string }>(
    await db.execute(
      sql`update chat_sends set status = 'pending', attempts = 0, next_attempt_at = now(), updated_at = now() where status = 'dead' and ${where} returning id, org_id, notification_id, kind`,
    ),
  );
  for (const row of rows) {
    if (row.kind === 'post' && row.notification_id)
      await db.execute(
        sql`update action_notifications set status = 'pending', updated_at = now() where id = ${row.notification_id} and status = 'failed'`,
      );
    await enqueueJob(db, chatSendJob, { sendId: row.id }, { orgId: row.org_id, dedupeKey: row.id });
  }
  return rows.map((r) => r.id);
}
