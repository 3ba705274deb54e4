// POST /api/webhooks/workspace-chat (docs/chat-platforms.md "Google Chat"): Google Chat's
// interaction events, in both formats — the Chat API's (`type`: CARD_CLICKED, MESSAGE,
// ADDED_TO_SPACE…) and a Workspace add-on's (`chat.buttonClickedPayload`, `chat.messagePayload`…).
// Every request's bearer token is verified (verify.ts), the add-on's `systemIdToken` standing in
// for a missing header; the signer expected depends on the format. The token does not sign the
// body, so the event's `eventTime` must be within 300 s and each event is stored once (by its
// message, user and time) before its effects: a replay acts no more. A click decides at once and
// the answer updates the card in the request's own format; who may not decide, or clicks late, is
// told privately. Messages to the app are the Slack mentions' commands, answered in the reply.
import { Elysia, t } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database, Db } from '../../db/client.ts';
import { readBodyLimited } from '../../lib/body.ts';
import { AppError } from '../../lib/errors.ts';
import { memoryRateLimiter, rateLimitHeaders, type Limits } from '../../lib/rate-limiter.ts';
import { bodyLimit, type RouteDeclaration } from '../../lib/routes.ts';
import { isDatabaseDown } from '../../plugins/errors.ts';
import type { RefusedSignatures } from '../webhooks/refused.ts';
import { parseStorableJson } from '../../db/storable.ts';
import { bearerToken } from '../../plugins/bearer-token.ts';
import type { RequestState, RequestStates } from '../../plugins/request-state.ts';
import { csmByEmail, decideFromChat } from '../agent-actions/chat-decisions.ts';
import type { Decision } from '../agent-actions/service.ts';
import { HELP_TEXT, runCommand } from '../slack/commands.ts';
import { actionFacts } from '../slack/sender.ts';
import { settle, storeOnce } from '../slack/webhook.ts';
import { decidedCard, GCHAT_FUNCTIONS } from './cards.ts';
import { googleChatInstallationBySpace, type GoogleChatInstallation } from './installations.ts';
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

type Format = 'chat' | 'addon';

/** An interaction event, whichever format it came in. */
export interface ChatEvent {
  format: Format;
  kind: 'click' | 'message' | 'added' | 'other';
  /** What is stored as its type: CARD_CLICKED…, or the add-on's payload name. */
  type: string;
  eventTime: string | null;
  space: string | null;
  user: { name: string; email: string; type: string };
  messageName: string | null;
  text: string;
  fn: string | null;
  parameters: Record<string, string>;
  /** The body as it came. */
  raw: Record<string, any>;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const obj = (value: unknown): Record<string, any> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, any>) : {};

/** A button's parameters: the add-on's and `common`'s map, else the Chat API's `[{key, value}]`. */
function parametersOf(map: unknown, list: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(obj(map))) if (typeof value === 'string') out[key] = value;
  if (Object.keys(out).length > 0) return out;
  for (const entry of Array.isArray(list) ? list : [])
    if (typeof entry?.key === 'string' && typeof entry?.value === 'string') out[entry.key] = entry.value;
  return out;
}

