// POST /api/webhooks/team-chat (docs/chat-platforms.md "Slack"): Slack's Events API and
// interactivity on one URL. The raw bytes are verified first (`X-Slack-Signature`, v0 HMAC-SHA256
// of `v0:{timestamp}:{raw body}` with SLACK_SIGNING_SECRET or _PREVIOUS, in constant time, the
// timestamp within 300 s), else 401 with `X-Slack-No-Retry: 1`. Every event is stored once, by
// Slack's ids, in the transaction of its effects: a redelivery finds it and does nothing more. A
// click is decided before the answer (one guarded UPDATE); whoever may not decide, a stale nonce, an
// expired or decided action: nothing changes and the clicker is told why, privately.
import { sql } from 'drizzle-orm';
import { t } from 'elysia';
import type { Config } from '../../config.ts';
import { type Database, type Db, rowsOf } from '../../db/client.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { decideFromChat } from '../chat/decisions.ts';
import type { Decision } from '../chat/port.ts';
import { settle, storeOnce } from '../chat/inbound.ts';
import type { WebhookBudgets } from '../signed-webhooks/budgets.ts';
import { signedWebhook, signedWebhookModule } from '../signed-webhooks/index.ts';
import { isJsonObject } from '../signed-webhooks/payload.ts';
import { freshTimestamp, hmacSha256Matches } from '../signed-webhooks/verification.ts';
import { parseStorableJson } from '../../db/storable.ts';
import { runCommand } from '../chat/commands.ts';
import { type SlackInstallation, slackInstallationByTeam } from '../chat/installations.ts';
import { BUTTONS } from './messages.ts';
import { type SlackBlockActions, type SlackEventCallback, type SlackPayload, slackPayloadOf, slackTeamOf } from './payloads.ts';
import { queueSlackEphemeral, queueSlackReply, responseUrlAllowed } from './sender.ts';
import type { ActionSettings } from '../agent-actions/settings.ts';

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
  const stale = freshTimestamp(timestamp, nowMs, SLACK_REPLAY_WINDOW_S, 'X-Slack-Request-Timestamp');
  if (stale) return { ok: false, reason: stale };
  if (secrets.length === 0) return { ok: false, reason: 'SLACK_SIGNING_SECRET is not configured' };
  const given = /^v0=([0-9a-f]{64})$/.exec(signature.trim());
  if (!given) return { ok: false, reason: 'X-Slack-Signature is not v0=<hex HMAC-SHA256>' };
  return hmacSha256Matches(secrets, [`v0:${timestamp}:`, rawBody], Buffer.from(given[1]!, 'hex'))
    ? { ok: true }
    : { ok: false, reason: 'the signature does not match' };
}

const noRetry = { 'x-slack-no-retry': '1' };
const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The request's body: JSON (Events API) or the form field `payload` (interactivity), an object. */
function bodyOf(bytes: Uint8Array, contentType: string | null): Record<string, unknown> {
  try {
    const text = fatalUtf8.decode(bytes);
    const raw = (contentType ?? '').includes('application/x-www-form-urlencoded') ? new URLSearchParams(text).get('payload') : text;
    if (raw === null) throw new Error('no payload field');
    // Cleaned of what PostgreSQL cannot store (NUL, lone surrogates): Slack sends the same bytes on
    // every retry, so refusing them would lose the event.
    const parsed = parseStorableJson(raw);
    if (!isJsonObject(parsed)) throw new Error('not an object');
    return parsed;
  } catch {
    throw new AppError('malformed_json', 'The body is not a Slack event (JSON) nor an interaction (form field "payload" holding JSON)');
  }
}

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

/** A button click, decided in `db`'s transaction. */
async function handleClick(
  db: Db,
  installation: SlackInstallation,
  payload: typeof SlackBlockActions.static,
  now: Date,
  settings: ActionSettings,
): Promise<void> {
  const button = payload.actions?.[0];
  const dedupeKey = `block_actions:${button?.action_id ?? ''}:${payload.trigger_id ?? button?.action_ts ?? ''}`;
  const eventId = await storeOnce(db, {
    platform: 'slack',
    dedupeKey,
    installation,
    type: 'block_actions',
    outcome: 'processed',
    body: payload,
  });
  if (!eventId) return;
  const user = payload.user?.id ?? '';
  // Kept only on Slack's host (or the configured API's): the outbox then answers through it.
  const responseUrl = responseUrlAllowed(payload.response_url, settings.slackApiBase) ? payload.response_url : null;
  const channel = payload.container?.channel_id ?? payload.channel?.id ?? null;
  const orgId = installation.org_id;
  const deny = async (why: string) => {
    await settle(db, eventId, 'denied', why);
    if (user) await queueSlackEphemeral(db, { orgId, installationId: installation.id, channel, user, text: why, responseUrl });
  };
  const decision = DECISIONS[button?.action_id ?? ''];
  if (!button || !decision) return void (await settle(db, eventId, 'ignored', `not one of our buttons (${button?.action_id ?? 'none'})`));
  const [actionId = '', nonce = ''] = (button.value ?? '').split(':');
  const csm = await csmBySlackUser(db, orgId, user);
  const outcome = await decideFromChat(
    db,
    {
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
    },
    settings,
  );
  if (!outcome.ok) return deny(outcome.why);
  await settle(db, eventId, 'processed', `${decision} by ${outcome.csmId}`);
}

