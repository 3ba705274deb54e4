// POST /api/webhooks/team-chat (docs/chat-platforms.md "Slack"): Slack's Events API and
// interactivity on one URL. The raw bytes are verified first (`X-Slack-Signature`, v0 HMAC-SHA256
// of `v0:{timestamp}:{raw body}` with SLACK_SIGNING_SECRET or _PREVIOUS, in constant time, the
// timestamp within 300 s), else 401 with `X-Slack-No-Retry: 1`. Every event is stored once, by
// Slack's ids, in the transaction of its effects: a redelivery finds it and does nothing more. A
// click is decided before the answer (one guarded UPDATE); whoever may not decide, a stale nonce, an
// expired or decided action: nothing changes and the clicker is told why, privately.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Elysia, t } from 'elysia';
import type { Config } from '../../config.ts';
import type { ChatPlatform } from '../../db/schema/index.ts';
import { rowsOf, type Database, type Db } from '../../db/client.ts';
import { readBodyLimited } from '../../lib/body.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { memoryRateLimiter, rateLimitHeaders, type Limits } from '../../lib/rate-limiter.ts';
import { bodyLimit, type RouteDeclaration } from '../../lib/routes.ts';
import { isDatabaseDown } from '../../plugins/errors.ts';
import { parseStorableJson } from '../../db/storable.ts';
import type { RefusedSignatures } from '../webhooks/refused.ts';
import type { RequestState, RequestStates } from '../../plugins/request-state.ts';
import { decideFromChat } from '../agent-actions/chat-decisions.ts';
import type { Decision } from '../agent-actions/service.ts';
import { runCommand } from './commands.ts';
import { slackInstallationByTeam, type SlackInstallation } from './installations.ts';
import { BUTTONS } from './messages.ts';
import { queueSlackEphemeral, queueSlackReply } from './sender.ts';

export const TEAM_CHAT_ROUTE = {
  method: 'POST',
  path: '/api/webhooks/team-chat',
  auth: 'platform-signature',
  verifiedBy: 'slack',
  counted: 'installation',
  body: 'webhook',
  // An empty 200 for events and clicks (their effects follow in Slack); url_verification's echo.
  response: t.Object({ challenge: t.Optional(t.String()) }),
  envelope: false,
  summary: "Slack's events and button clicks (signed with SLACK_SIGNING_SECRET)",
} as const satisfies RouteDeclaration;

export const SLACK_REPLAY_WINDOW_S = 300;

export type SignatureVerdict = { ok: true } | { ok: false; reason: string };

/** Slack's request signature over the raw body, against each configured secret, in constant time. */
export function verifySlackSignature(rawBody: Uint8Array, headers: Headers, secrets: string[], nowMs: number): SignatureVerdict {
  const signature = headers.get('x-slack-signature');
  const timestamp = headers.get('x-slack-request-timestamp');
  if (!signature || !timestamp) return { ok: false, reason: 'X-Slack-Signature and X-Slack-Request-Timestamp are required' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'X-Slack-Request-Timestamp is not a Unix time' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_REPLAY_WINDOW_S)
    return { ok: false, reason: `the timestamp is more than ${SLACK_REPLAY_WINDOW_S} s from now` };
  if (secrets.length === 0) return { ok: false, reason: 'SLACK_SIGNING_SECRET is not configured' };
  const given = /^v0=([0-9a-f]{64})$/.exec(signature.trim());
  if (!given) return { ok: false, reason: 'X-Slack-Signature is not v0=<hex HMAC-SHA256>' };
  const givenBytes = Buffer.from(given[1]!, 'hex');
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(`v0:${timestamp}:`).update(rawBody).digest();
    if (timingSafeEqual(expected, givenBytes)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: 'the signature does not match' };
}

const noRetry = { 'x-slack-no-retry': '1' };
const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The request's payload: JSON (Events API) or the form field `payload` (interactivity). */
function parsePayload(bytes: Uint8Array, contentType: string | null): Record<string, any> {
  try {
    const text = fatalUtf8.decode(bytes);
    const raw = (contentType ?? '').includes('application/x-www-form-urlencoded') ? new URLSearchParams(text).get('payload') : text;
    if (raw === null) throw new Error('no payload field');
    // Cleaned of what PostgreSQL cannot store (NUL, lone surrogates): Slack sends the same bytes on
    // every retry, so refusing them would lose the event.
    const parsed = parseStorableJson(raw) as Record<string, any> | null;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed;
  } catch {
    throw new AppError('malformed_json', 'The body is not a Slack event (JSON) nor an interaction (form field "payload" holding JSON)');
  }
}

/** Stores the event once (by the platform's ids); null when it was stored before (a redelivery:
 * nothing more happens), else its row's id. */
