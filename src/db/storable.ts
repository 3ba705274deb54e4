// What PostgreSQL can store of a platform's text. Its text cannot hold U+0000 (jsonb refuses the
// escape: 22P05), and a lone UTF-16 surrogate has no UTF-8 form (22P02 in jsonb). Platforms send
// both (`"id":"N2\u0000"`, `"subject":"\ud800"`), and retrying never helps: so the worker takes
// every string of a payload through storableText before it reads a ticket from it.

/** `text` without NUL, each lone surrogate replaced by U+FFFD. The same input always gives the same
 * output, so a re-delivered id that differs only by a NUL still upserts the same ticket. */
export const storableText = (text: string): string => (text.includes('\0') ? text.replaceAll('\0', '') : text).toWellFormed();

// A stored body is PostgreSQL text (valid UTF-8, no NUL): either can only come from a JSON escape,
// so a body without one (nearly all) is parsed without visiting its strings.
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/i;

/** A stored body, parsed, with every string value storable (keys are only ever quoted in errors,
 * which go through storableText when written). Throws as JSON.parse does. */
export const parsePayload = (body: string): unknown =>
  UNSTORABLE_ESCAPE.test(body)
    ? JSON.parse(body, (_key, value: unknown) => (typeof value === 'string' ? storableText(value) : value))
    : JSON.parse(body);

/** `value` with every string and every key storable: what a jsonb column takes whatever a platform
 * sent (a key with a NUL fails the insert as surely as a value with one). */
export const storableJson = (value: unknown): unknown =>
  typeof value === 'string'
    ? storableText(value)
    : Array.isArray(value)
      ? value.map(storableJson)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [storableText(key), storableJson(inner)]))
        : value;

/** JSON text parsed into what a jsonb column can store (see storableJson); the walk only when the
 * text holds an escape that needs it. Throws as JSON.parse does. */
export const parseStorableJson = (text: string): unknown =>
  UNSTORABLE_ESCAPE.test(text) ? storableJson(JSON.parse(text)) : JSON.parse(text);