/** An Events API callback in `db`'s transaction: app mentions answer commands in their thread. */
async function handleEvent(db: Db, installation: SlackInstallation, envelope: typeof SlackEventCallback.static): Promise<void> {
  const event = envelope.event ?? {};
  const type = `event_callback.${event.type ?? 'unknown'}`;
  const dedupeKey = `event:${envelope.event_id ?? `${event.type}:${event.event_ts ?? event.ts}`}`;
  const eventId = await storeOnce(db, { platform: 'slack', dedupeKey, installation, type, outcome: 'processed', body: envelope });
  if (!eventId) return;
  if (event.type !== 'app_mention') return void (await settle(db, eventId, 'ignored', `event type ${event.type} is not handled`));
  const botUser = envelope.authorizations?.find((a) => a.is_bot)?.user_id;
  if (event.bot_id || event.subtype === 'bot_message' || (botUser && event.user === botUser))
    return void (await settle(db, eventId, 'ignored', "the bot's own message"));
  const user = event.user ?? '';
  const channel = event.channel ?? '';
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
  const text = await runCommand(db, installation.org_id, event.text ?? '', csm);
  await queueSlackReply(db, {
    orgId: installation.org_id,
    installationId: installation.id,
    channel,
    threadTs: event.thread_ts ?? event.ts ?? '',
    text,
  });
  await settle(db, eventId, 'processed', null);
}

/** The workspace an unproven body names, for the budget of refused signatures. */
function claimedTeam(bytes: Uint8Array, contentType: string | null): string | null {
  try {
    const body = bodyOf(bytes, contentType);
    const team = isJsonObject(body.team) ? body.team.id : body.team_id;
    return typeof team === 'string' && team ? `slack:${team}` : null;
  } catch {
    return null;
  }
}

export interface TeamChatDeps {
  database: Database;
  states: RequestStates;
  budgets: WebhookBudgets;
  config: Pick<
    Config,
    'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook' | 'publicUrl' | 'slackSigningSecret' | 'slackSigningSecretPrevious'
  >;
  settings: ActionSettings;
  clock?: () => number;
  wakeJobs?: () => void;
}

/** The id of an event stored from a workspace nobody installed, or of a kind we do not handle. */
const eventKeyOf = (payload: { event_id?: string; trigger_id?: string }) => payload.event_id ?? payload.trigger_id ?? newId('che');

export function teamChatModule(deps: TeamChatDeps) {
  const secrets = [deps.config.slackSigningSecret, deps.config.slackSigningSecretPrevious].filter((s): s is string => !!s);
  const { db } = deps.database;
  const inTransaction = <T>(work: (tx: Db) => Promise<T>) => db.transaction((tx) => work(tx));
  const empty = { body: '' };

  const receiver = signedWebhook<SlackInstallation, SlackPayload>(
    {
      route: TEAM_CHAT_ROUTE,
      verify: (delivery, _, now) => verifySlackSignature(delivery.rawBody, delivery.headers, secrets, now),
      refusal: (reason) => new AppError('unauthorized', `Invalid Slack signature: ${reason}`, noRetry),
      claimed: (delivery) => claimedTeam(delivery.rawBody, delivery.headers.get('content-type')),
      parse: (delivery) => slackPayloadOf(bodyOf(delivery.rawBody, delivery.headers.get('content-type'))),
      async senders(event) {
        if (event.kind === 'url_verification') return [];
        const teamId = slackTeamOf(event.payload);
        const installation = teamId ? await slackInstallationByTeam(db, teamId) : null;
        return installation ? [installation] : [];
      },
      async handle(event, { senders: [installation], now }) {
        if (event.kind === 'url_verification') return { body: JSON.stringify({ challenge: event.payload.challenge ?? '' }) };
        if (!installation) {
          const teamId = slackTeamOf(event.payload);
          await storeOnce(db, {
            platform: 'slack',
            dedupeKey: `unknown:${teamId}:${eventKeyOf(event.payload)}`,
            installation: null,
            type: event.payload.type ?? 'unknown',
            outcome: 'ignored',
            detail: `workspace ${teamId || '(none)'} is not installed`,
            body: null,
          });
          return empty;
        }
        if (event.kind === 'block_actions')
          await inTransaction((tx) => handleClick(tx, installation, event.payload, new Date(now), deps.settings));
        else if (event.kind === 'event_callback') await inTransaction((tx) => handleEvent(tx, installation, event.payload));
        else
          await storeOnce(db, {
            platform: 'slack',
            dedupeKey: `other:${event.payload.type}:${eventKeyOf(event.payload)}`,
            installation,
            type: event.payload.type ?? 'unknown',
            outcome: 'ignored',
            detail: 'type not handled',
            body: event.payload,
          });
        deps.wakeJobs?.();
        return empty;
      },
      // Nothing was stored, nothing decided. Slack is told not to retry; the CSM clicks again.
      unavailable: { message: 'The click could not be recorded: try again', headers: noRetry },
    },
    { budgets: deps.budgets, config: deps.config, clock: deps.clock },
  );
  return signedWebhookModule('revintel/team-chat', receiver, deps.states);
}
