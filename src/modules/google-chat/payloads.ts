// What Google Chat sends to the workspace-chat webhook, in its two formats: the Chat API's events
// (`type`: CARD_CLICKED, MESSAGE, ADDED_TO_SPACE…) and a Workspace add-on's (`chat` holding one
// `…Payload`). Only the fields we read are named; the rest pass through and are stored.
import { t } from 'elysia';
import { AppError } from '../../lib/errors.ts';
import { isJsonObject, type JsonObject, payloadCheck } from '../signed-webhooks/payload.ts';

const text = t.Optional(t.String());
const named = t.Optional(t.Object({ name: text }));
const User = t.Optional(t.Object({ name: text, email: text, type: text }));
const Message = t.Optional(t.Object({ name: text, text, argumentText: text, space: named }));
/** A button's parameters as a map (add-ons, and the Chat API's `common`). */
const ParameterMap = t.Optional(t.Record(t.String(), t.Unknown()));

export const ChatApiEvent = t.Object({
  type: t.String(),
  eventTime: text,
  space: named,
  user: User,
  message: Message,
  common: t.Optional(t.Object({ invokedFunction: text, parameters: ParameterMap })),
  action: t.Optional(t.Object({ actionMethodName: text, parameters: t.Optional(t.Array(t.Object({ key: text, value: t.Unknown() }))) })),
});

const AddOnPayload = t.Optional(t.Object({ space: named, message: Message }));

export const AddOnEvent = t.Object({
  chat: t.Object({
    eventTime: text,
    user: User,
    buttonClickedPayload: AddOnPayload,
    messagePayload: AddOnPayload,
    addedToSpacePayload: AddOnPayload,
  }),
  commonEventObject: t.Optional(t.Object({ invokedFunction: text, parameters: ParameterMap })),
  authorizationEventObject: t.Optional(t.Object({ systemIdToken: text })),
});

export type Format = 'chat' | 'addon';

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
  raw: JsonObject;
}

const checkChatApi = payloadCheck(ChatApiEvent, 'a Google Chat API event');
const checkAddOn = payloadCheck(AddOnEvent, 'a Google Workspace add-on event');

/** An add-on event has no `type` and a `chat` object; anything else is read as the Chat API's. */
export const formatOf = (body: JsonObject | null): Format =>
  body && body.type === undefined && isJsonObject(body.chat) ? 'addon' : 'chat';

/** A button's parameters: the map's string values, else the Chat API's `[{key, value}]`. */
function parametersOf(
  map: Record<string, unknown> | undefined,
  list: { key?: string; value: unknown }[] | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(map ?? {})) if (typeof value === 'string') out[key] = value;
  if (Object.keys(out).length > 0) return out;
  for (const entry of list ?? []) if (entry.key !== undefined && typeof entry.value === 'string') out[entry.key] = entry.value;
  return out;
}

const userOf = (user: { name?: string; email?: string; type?: string } | undefined) => ({
  name: user?.name ?? '',
  email: (user?.email ?? '').toLowerCase(),
  type: user?.type ?? '',
});

const ADD_ON_KINDS = [
  ['buttonClickedPayload', 'click'],
  ['messagePayload', 'message'],
  ['addedToSpacePayload', 'added'],
] as const;

/** Reads either format; a body that is neither is a 400 naming what is wrong. */
export function parseChatEvent(body: JsonObject | null): ChatEvent {
  if (!body) throw new AppError('malformed_json', 'The body is not a Google Chat event (a JSON object)');
  if (formatOf(body) === 'addon') {
    const event = checkAddOn(body);
    const { chat } = event;
    const known = ADD_ON_KINDS.find(([name]) => chat[name] !== undefined);
    const payloadName = known?.[0] ?? Object.keys(chat).find((k) => k.endsWith('Payload')) ?? 'unknown';
    const payload = known ? chat[known[0]] : undefined;
    const message = payload?.message;
    return {
      format: 'addon',
      kind: known?.[1] ?? 'other',
      type: `addon.${payloadName}`,
      eventTime: chat.eventTime || null,
      space: payload?.space?.name || message?.space?.name || null,
      user: userOf(chat.user),
      messageName: message?.name || null,
      text: message?.argumentText || message?.text || '',
      fn: event.commonEventObject?.invokedFunction || null,
      parameters: parametersOf(event.commonEventObject?.parameters, undefined),
      raw: body,
    };
  }
  if (typeof body.type !== 'string')
    throw new AppError(
      'validation_failed',
      'Invalid field "type": a Chat API event names its type (CARD_CLICKED, MESSAGE…); an add-on event carries "chat"',
    );
  const event = checkChatApi(body);
  const message = event.message;
  const kinds: Record<string, ChatEvent['kind']> = { CARD_CLICKED: 'click', MESSAGE: 'message', ADDED_TO_SPACE: 'added' };
  return {
    format: 'chat',
    kind: kinds[event.type] ?? 'other',
    type: event.type.slice(0, 60),
    eventTime: event.eventTime || null,
    space: event.space?.name || message?.space?.name || null,
    user: userOf(event.user),
    messageName: message?.name || null,
    text: message?.argumentText || message?.text || '',
    fn: event.common?.invokedFunction || event.action?.actionMethodName || null,
    parameters: parametersOf(event.common?.parameters, event.action?.parameters),
    raw: body,
  };
}
