// The chat outbox (`chat_sends`): every call to a chat platform — an approval request posted to a
// CSM, a copy updated after a decision, an answer in a thread, a private notice — is a row queued in
// the transaction that decided it and sent by a `chat.send` job with the outbox's back-off: 429
// (never sooner than Retry-After), 5xx and timeouts are tried again, dead after 8 attempts; any
// other refusal stops at once. No platform has an idempotency key: a send that timed out may
// arrive twice; each claim sends once. Which platform sends a row is its `platform`: the job is
// built in platforms.ts from the registry (`chatSendJobOf`), so this file imports no platform and
// the platforms import it.
import { type SQL, sql } from 'drizzle-orm';
import { Type as t } from '@sinclair/typebox';
import { type Db, rowsOf } from '../../db/client.ts';
import type { ChatSendKind } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { defineJobKind, PermanentJobError } from '../../queue/job-kind.ts';
import { enqueueJob } from '../../queue/job-queue.ts';
import { type AttemptResult, settleAttempt } from '../../queue/outbox-attempts.ts';
import { actionFacts } from './facts.ts';
import { installationOfOrg } from './installations.ts';
import type { ChatPlatform, ChatPlatformName, ChatSender, OwnOutboxRows, Pending, RecordedSend } from './port.ts';

/** The `chat.send` kind as queueing a send needs it (its name, payload and retry); the job that
 * runs it is `chatSendJobOf(platforms)`, with the same three. */
export const CHAT_SEND = {
  kind: 'chat.send',
  payload: t.Object({ sendId: t.String({ minLength: 1, maxLength: 100 }) }),
  retry: { maxAttempts: 5 },
};

