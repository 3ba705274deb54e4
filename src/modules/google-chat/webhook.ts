// POST /api/webhooks/workspace-chat (docs/chat-platforms.md "Google Chat"): Google Chat's
// interaction events, in both formats — the Chat API's (`type`: CARD_CLICKED, MESSAGE,
// ADDED_TO_SPACE…) and a Workspace add-on's (`chat.buttonClickedPayload`, `chat.messagePayload`…).
// Every request's bearer token is verified (verify.ts), the add-on's `systemIdToken` standing in
// for a missing header; the signer expected depends on the format. The token does not sign the
// body, so the event's `eventTime` must be within 300 s and each event is stored once (by its
// message, user and time) before its effects: a replay acts no more. A click decides at once and
// the answer updates the card in the request's own format; who may not decide, or clicks late, is
// told privately. Messages to the app are the Slack mentions' commands, answered in the reply.
import { t } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database, Db } from '../../db/client.ts';
import { AppError } from '../../lib/errors.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { bearerToken } from '../../plugins/bearer-token.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { csmByEmail, decideFromChat } from '../chat/decisions.ts';
import type { Decision } from '../chat/port.ts';
import { settle, storeOnce } from '../chat/inbound.ts';
import type { WebhookBudgets } from '../signed-webhooks/budgets.ts';
import { signedWebhook, signedWebhookModule } from '../signed-webhooks/index.ts';
import { isJsonObject, type JsonObject } from '../signed-webhooks/payload.ts';
import type { Verdict } from '../signed-webhooks/verification.ts';
import { actionFacts } from '../chat/facts.ts';
import { HELP_TEXT, runCommand } from '../chat/commands.ts';
import { parseStorableJson } from '../../db/storable.ts';
import { decidedCard, GCHAT_FUNCTIONS } from './cards.ts';
import { type GoogleChatInstallation, googleChatInstallationBySpace } from './installations.ts';
import { type ChatEvent, type Format, formatOf, parseChatEvent } from './payloads.ts';
import type { DecisionSettings } from '../agent-actions/who-decides.ts';
import { addOnSigner, CHAT_ISSUER, googleKeySet, KeysUnavailable, TokenRejected, verifyChatToken } from './verify.ts';

export const WORKSPACE_CHAT_PATH = '/api/webhooks/workspace-chat';

export const WORKSPACE_CHAT_ROUTE = {
  method: 'POST',
  path: WORKSPACE_CHAT_PATH,
  auth: 'platform-signature',
  verifiedBy: 'google-chat',
  counted: 'installation',
  body: 'webhook',
  response: t.Object({}, { additionalProperties: true }),
  envelope: false,
  summary: "Google Chat's events and card clicks (a Google-signed bearer token, Chat API or add-on format)",
} as const satisfies RouteDeclaration;