export async function storeOnce(
  db: Db,
  event: {
    platform?: ChatPlatform;
    dedupeKey: string;
    installation: { id: string; org_id: string } | null;
    type: string;
    outcome: 'processed' | 'denied' | 'ignored';
    detail?: string | null;
    body: unknown;
  },
): Promise<string | null> {
  const [row] = rowsOf<{ id: string }>(
    await db.execute(sql`
      insert into chat_inbound_events (id, platform, dedupe_key, installation_id, org_id, type, outcome, detail, body)
      values (${newId('che')}, ${event.platform ?? 'slack'}, ${event.dedupeKey.slice(0, 300)}, ${event.installation?.id ?? null}, ${event.installation?.org_id ?? null}, ${event.type.slice(0, 100)}, ${event.outcome}, ${event.detail ?? null}, ${JSON.stringify(event.body)}::jsonb)
      on conflict (platform, dedupe_key) do nothing returning id`),
  );
  return row?.id ?? null;
}

export const settle = (db: Db, id: string, outcome: 'processed' | 'denied' | 'ignored', detail: string | null) =>
  db.execute(sql`update chat_inbound_events set outcome = ${outcome}, detail = ${detail} where id = ${id}`);

interface Clicker {
  id: string;
  name: string | null;
  email: string;
  role: string;
}

/** The active CSM of the organisation who is this Slack user, or null. */
export async function csmBySlackUser(db: Db, orgId: string, slackUserId: string): Promise<Clicker | null> {
  const [row] = rowsOf<Clicker>(
    await db.execute(
      sql`select id, name, email, role from csms where org_id = ${orgId} and slack_user_id = ${slackUserId} and active order by id limit 1`,
    ),
  );
  return row ?? null;
}

const DECISIONS: Record<string, Decision> = { [BUTTONS.approve]: 'approve', [BUTTONS.reject]: 'reject', [BUTTONS.snooze]: 'snooze' };

/** A button click, decided in `db`'s transaction: what happened, in words (null: decided). */
async function handleClick(db: Db, installation: SlackInstallation, payload: Record<string, any>, now: Date): Promise<void> {
  const button = Array.isArray(payload.actions) ? payload.actions[0] : null;
  const dedupeKey = `block_actions:${String(button?.action_id ?? '')}:${String(payload.trigger_id ?? button?.action_ts ?? '')}`;
  const eventId = await storeOnce(db, { dedupeKey, installation, type: 'block_actions', outcome: 'processed', body: payload });
  if (!eventId) return;
  const user = String(payload.user?.id ?? '');
  const responseUrl = typeof payload.response_url === 'string' ? payload.response_url : null;
  const channel =
    typeof payload.container?.channel_id === 'string'
      ? payload.container.channel_id
      : typeof payload.channel?.id === 'string'
        ? payload.channel.id
        : null;
  const orgId = installation.org_id;
  const deny = async (why: string) => {
    await settle(db, eventId, 'denied', why);
    if (user) await queueSlackEphemeral(db, { orgId, installationId: installation.id, channel, user, text: why, responseUrl });
  };
  const decision = DECISIONS[String(button?.action_id ?? '')];
  if (!decision) return void (await settle(db, eventId, 'ignored', `not one of our buttons (${String(button?.action_id ?? 'none')})`));
  const [actionId = '', nonce = ''] = String(button.value ?? '').split(':');
  const csm = await csmBySlackUser(db, orgId, user);
  const outcome = await decideFromChat(db, {
    orgId,
    actionId,
    nonce,
    platform: 'slack',
    decision,
    csm,
    actor: `slack:${user}`,
    now,
    responseUrl,
    place: 'workspace',
  });
  if (!outcome.ok) return deny(outcome.why);
  await settle(db, eventId, 'processed', `${decision} by ${csm!.id}`);
}

/** An Events API callback in `db`'s transaction: app mentions answer commands in their thread. */
async function handleEvent(db: Db, installation: SlackInstallation, envelope: Record<string, any>): Promise<void> {
  const event = envelope.event ?? {};
  const type = `event_callback.${String(event.type ?? 'unknown')}`;
  const dedupeKey = `event:${String(envelope.event_id ?? `${event.type}:${event.event_ts ?? event.ts}`)}`;
  const eventId = await storeOnce(db, { dedupeKey, installation, type, outcome: 'processed', body: envelope });
  if (!eventId) return;
  if (event.type !== 'app_mention') return void (await settle(db, eventId, 'ignored', `event type ${String(event.type)} is not handled`));
  const botUser = Array.isArray(envelope.authorizations) ? envelope.authorizations.find((a: any) => a?.is_bot)?.user_id : undefined;
  if (event.bot_id || event.subtype === 'bot_message' || (botUser && event.user === botUser))
    return void (await settle(db, eventId, 'ignored', "the bot's own message"));
  const user = String(event.user ?? '');
  const channel = String(event.channel ?? '');
  const csm = user ? await csmBySlackUser(db, installation.org_id, user) : null;
  if (!csm) {
    await settle(db, eventId, 'denied', 'not a CSM of this organisation');
    if (user && channel)
      await queueSlackEphemeral(db, {
        orgId: installation.org_id,
        installationId: installation.id,
        channel,
        user,
        text: 'Sorry, only CSMs of this organisation may ask me: not allowed.',
      });
    return;
  }
  const text = await runCommand(db, installation.org_id, String(event.text ?? ''), csm);
  await queueSlackReply(db, {
    orgId: installation.org_id,
    installationId: installation.id,
    channel,
    threadTs: String(event.thread_ts ?? event.ts ?? ''),
    text,
  });
  await settle(db, eventId, 'processed', null);
}