/** One call to a chat platform queued in the caller's transaction, with its `chat.send` job. */
export async function queueChatSend(
  db: Db,
  row: {
    platform?: ChatPlatformName;
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
  await enqueueJob(db, CHAT_SEND, { sendId: id }, { orgId: row.orgId, dedupeKey: id });
  return id;
}
/** A platform whose copies go out through the organisation's installation of it: available when
 * there is one, each copy's post queued on it. */
export function installedPlatformSender(platform: ChatPlatformName, queueUpdates: ChatSender['queueUpdates']): ChatSender {
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

/** The row of `sendId` when a platform in `shared` sends it from a `Pending` (not WhatsApp's). */
async function loadPending(db: Db, args: { sendId: string; shared: SQL }): Promise<Pending | null> {
  const [row] = rowsOf<Omit<Pending, 'facts'>>(
    await db.execute(sql`
      select s.id, s.org_id, s.platform, s.installation_id, i.external_id as installation_external_id, i.credentials_sealed, s.kind, s.request, s.notification_id, s.action_id,
        n.target, n.nonce, m.email as csm_email, a.status as action_status
      from chat_sends s join chat_installations i on i.id = s.installation_id
      left join action_notifications n on n.id = s.notification_id
      left join csms m on m.id = n.csm_id
      left join agent_actions a on a.id = s.action_id
      where s.id = ${args.sendId} and s.status = 'pending' and s.platform in (${args.shared})`),
  );
  if (!row) return null;
  const facts = row.action_id && (row.kind === 'post' || row.kind === 'update') ? await actionFacts(db, row.org_id, row.action_id) : null;
  return { ...row, facts };
}

type Platforms = Record<ChatPlatformName, ChatPlatform>;

async function recordSend(
  db: Db,
  platforms: Platforms,
  args: { sendId: string; result: AttemptResult; now: string; target?: string; channel?: string; ts?: string },
): Promise<RecordedSend> {
  const row = await settleAttempt<typeof CHAT_SEND.payload, SendRow>(db, {
    table: 'chat_sends',
    id: args.sendId,
    job: CHAT_SEND,
    payload: { sendId: args.sendId },
    result: args.result,
    now: args.now,
    columns: sql`, platform, installation_id, kind, notification_id, action_id`,
  });
  if (!row) return { status: 'delivered', attempts: 0 };
  if (row.notification_id && row.kind === 'post')
    await settlePost(
      db,
      platforms[row.platform],
      { ...row, notificationId: row.notification_id, error: args.result.error },
      { target: args.target, channel: args.channel, messageId: args.ts },
    );
  if (row.notification_id && row.kind === 'update' && row.status === 'delivered') {
    await db.execute(sql`update action_notifications set status = 'updated', updated_at = now() where id = ${row.notification_id}`);
  }
  return { status: row.status, attempts: row.attempts };
}

interface SendRow {
  platform: ChatPlatformName;
  installation_id: string;
  kind: ChatSendKind;
  notification_id: string | null;
  action_id: string | null;
}

/** A post's outcome on its copy, on any platform: sent — where the message is kept (Slack's channel
 * and ts, Google's space and message name, WhatsApp's wamid), the action now waits for a decision,
 * and a decision taken meanwhile is shown at once (the platform's `decidedBeforePosted`) — or
 * failed with the reason (when no copy is left on its way, the action waits in the inbox). */
export async function settlePost(
  db: Db,
  platform: ChatPlatform,
  row: {
    org_id: string;
    installation_id: string;
    action_id: string | null;
    attempts: number;
    notificationId: string;
    status: string;
    error: string | null;
  },
  placed: { target?: string; channel?: string; messageId?: string | null },
) {
  if (row.status === 'delivered') {
    // platform_status is what the platform last said of the message (WhatsApp's statuses): none yet of this one.
    await db.execute(sql`
      update action_notifications set status = 'sent', target = coalesce(target, ${placed.target ?? null}), platform_channel = ${placed.channel ?? null},
        platform_message_id = ${placed.messageId ?? null}, platform_status = null, platform_status_at = null, attempts = ${row.attempts}, last_error = null, updated_at = now()
      where org_id = ${row.org_id} and id = ${row.notificationId}`);
    if (placed.target) await platform.postedTo?.(db, { orgId: row.org_id, notificationId: row.notificationId, target: placed.target });
    if (!row.action_id) return;
    await db.execute(
      sql`update agent_actions set status = 'pending_approval', updated_at = now() where org_id = ${row.org_id} and id = ${row.action_id} and status = 'proposed'`,
    );
    const [action] = rowsOf<{ status: string }>(
      await db.execute(sql`select status from agent_actions where org_id = ${row.org_id} and id = ${row.action_id}`),
    );
    if (action && !['proposed', 'pending_approval'].includes(action.status)) {
      await platform.decidedBeforePosted(db, {
        orgId: row.org_id,
        actionId: row.action_id,
        installationId: row.installation_id,
        notificationId: row.notificationId,
        messageId: placed.messageId ?? null,
      });
    }
    return;
  }
  await db.execute(sql`
    update action_notifications set status = ${row.status === 'dead' ? 'failed' : 'pending'}, attempts = ${row.attempts}, last_error = ${row.error}, updated_at = now()
    where org_id = ${row.org_id} and id = ${row.notificationId}`);
  if (row.status === 'dead' && row.action_id) {
    await db.execute(sql`
      update agent_actions a set status = 'pending_approval', updated_at = now()
      where a.org_id = ${row.org_id} and a.id = ${row.action_id} and a.status = 'proposed'
        and not exists (select 1 from action_notifications n where n.action_id = a.id and n.status in ('pending', 'sent', 'updated'))`);
  }
}

/** `chat.send`: one attempt of one call to a chat platform (the row's), sent by the platform's
 * `attempt`, or by its own rows (WhatsApp's). The row keeps its attempts and back-off (a retry is
 * the next job); the job fails only when the database does. */
export function chatSendJobOf<Row, Answer extends AttemptResult>(platforms: Platforms, own: OwnOutboxRows<Row, Answer>) {
  const withAttempt = Object.entries(platforms).flatMap(([name, platform]) => (platform.attempt ? [sql`${name}`] : []));
  const shared = sql.join(withAttempt, sql`, `);
  const units = {
    load: (db: Db, args: { sendId: string }) => loadPending(db, { ...args, shared }),
    record: (db: Db, args: { sendId: string; result: AttemptResult; now: string; target?: string; channel?: string; ts?: string }) =>
      recordSend(db, platforms, args),
    'own.load': (db: Db, args: { orgId: string; sendId: string }) => own.load(db, args),
    'own.record': (db: Db, args: { orgId: string; sendId: string; answer: Answer; now: string }) => own.record(db, args),
  };
  return defineJobKind({
    ...CHAT_SEND,
    units,
    handle: async (payload, ctx) => {
      if (!ctx.job.orgId) throw new PermanentJobError('chat.send needs an organisation');
      const pending = await ctx.run('load', payload);
      if (!pending) {
        const orgId = ctx.job.orgId;
        const row = await ctx.run('own.load', { orgId, sendId: payload.sendId });
        if (!row) return { skipped: true };
        const answer = await own.attempt(row, ctx.settings.actions);
        const recorded = await ctx.run('own.record', { orgId, sendId: payload.sendId, answer, now: new Date().toISOString() });
        return { status: recorded.status, attempts: recorded.attempts, http_status: answer.status };
      }
      const attempt = platforms[pending.platform].attempt;
      if (!attempt) throw new PermanentJobError(`${pending.platform} rows are not sent from the shared outbox`);
      const sent = await attempt(pending, ctx.settings.actions);
      const recorded = await ctx.run('record', {
        sendId: payload.sendId,
        target: sent.target,
        channel: sent.channel,
        ts: sent.ts,
        result: { status: sent.status, error: sent.error, ms: sent.ms, retryAfterSeconds: sent.retryAfterSeconds, final: sent.final },
        now: new Date().toISOString(),
      });
      return { status: recorded.status, attempts: recorded.attempts, http_status: sent.status };
    },
  });
}

// --- the operator's view (revintel outbox list|retry) ---------------------------------------------

/** Chat sends in the outbox's shape: `endpoint_id` is the installation, `url` names the platform
 * and the call (each platform's `callOf`), `event_id` the action's copy (or the action). Newest first. */
export async function listChatSends(
  db: Db,
  platforms: Record<ChatPlatformName, Pick<ChatPlatform, 'callOf'>>,
  input: { orgId?: string; status?: string; limit: number },
) {
  const rows = rowsOf<{
    id: string;
    endpoint_id: string;
    platform: ChatPlatformName;
    kind: ChatSendKind;
    request: Record<string, unknown>;
    event_id: string;
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
      select s.id, s.installation_id as endpoint_id, s.platform, s.kind, s.request,
        coalesce(s.notification_id, s.action_id, '') as event_id, s.status, s.attempts,
        to_char(s.next_attempt_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as next_attempt_at, s.last_status, s.last_error, s.history,
        to_char(s.delivered_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as delivered_at, to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at
      from chat_sends s
      where (${input.orgId ?? null}::text is null or s.org_id = ${input.orgId ?? null}) and (${input.status ?? null}::text is null or s.status = ${input.status ?? null})
      order by s.created_at desc, s.id desc limit ${input.limit}`),
  );
  return rows.map(({ platform, kind, request, ...row }) => ({
    ...row,
    url: `${platform}:${platforms[platform].callOf(kind, request ?? {})}`,
    event_type: `${platform}.${kind}`,
  }));
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
    await enqueueJob(db, CHAT_SEND, { sendId: row.id }, { orgId: row.org_id, dedupeKey: row.id });
  }
  return rows.map((r) => r.id);
}