export const GCHAT_REPLAY_WINDOW_S = 300;

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as a JSON object, or null. */
function jsonObject(bytes: Uint8Array): JsonObject | null {
  try {
    // Cleaned of what PostgreSQL cannot store (NUL, lone surrogates), or the event would fail for ever.
    const parsed = parseStorableJson(fatalUtf8.decode(bytes));
    return isJsonObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

// --- answers, in the request's own format ----------------------------------------------------------

type Card = ReturnType<typeof decidedCard>;

const chatDataAction = (action: Record<string, unknown>) => ({ hostAppDataAction: { chatDataAction: action } });

/** The clicked card, replaced. */
const updateCard = (format: Format, card: Card) =>
  format === 'chat' ? { actionResponse: { type: 'UPDATE_MESSAGE' }, ...card } : chatDataAction({ updateMessageAction: { message: card } });

/** A message only `user` sees. */
const privately = (format: Format, user: string, text: string) => {
  const message = { text, ...(user ? { privateMessageViewer: { name: user } } : {}) };
  return format === 'chat' ? { actionResponse: { type: 'NEW_MESSAGE' }, ...message } : chatDataAction({ createMessageAction: { message } });
};

/** A reply in the conversation (an add-on never gets a bare `{text}`: Google refuses it). */
const reply = (format: Format, text: string) =>
  format === 'chat' ? { text } : chatDataAction({ createMessageAction: { message: { text } } });

// --- events ----------------------------------------------------------------------------------------

const DECISIONS: Record<string, Decision> = {
  approve: 'approve',
  reject: 'reject',
  snooze: 'snooze',
  [GCHAT_FUNCTIONS.approve]: 'approve',
  [GCHAT_FUNCTIONS.reject]: 'reject',
  [GCHAT_FUNCTIONS.snooze]: 'snooze',
};

/** The event as stored: without the add-on's ID token and the legacy verification token. */
function storable(raw: JsonObject): JsonObject {
  const { authorizationEventObject: _, token: __, ...rest } = raw;
  return rest;
}

function dedupeKey(event: ChatEvent): string {
  const who = event.user.name || event.user.email;
  if (event.kind === 'message' && event.messageName) return `message:${event.messageName}`;
  if (event.kind === 'click')
    return `click:${event.messageName ?? event.space}:${who}:${event.eventTime}:${event.parameters.decision ?? event.fn ?? ''}`;
  return `${event.type}:${event.space}:${who}:${event.eventTime}`;
}

async function handleClick(
  db: Db,
  installation: GoogleChatInstallation,
  event: ChatEvent,
  now: Date,
  settings: DecisionSettings,
): Promise<unknown> {
  const eventId = await storeOnce(db, {
    platform: 'google_chat',
    dedupeKey: dedupeKey(event),
    installation,
    type: event.type,
    outcome: 'processed',
    body: storable(event.raw),
  });
  if (!eventId) return {};
  const decision = DECISIONS[event.parameters.decision ?? ''] ?? DECISIONS[event.fn ?? ''];
  if (!decision) {
    await settle(db, eventId, 'ignored', `not one of our buttons (${(event.fn ?? 'none').slice(0, 100)})`);
    return {};
  }
  const orgId = installation.org_id;
  const actionId = event.parameters.action_id ?? '';
  const csm = event.user.email ? await csmByEmail(db, orgId, event.user.email) : null;
  const outcome = await decideFromChat(
    db,
    {
      orgId,
      actionId,
      nonce: event.parameters.nonce ?? '',
      platform: 'google_chat',
      decision,
      csm,
      actor: `google_chat:${event.user.email || event.user.name}`,
      now,
      place: 'space',
    },
    settings,
  );
  if (!outcome.ok) {
    await settle(db, eventId, 'denied', outcome.why);
    return privately(event.format, event.user.name, outcome.why);
  }
  await settle(db, eventId, 'processed', `${decision} by ${outcome.csmId}`);
  const facts = await actionFacts(db, orgId, actionId);
  return updateCard(event.format, decidedCard(facts!));
}

async function handleMessage(db: Db, installation: GoogleChatInstallation, event: ChatEvent): Promise<unknown> {
  const eventId = await storeOnce(db, {
    platform: 'google_chat',
    dedupeKey: dedupeKey(event),
    installation,
    type: event.type,
    outcome: 'processed',
    body: storable(event.raw),
  });
  if (!eventId) return {};
  if (event.user.type === 'BOT') {
    await settle(db, eventId, 'ignored', "a bot's message");
    return {};
  }
  const csm = event.user.email ? await csmByEmail(db, installation.org_id, event.user.email) : null;
  if (!csm) {
    await settle(db, eventId, 'denied', 'not a CSM of this organisation');
    return privately(event.format, event.user.name, 'Sorry, only CSMs of this organisation may ask me: not allowed.');
  }
  const text = await runCommand(db, installation.org_id, event.text, csm);
  await settle(db, eventId, 'processed', null);
  return reply(event.format, text);
}

// --- the route -------------------------------------------------------------------------------------

export interface WorkspaceChatDeps {
  database: Database;
  states: RequestStates;
  budgets: WebhookBudgets;
  config: Pick<
    Config,
    | 'bodyLimitApi'
    | 'bodyLimitImport'
    | 'bodyLimitWebhook'
    | 'publicUrl'
    | 'googleJwksUrl'
    | 'googleChatCertsUrl'
    | 'gchatAudienceMode'
    | 'gchatAudience'
    | 'gchatProjectNumber'
  >;
  settings: DecisionSettings;
  clock?: () => number;
  wakeJobs?: () => void;
}

/** The audience Google's tokens must name: GCHAT_AUDIENCE, else (endpoint URL mode) PUBLIC_URL and
 * this route's path; null when neither is set (every request is then refused). */
export function gchatAudienceOf(config: WorkspaceChatDeps['config']): string | null {
  if (config.gchatAudience) return config.gchatAudience;
  if (config.gchatAudienceMode === 'endpoint_url' && config.publicUrl)
    return `${config.publicUrl.replace(/\/+$/, '')}${WORKSPACE_CHAT_PATH}`;
  return null;
}

/** The space an unproven body names, for the budget of refused tokens. */
function claimedSpace(body: JsonObject | null): string | null {
  try {
    const space = parseChatEvent(body).space;
    return space ? `google_chat:${space}` : null;
  } catch {
    return null;
  }
}

const invalidToken = (reason: string) =>
  new AppError('unauthorized', `Invalid Google Chat request: ${reason}`, { 'www-authenticate': 'Bearer error="invalid_token"' });

/** The add-on's ID token, when the request carries one in its body instead of its header. */
function systemIdToken(body: JsonObject | null): string | null {
  const authorization = body?.authorizationEventObject;
  const token = isJsonObject(authorization) ? authorization.systemIdToken : null;
  return typeof token === 'string' && token ? token : null;
}

/** The token does not sign the body: an event is acted on only near its own time. */
function checkEventTime(event: ChatEvent, now: number): void {
  const field = event.format === 'chat' ? 'eventTime' : 'chat.eventTime';
  if (!event.eventTime) throw new AppError('validation_failed', `Invalid field "${field}": the event's time is required`);
  const at = Date.parse(event.eventTime);
  if (!Number.isFinite(at)) throw new AppError('validation_failed', `Invalid field "${field}": not an RFC 3339 time`);
  if (Math.abs(now - at) > GCHAT_REPLAY_WINDOW_S * 1000)
    throw invalidToken(`the event's time is more than ${GCHAT_REPLAY_WINDOW_S} s from now`);
}

export function workspaceChatModule(deps: WorkspaceChatDeps) {
  const keys = { jwks: googleKeySet(deps.config.googleJwksUrl, 'jwks'), x509: googleKeySet(deps.config.googleChatCertsUrl, 'x509') };
  const audience = gchatAudienceOf(deps.config);
  const mode = deps.config.gchatAudienceMode;
  const projectNumber = deps.config.gchatProjectNumber;
  const { db } = deps.database;
  const inTransaction = <T>(work: (tx: Db) => Promise<T>) => db.transaction((tx) => work(tx));
  const json = (body: unknown) => ({ body: JSON.stringify(body) });

  /** Google's bearer token (the add-on's systemIdToken standing in for a missing header), checked
   * before the body is judged, so a stranger learns nothing from it. Keys that cannot be fetched
   * are a 503, not a refusal. */
  async function verify(headers: Headers, body: JsonObject | null, now: number): Promise<Verdict> {
    const token = bearerToken(headers.get('authorization')) ?? systemIdToken(body);
    if (!token) return { ok: false, reason: "no bearer token (Authorization header, or the add-on's systemIdToken)" };
    if (!audience) return { ok: false, reason: 'GCHAT_AUDIENCE (or PUBLIC_URL) is not configured' };
    const signer = formatOf(body) === 'chat' ? CHAT_ISSUER : projectNumber ? addOnSigner(projectNumber) : null;
    if (!signer) return { ok: false, reason: 'GCHAT_PROJECT_NUMBER is not configured: add-on events cannot be verified' };
    try {
      await verifyChatToken(token, keys, { mode, audience, signer, now });
      return { ok: true };
    } catch (error) {
      if (error instanceof TokenRejected) return { ok: false, reason: error.message };
      if (error instanceof KeysUnavailable)
        throw new AppError(
          'upstream_unavailable',
          `Google's signing keys could not be fetched to verify the request; try again (${error.message})`,
          { 'retry-after': '30' },
        );
      throw error;
    }
  }

  const receiver = signedWebhook<GoogleChatInstallation, ChatEvent>(
    {
      route: WORKSPACE_CHAT_ROUTE,
      verify: (delivery, _, now) => verify(delivery.headers, jsonObject(delivery.rawBody), now),
      refusal: invalidToken,
      claimed: (delivery) => claimedSpace(jsonObject(delivery.rawBody)),
      parse(delivery, now) {
        const event = parseChatEvent(jsonObject(delivery.rawBody));
        checkEventTime(event, now);
        return event;
      },
      async senders(event) {
        const installation = event.space ? await googleChatInstallationBySpace(db, event.space) : null;
        return installation ? [installation] : [];
      },
      async handle(event, { senders: [installation], now }) {
        if (!installation) {
          await storeOnce(db, {
            platform: 'google_chat',
            dedupeKey: `unknown:${dedupeKey(event)}`,
            installation: null,
            type: event.type,
            outcome: 'ignored',
            detail: `space ${event.space ?? '(none)'} is not installed`,
            body: null,
          });
          const hint = `This space is not connected to an organisation yet: an operator runs \`revintel chat add google-chat --org ORG --space ${event.space ?? 'spaces/…'}\`.`;
          return json(
            event.kind === 'added' || event.kind === 'message'
              ? reply(event.format, hint)
              : event.kind === 'click'
                ? privately(event.format, event.user.name, hint)
                : {},
          );
        }
        let body: unknown = {};
        if (event.kind === 'click') body = await inTransaction((tx) => handleClick(tx, installation, event, new Date(now), deps.settings));
        else if (event.kind === 'message') body = await inTransaction((tx) => handleMessage(tx, installation, event));
        else {
          const stored = await storeOnce(db, {
            platform: 'google_chat',
            dedupeKey: dedupeKey(event),
            installation,
            type: event.type,
            outcome: event.kind === 'added' ? 'processed' : 'ignored',
            detail: event.kind === 'added' ? null : 'type not handled',
            body: storable(event.raw),
          });
          if (stored && event.kind === 'added') body = reply(event.format, `Thanks for adding me. ${HELP_TEXT}`);
        }
        deps.wakeJobs?.();
        return json(body);
      },
      // Nothing was stored, nothing decided; the CSM clicks again.
      unavailable: { message: 'The event could not be recorded: try again', headers: { 'retry-after': '5' } },
    },
    { budgets: deps.budgets, config: deps.config, clock: deps.clock },
  );
  return signedWebhookModule('revintel/workspace-chat', receiver, deps.states);
}