/** The workspace an unproven body names, for the budget of refused signatures. */
function claimedTeam(bytes: Uint8Array, contentType: string | null): string | null {
  try {
    const payload = parsePayload(bytes, contentType);
    const teamId = String(payload.team?.id ?? payload.team_id ?? '');
    return teamId ? `slack:${teamId}` : null;
  } catch {
    return null;
  }
}

export interface TeamChatDeps {
  database: Database;
  states: RequestStates;
  /** Counts a refused signature and throws what the request ends with (modules/webhooks/refused.ts). */
  refused: RefusedSignatures;
  config: Pick<
    Config,
    | 'bodyLimitApi'
    | 'bodyLimitImport'
    | 'bodyLimitWebhook'
    | 'slackSigningSecret'
    | 'slackSigningSecretPrevious'
    | 'webhookLimitPerMinute'
    | 'webhookLimitPerDay'
  >;
  clock?: () => number;
  wakeJobs?: () => void;
}

export function teamChatModule(deps: TeamChatDeps) {
  const limit = bodyLimit(TEAM_CHAT_ROUTE.body, deps.config);
  const secrets = [deps.config.slackSigningSecret, deps.config.slackSigningSecretPrevious].filter((s): s is string => !!s);
  // An installation's budget is a flood guard (all workspaces call from Slack's few addresses).
  const limiter = memoryRateLimiter();
  const limits: Limits = { perMinute: deps.config.webhookLimitPerMinute, perDay: deps.config.webhookLimitPerDay };
  const { db } = deps.database;
  const inTransaction = <T>(work: (tx: Db) => Promise<T>) => db.transaction((tx) => work(tx as unknown as Db));

  const reply = (state: RequestState, body: string, contentType = 'application/json;charset=utf-8') =>
    new Response(body, { headers: { 'content-type': contentType, ...state.headers, 'x-request-id': state.id } });

  async function receive(request: Request, state: RequestState): Promise<Response> {
    const bytes = await readBodyLimited(request, limit);
    const now = deps.clock ? deps.clock() : Date.now();
    const verdict = verifySlackSignature(bytes, request.headers, secrets, now);
    if (!verdict.ok)
      return deps.refused(
        state,
        new AppError('unauthorized', `Invalid Slack signature: ${verdict.reason}`, noRetry),
        claimedTeam(bytes, request.headers.get('content-type')),
      );
    const payload = parsePayload(bytes, request.headers.get('content-type'));
    if (payload.type === 'url_verification') return reply(state, JSON.stringify({ challenge: String(payload.challenge ?? '') }));
    const teamId = String(payload.team?.id ?? payload.team_id ?? payload.user?.team_id ?? '');
    try {
      const installation = teamId ? await slackInstallationByTeam(db, teamId) : null;
      if (!installation) {
        await storeOnce(db, {
          dedupeKey: `unknown:${teamId}:${String(payload.event_id ?? payload.trigger_id ?? newId('che'))}`,
          installation: null,
          type: String(payload.type ?? 'unknown'),
          outcome: 'ignored',
          detail: `workspace ${teamId || '(none)'} is not installed`,
          body: null,
        });
        return reply(state, '');
      }
      const decisionCounted = limiter.consume(`installation:${installation.id}`, limits);
      const decision = decisionCounted instanceof Promise ? await decisionCounted : decisionCounted;
      state.headers = rateLimitHeaders(decision);
      if (!decision.allowed)
        throw new AppError('rate_limited', `Rate limit exceeded for this installation; retry in ${decision.retryAfter} s`, {
          'retry-after': String(decision.retryAfter),
        });
      if (payload.type === 'block_actions') await inTransaction((tx) => handleClick(tx, installation, payload, new Date(now)));
      else if (payload.type === 'event_callback') await inTransaction((tx) => handleEvent(tx, installation, payload));
      else
        await storeOnce(db, {
          dedupeKey: `other:${String(payload.type)}:${String(payload.trigger_id ?? payload.event_id ?? newId('che'))}`,
          installation,
          type: String(payload.type ?? 'unknown'),
          outcome: 'ignored',
          detail: 'type not handled',
          body: payload,
        });
    } catch (error) {
      // The database could not be reached: nothing was stored, nothing decided. Slack is told not to
      // retry; the CSM clicks again. Anything else is a fault of ours: 500, logged.
      if (isDatabaseDown(error))
        throw new AppError('database_unavailable', 'The click could not be recorded: try again', noRetry, { cause: error });
      throw error;
    }
    deps.wakeJobs?.();
    return reply(state, '');
  }

  return new Elysia({ name: 'revintel/team-chat' }).post(TEAM_CHAT_ROUTE.path, ({ request }) =>
    receive(request, deps.states.get(request)!),
  );
}