/** The body as a JSON object, or null. */
function jsonObject(bytes: Uint8Array): Record<string, any> | null {
  try {
    // Cleaned of what PostgreSQL cannot store (NUL, lone surrogates), or the event would fail for ever.
    const parsed = parseStorableJson(fatalUtf8.decode(bytes)) as Record<string, any> | null;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** An add-on event has no `type` and a `chat` object; anything else is read as the Chat API's. */
const formatOf = (body: Record<string, any> | null): Format =>
  body && body.type === undefined && body.chat && typeof body.chat === 'object' ? 'addon' : 'chat';

/** Reads either format; a body that is neither is a 400 naming what is wrong. */
export function parseChatEvent(body: Record<string, any> | null): ChatEvent {
  if (!body) throw new AppError('malformed_json', 'The body is not a Google Chat event (a JSON object)');
  const userOf = (user: unknown) => ({ name: str(obj(user).name), email: str(obj(user).email).toLowerCase(), type: str(obj(user).type) });
  if (formatOf(body) === 'addon') {
    const chat = obj(body.chat);
    const common = obj(body.commonEventObject);
    const [payloadName, kind] = chat.buttonClickedPayload
      ? ['buttonClickedPayload', 'click']
      : chat.messagePayload
        ? ['messagePayload', 'message']
        : chat.addedToSpacePayload
          ? ['addedToSpacePayload', 'added']
          : [Object.keys(chat).find((k) => k.endsWith('Payload')) ?? 'unknown', 'other'];
    const payload = obj(chat[payloadName]);
    const message = obj(payload.message);
    return {
      format: 'addon',
      kind: kind as ChatEvent['kind'],
      type: `addon.${payloadName}`,
      eventTime: str(chat.eventTime) || null,
      space: str(obj(payload.space).name) || str(obj(message.space).name) || null,
      user: userOf(chat.user),
      messageName: str(message.name) || null,
      text: str(message.argumentText) || str(message.text),
      fn: str(common.invokedFunction) || null,
      parameters: parametersOf(common.parameters, null),
      raw: body,
    };
  }
  if (typeof body.type !== 'string')
    throw new AppError(
      'validation_failed',
      'Invalid field "type": a Chat API event names its type (CARD_CLICKED, MESSAGE…); an add-on event carries "chat"',
    );
  const message = obj(body.message);
  const common = obj(body.common);
  const action = obj(body.action);
  const kinds: Record<string, ChatEvent['kind']> = { CARD_CLICKED: 'click', MESSAGE: 'message', ADDED_TO_SPACE: 'added' };
  return {
    format: 'chat',
    kind: kinds[body.type] ?? 'other',
    type: body.type.slice(0, 60),
    eventTime: str(body.eventTime) || null,
    space: str(obj(body.space).name) || str(obj(message.space).name) || null,
    user: userOf(body.user),
    messageName: str(message.name) || null,
    text: str(message.argumentText) || str(message.text),
    fn: str(common.invokedFunction) || str(action.actionMethodName) || null,
    parameters: parametersOf(common.parameters, action.parameters),
    raw: body,
  };
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
function storable(raw: Record<string, any>): Record<string, unknown> {
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

async function handleClick(db: Db, installation: GoogleChatInstallation, event: ChatEvent, now: Date): Promise<unknown> {
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
  const outcome = await decideFromChat(db, {
    orgId,
    actionId,
    nonce: event.parameters.nonce ?? '',
    platform: 'google_chat',
    decision,
    csm,
    actor: `google_chat:${event.user.email || event.user.name}`,
    now,
    place: 'space',
  });
  if (!outcome.ok) {
    await settle(db, eventId, 'denied', outcome.why);
    return privately(event.format, event.user.name, outcome.why);
  }
  await settle(db, eventId, 'processed', `${decision} by ${csm!.id}`);
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
  /** Counts a refused token and throws what the request ends with (modules/webhooks/refused.ts). */
  refused: RefusedSignatures;
  config: Pick<
    Config,
    | 'bodyLimitApi'
    | 'bodyLimitImport'
    | 'bodyLimitWebhook'
    | 'publicUrl'
    | 'webhookLimitPerMinute'
    | 'webhookLimitPerDay'
    | 'googleJwksUrl'
    | 'googleChatCertsUrl'
    | 'gchatAudienceMode'
    | 'gchatAudience'
    | 'gchatProjectNumber'
  >;
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
function claimedSpace(body: Record<string, any> | null): string | null {
  try {
    const space = parseChatEvent(body).space;
    return space ? `google_chat:${space}` : null;
  } catch {
    return null;
  }
}

const invalidToken = (reason: string) =>
  new AppError('unauthorized', `Invalid Google Chat request: ${reason}`, { 'www-authenticate': 'Bearer error="invalid_token"' });

export function workspaceChatModule(deps: WorkspaceChatDeps) {
  const limit = bodyLimit(WORKSPACE_CHAT_ROUTE.body, deps.config);
  const clock = deps.clock ?? Date.now;
  const keys = { jwks: googleKeySet(deps.config.googleJwksUrl, 'jwks'), x509: googleKeySet(deps.config.googleChatCertsUrl, 'x509') };
  const audience = gchatAudienceOf(deps.config);
  const mode = deps.config.gchatAudienceMode;
  const projectNumber = deps.config.gchatProjectNumber;
  // A space's budget is a flood guard (every tenant's events come from Google's few addresses).
  const limiter = memoryRateLimiter();
  const limits: Limits = { perMinute: deps.config.webhookLimitPerMinute, perDay: deps.config.webhookLimitPerDay };
  const { db } = deps.database;
  const inTransaction = <T>(work: (tx: Db) => Promise<T>) => db.transaction((tx) => work(tx as unknown as Db));

  const answer = (state: RequestState, body: unknown) =>
    new Response(JSON.stringify(body), {
      headers: { 'content-type': 'application/json;charset=utf-8', ...state.headers, 'x-request-id': state.id },
    });

  /** Throws the 401 (or 503) a request that does not prove itself ends with: before its body is
   * judged, so a stranger learns nothing from it. */
  async function authenticate(request: Request, body: Record<string, any> | null, now: number): Promise<void> {
    const format = formatOf(body);
    const token = bearerToken(request.headers.get('authorization')) ?? (str(obj(body?.authorizationEventObject).systemIdToken) || null);
    if (!token) throw invalidToken("no bearer token (Authorization header, or the add-on's systemIdToken)");
    if (!audience) throw invalidToken('GCHAT_AUDIENCE (or PUBLIC_URL) is not configured');
    const signer = format === 'chat' ? CHAT_ISSUER : projectNumber ? addOnSigner(projectNumber) : null;
    if (!signer) throw invalidToken('GCHAT_PROJECT_NUMBER is not configured: add-on events cannot be verified');
    try {
      await verifyChatToken(token, keys, { mode, audience, signer, now });
    } catch (error) {
      if (error instanceof TokenRejected) throw invalidToken(error.message);
      if (error instanceof KeysUnavailable)
        throw new AppError(
          'upstream_unavailable',
          `Google's signing keys could not be fetched to verify the request; try again (${error.message})`,
          { 'retry-after': '30' },
        );
      throw error;
    }
  }

  /** The token does not sign the body: an event is acted on only near its own time. */
  function checkEventTime(event: ChatEvent, now: number): void {
    if (!event.eventTime)
      throw new AppError(
        'validation_failed',
        `Invalid field "${event.format === 'chat' ? 'eventTime' : 'chat.eventTime'}": the event's time is required`,
      );
    const at = Date.parse(event.eventTime);
    if (!Number.isFinite(at))
      throw new AppError(
        'validation_failed',
        `Invalid field "${event.format === 'chat' ? 'eventTime' : 'chat.eventTime'}": not an RFC 3339 time`,
      );
    if (Math.abs(now - at) > GCHAT_REPLAY_WINDOW_S * 1000)
      throw invalidToken(`the event's time is more than ${GCHAT_REPLAY_WINDOW_S} s from now`);
  }

  async function receive(request: Request, state: RequestState): Promise<Response> {
    const bytes = await readBodyLimited(request, limit);
    const json = jsonObject(bytes);
    const now = clock();
    try {
      await authenticate(request, json, now);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'unauthorized') throw error;
      return deps.refused(state, error, claimedSpace(json));
    }
    const event = parseChatEvent(json);
    checkEventTime(event, now);
    let body: unknown = {};
    try {
      const installation = event.space ? await googleChatInstallationBySpace(db, event.space) : null;
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
        return answer(
          state,
          event.kind === 'added' || event.kind === 'message'
            ? reply(event.format, hint)
            : event.kind === 'click'
              ? privately(event.format, event.user.name, hint)
              : {},
        );
      }
      const counted = limiter.consume(`installation:${installation.id}`, limits);
      const decision = counted instanceof Promise ? await counted : counted;
      state.headers = rateLimitHeaders(decision);
      if (!decision.allowed)
        throw new AppError('rate_limited', `Rate limit exceeded for this space; retry in ${decision.retryAfter} s`, {
          'retry-after': String(decision.retryAfter),
        });
      if (event.kind === 'click') body = await inTransaction((tx) => handleClick(tx, installation, event, new Date(now)));
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
    } catch (error) {
      // The database could not be reached: nothing was stored, nothing decided; the CSM clicks
      // again. Anything else is a fault of ours: 500, logged.
      if (isDatabaseDown(error))
        throw new AppError('database_unavailable', 'The event could not be recorded: try again', { 'retry-after': '5' }, { cause: error });
      throw error;
    }
    deps.wakeJobs?.();
    return answer(state, body);
  }

  return new Elysia({ name: 'revintel/workspace-chat' }).post(WORKSPACE_CHAT_ROUTE.path, ({ request }) =>
    receive(request, deps.states.get(request)!),
  );
}
