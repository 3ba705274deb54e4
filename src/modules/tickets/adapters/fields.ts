// What every adapter needs to turn an untrusted webhook body into ticket fields: safe access to
// values of unknown shape, timestamps in the many forms platforms send, HTML to plain text, and the
// mapping of platform labels onto revintel's status and priority scales. Nothing here throws: the
// bodies come from the internet.
import type { ExtractedTicket, TicketPriority, TicketStatus } from './types.ts';

// ---------------------------------------------------------------------------------------------
// Values of unknown shape

export type JsonObject = Record<string, unknown>;

export const isRecord = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value under `key` when the object itself holds it: `constructor` or `toString` inherited from
 * Object.prototype are not fields of a ticket. */
export const own = (record: unknown, key: string): unknown => (isRecord(record) && Object.hasOwn(record, key) ? record[key] : undefined);

/** The value at a path of keys, or undefined as soon as one step is missing or not an object. */
export const at = (value: unknown, ...path: string[]): unknown => {
  let current = value;
  for (const key of path) current = own(current, key);
  return current;
};

/** The first non-null result of `read` over `values`, in order of preference. */
export const firstOf = <T>(values: readonly unknown[], read: (value: unknown) => T | null): T | null => {
  for (const value of values) {
    const result = read(value);
    if (result !== null) return result;
  }
  return null;
};

/** An id as text. Numbers become their integer digits (never `"123.0"`, never `"1e+21"`); strings
 * are kept as sent, so a 19-digit Zoho id that a number would round stays exact. */
export const toText = (value: unknown): string | null => {
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed === '' ? null : trimmed;
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && Number.isFinite(value)) {
    if (Number.isInteger(value)) return Number.isSafeInteger(value) ? String(value + 0) : BigInt(value).toString();
    return String(value);
  }
  return null;
};

/** Free text (a subject): trimmed, empty means absent. */
export const textOf = (value: unknown): string | null => (typeof value === 'string' || typeof value === 'number' ? toText(value) : null);

/** A platform label as sent: a string, a number written out, or an object reduced to its `name`
 * (Jira's status and priority, Linear's state). */
export const labelOf = (value: unknown): string | null => {
  if (typeof value === 'string' || typeof value === 'number') return textOf(value);
  if (isRecord(value)) return textOf(own(value, 'name'));
  return null;
};

// Deliberately loose (one @, a dot in the domain, no spaces): the point is to drop phone numbers,
// Twitter handles and unrendered `{{placeholders}}`, not to validate RFC 5322.
const EMAIL_SHAPE = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:".]+$/;
const NAMED_ADDRESS = /<([^<>\s]+)>$/; // "Carol Customer <carol@example.com>"
const MAX_EMAIL_LENGTH = 320;

/** A requester's e-mail address, lower-cased and trimmed, or null when the value is not one. */
export const emailOf = (value: unknown): string | null => {
  if (typeof value !== 'string' || value.length > MAX_EMAIL_LENGTH + 200) return null;
  let candidate = value.trim();
  const named = NAMED_ADDRESS.exec(candidate);
  if (named?.[1]) candidate = named[1];
  if (candidate.toLowerCase().startsWith('mailto:')) candidate = candidate.slice('mailto:'.length);
  candidate = candidate.toLowerCase();
  return candidate.length <= MAX_EMAIL_LENGTH && EMAIL_SHAPE.test(candidate) ? candidate : null;
};

// ---------------------------------------------------------------------------------------------
// Timestamps

// Anything longer is not a timestamp, and the patterns below then never see a large input.
const MAX_TIMESTAMP_LENGTH = 80;
// Past this an epoch number is in milliseconds (1e12 ms is 2001; 1e12 s is the year 33658).
const EPOCH_MS_THRESHOLD = 1e12;
// The range a JavaScript Date can represent.
const MAX_EPOCH_MS = 8.64e15;
const EPOCH_NUMBER = /^\d+(?:\.\d+)?$/;
// ISO 8601 and its relatives: `T` or a space, seconds and fractions optional, any number of fraction
// digits (Zendesk sends nanoseconds, Gorgias microseconds), zone `Z`, `+00:00`, `+0000`, `+00` or none.
const ISO_LIKE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/;
const HAS_ZONE = /\b(?:UTC|GMT)\b|[+-]\d{2}:?\d{2}\s*(?:\([^()]*\))?$/i;
const HAS_MONTH_NAME = /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*/i;

const isoFromEpochMs = (ms: number): string | null =>
  Number.isFinite(ms) && Math.abs(ms) <= MAX_EPOCH_MS ? new Date(Math.round(ms)).toISOString() : null;

// Epoch 0 (and below) is how platforms write "not yet" (Intercom's `delivered_at: 0`), not 1970.
const isoFromEpoch = (value: number): string | null =>
  Number.isFinite(value) && value > 0 ? isoFromEpochMs(value > EPOCH_MS_THRESHOLD ? value : value * 1000) : null;

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
// Day 0 of the next month is the last day of this one; 2000 and 2001 stand in for any leap and common year.
const daysInMonth = (year: number, month: number) => new Date(Date.UTC(isLeapYear(year) ? 2000 : 2001, month, 0)).getUTCDate();

const isoFromIsoLike = (match: RegExpExecArray): string | null => {
  const [, yearText, monthText, dayText, hourText, minuteText, secondText, fractionText, zone] = match;
  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  const hour = Number(hourText ?? 0);
  const minute = Number(minuteText ?? 0);
  const second = Number(secondText ?? 0);
  // Milliseconds are the precision we keep: further digits are cut, not rounded into the next second.
  const ms = Number((fractionText ?? '').slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (zone && zone[0] !== undefined && '+-'.includes(zone[0])) {
    const digits = zone.slice(1).replace(':', '');
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMins = Number(digits.slice(2) || 0);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return isoFromEpochMs(date.getTime() - offsetMinutes * 60_000);
};

/** A platform's timestamp as ISO 8601 UTC with milliseconds, or null when it can't be read. Takes ISO
 * forms with or without seconds, fractions or a zone (no zone means UTC), epoch seconds and epoch
 * milliseconds as numbers or numeric strings, and dated text such as Zendesk's "May18, 2014". */
export const parseTimestamp = (value: unknown): string | null => {
  if (typeof value === 'number') return isoFromEpoch(value);
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text === '' || text.length > MAX_TIMESTAMP_LENGTH) return null;
  if (EPOCH_NUMBER.test(text)) return isoFromEpoch(Number(text));
  const isoLike = ISO_LIKE.exec(text);
  if (isoLike) return isoFromIsoLike(isoLike);
  // Last resort for dated text: the engine's parser, told UTC when the text names no zone (it would
  // otherwise read the server's local time).
  if (!HAS_MONTH_NAME.test(text) || !/\d{4}/.test(text)) return null;
  return isoFromEpochMs(Date.parse(HAS_ZONE.test(text) ? text : `${text} UTC`));
};

// ---------------------------------------------------------------------------------------------
// HTML to plain text

// Tags after which a reader sees a new line. `<p>` and `<div>` open nothing: their end does.
const LINE_BREAK_TAGS = new Set(['br']);
const BLOCK_END_TAGS = new Set([
  'p',
  'div',
  'li',
  'tr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'blockquote',
  'pre',
  'ul',
  'ol',
  'table',
  'section',
  'article',
  'header',
  'footer',
]);
// Their content is code or styling, never words for a reader.
const CONTENT_HIDING_TAGS = new Set(['script', 'style', 'head', 'title']);

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  bull: '•',
  middot: '·',
  copy: '©',
  reg: '®',
  trade: '™',
  euro: '€',
  pound: '£',
  laquo: '«',
  raquo: '»',
  times: '×',
  shy: '',
};
// Bounded lengths: each match is short, so decoding is linear in the input.
const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z][a-zA-Z0-9]{1,31}));/g;

const decodeEntities = (text: string): string =>
  text.includes('&')
    ? text.replace(ENTITY, (whole, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
        if (name !== undefined) return Object.hasOwn(NAMED_ENTITIES, name) ? (NAMED_ENTITIES[name] as string) : whole;
        const codePoint = decimal !== undefined ? Number(decimal) : Number.parseInt(hex ?? '', 16);
        const valid = codePoint > 0 && codePoint <= 0x10ffff && (codePoint < 0xd800 || codePoint > 0xdfff);
        return valid ? String.fromCodePoint(codePoint) : '\ufffd';
      })
    : text;

const isLetter = (char: string | undefined) => char !== undefined && ((char >= 'a' && char <= 'z') || (char >= 'A' && char <= 'Z'));

const tagNameAt = (html: string, start: number): string => {
  let end = start;
  while (end < html.length && (isLetter(html[end]) || (end > start && html[end]! >= '0' && html[end]! <= '9'))) end += 1;
  return html.slice(start, end).toLowerCase();
};

// Whitespace other than line breaks, including the no-break space &nbsp; decodes to.
const INLINE_WHITESPACE = /[ \t\f\v\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+/g;

/** HTML as plain text: tags removed, line-ending tags (`<br>`, `</p>`, `</div>`, …) turned into new
 * lines, entities decoded, whitespace collapsed within each line, at most one blank line in a row,
 * trimmed. A single left-to-right scan (every search starts where the previous one stopped), so a
 * hostile 5 MB body costs linear time. */
export const stripHtml = (html: string): string => {
  const pieces: string[] = [];
  let lowered: string | null = null; // made once, only if a <script>/<style> needs its end found
  let noMoreTagEnds = false; // once no `>` is left, every later `<` is text
  let textStart = 0;
  let index = html.indexOf('<');
  while (index !== -1) {
    const next = html[index + 1];
    const opensTag = isLetter(next) || next === '/' || next === '!' || next === '?';
    if (!opensTag || noMoreTagEnds) {
      index = html.indexOf('<', index + 1);
      continue;
    }
    pieces.push(decodeEntities(html.slice(textStart, index)));
    let resumeAt: number;
    if (html.startsWith('<!--', index)) {
      const commentEnd = html.indexOf('-->', index + 4);
      resumeAt = commentEnd === -1 ? html.length : commentEnd + 3;
    } else {
      const tagEnd = html.indexOf('>', index + 1);
      if (tagEnd === -1) {
        // An unclosed `<` and everything after it is text, as a browser would show it.
        noMoreTagEnds = true;
        textStart = index;
        index = html.indexOf('<', index + 1);
        continue;
      }
      const closing = next === '/';
      const name = tagNameAt(html, index + (closing ? 2 : 1));
      resumeAt = tagEnd + 1;
      if (LINE_BREAK_TAGS.has(name) || (closing && BLOCK_END_TAGS.has(name))) pieces.push('\n');
      if (!closing && CONTENT_HIDING_TAGS.has(name) && html[tagEnd - 1] !== '/') {
        lowered ??= html.toLowerCase();
        const contentEnd = lowered.indexOf(`</${name}`, resumeAt);
        const contentEndClose = contentEnd === -1 ? -1 : html.indexOf('>', contentEnd);
        resumeAt = contentEndClose === -1 ? html.length : contentEndClose + 1;
      }
    }
    textStart = resumeAt;
    index = resumeAt >= html.length ? -1 : html.indexOf('<', resumeAt);
  }
  pieces.push(decodeEntities(html.slice(textStart)));
  return tidyLines(pieces.join(''));
};

/** Whitespace collapsed within each line, at most one blank line in a row, trimmed. */
const tidyLines = (text: string): string => {
  const kept: string[] = [];
  for (const line of text.split(/\r\n?|\n/)) {
    const collapsed = line.replace(INLINE_WHITESPACE, ' ').trim();
    if (collapsed === '' && (kept.length === 0 || kept[kept.length - 1] === '')) continue;
    kept.push(collapsed);
  }
  while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
  return kept.join('\n');
};

// A known tag or a known entity: `Vec<String>` in a plain-text bug report is not HTML. The bounded
// `{0,200}` keeps each attempt short, so the test is linear too.
const HTML_HINT =
  /<\/?(?:p|div|br|span|a|b|i|u|em|strong|ul|ol|li|table|tr|td|th|h[1-6]|img|html|body|blockquote|pre|code|font|hr)\b[^<>]{0,200}>|&(?:amp|lt|gt|quot|nbsp|#\d{1,7}|#x[0-9a-f]{1,6});/i;

export const looksLikeHtml = (text: string): boolean => HTML_HINT.test(text);

/** A field documented as HTML (Freshdesk, Intercom, Zoho descriptions) as plain text. */
export const htmlText = (value: unknown): string | null => (typeof value === 'string' ? toText(stripHtml(value)) : null);

/** A field that may or may not be HTML (templated bodies, the generic endpoint): stripped when it
 * looks like HTML, otherwise kept as sent, new lines and all. */
export const plainText = (value: unknown): string | null =>
  typeof value === 'string' ? toText(looksLikeHtml(value) ? stripHtml(value) : value) : textOf(value);

// Atlassian Document Format: the nodes after which a reader sees a new line.
const ADF_BLOCKS = new Set(['paragraph', 'heading', 'listItem', 'codeBlock', 'blockquote', 'tableRow', 'panel', 'rule', 'mediaSingle']);
// A description bigger than this is not a description someone typed; stop rather than walk it all.
const MAX_ADF_NODES = 100_000;
const END_OF_BLOCK = Symbol('end of block');

/** A Jira description in Atlassian Document Format (`{type:"doc", content:[…]}`, what REST v3 and
 * some webhooks send instead of a string) as plain text. Walked with a stack, not recursion: a
 * deeply nested document must not overflow the call stack. */
export const adfText = (value: unknown): string | null => {
  if (!isRecord(value) || own(value, 'type') !== 'doc') return null;
  const parts: string[] = [];
  const stack: unknown[] = [value];
  let nodesTaken = 1;
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === END_OF_BLOCK) {
      parts.push('\n');
      continue;
    }
    const type = own(node, 'type');
    const text = type === 'text' ? own(node, 'text') : type === 'mention' || type === 'emoji' ? at(node, 'attrs', 'text') : undefined;
    if (typeof text === 'string') parts.push(text);
    if (type === 'hardBreak') parts.push('\n');
    const content = own(node, 'content');
    if (!Array.isArray(content)) continue;
    if (typeof type === 'string' && ADF_BLOCKS.has(type)) stack.push(END_OF_BLOCK);
    const children = content.slice(0, Math.max(0, MAX_ADF_NODES - nodesTaken));
    nodesTaken += children.length;
    for (let index = children.length - 1; index >= 0; index -= 1) stack.push(children[index]);
  }
  return toText(tidyLines(parts.join('')));
};

// ---------------------------------------------------------------------------------------------
// Labels onto revintel's scales

const MAX_LABEL_LENGTH = 64;

/** `In_Progress`, `in-progress` and ` In  progress ` all read as `in progress`. */
const labelKey = (label: string) =>
  label
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');

const STATUS_BY_LABEL = new Map<string, TicketStatus>([
  ...[
    'new',
    'open',
    'opened',
    'reopened',
    'active',
    'unassigned',
    'assigned',
    'in progress',
    'to do',
    'todo',
    'backlog',
    'triage',
    'unstarted',
    'started',
    'submitted',
    'working',
    'escalated',
    'in review',
    'selected for development',
  ].map((label) => [label, 'open'] as const),
  ...[
    'pending',
    'waiting',
    'on hold',
    'hold',
    'snoozed',
    'waiting on customer',
    'waiting for customer',
    'awaiting customer',
    'waiting on contact',
    'waiting on third party',
    'waiting on user',
  ].map((label) => [label, 'pending'] as const),
  ...['solved', 'resolved', 'done', 'fixed', 'completed', 'complete'].map((label) => [label, 'solved'] as const),
  ...['closed', 'archived', 'spam', 'deleted', 'cancelled', 'canceled', 'duplicate', 'wontfix', "won't fix", 'not planned'].map(
    (label) => [label, 'closed'] as const,
  ),
]);

/** A platform's status label on revintel's scale, case-insensitively; null when unknown. */
export const normaliseStatus = (label: unknown): TicketStatus | null => {
  if (typeof label !== 'string' || label.length > MAX_LABEL_LENGTH) return null;
  return STATUS_BY_LABEL.get(labelKey(label)) ?? null;
};

const PRIORITY_BY_LABEL = new Map<string, TicketPriority>([
  ...['low', 'lowest', 'minor', 'trivial', 'p4', 'p5'].map((label) => [label, 'low'] as const),
  // Intercom's `not_priority` is the ordinary case of its two-value scale.
  ...['normal', 'medium', 'moderate', 'p3', 'not priority'].map((label) => [label, 'normal'] as const),
  // Intercom's `priority` is the raised one.
  ...['high', 'major', 'p2', 'priority'].map((label) => [label, 'high'] as const),
  ...['urgent', 'critical', 'highest', 'blocker', 'emergency', 'p1', 'p0'].map((label) => [label, 'urgent'] as const),
]);

// Freshdesk's API numbers its priorities 1 (low) to 4 (urgent). Linear numbers the other way round
// (1 is urgent), which is why its adapter maps its own numbers and never calls this with them.
const PRIORITY_BY_NUMBER: readonly (TicketPriority | undefined)[] = [undefined, 'low', 'normal', 'high', 'urgent'];

/** A platform's priority label (or a Freshdesk number) on revintel's scale; null when unknown. */
export const normalisePriority = (label: unknown): TicketPriority | null => {
  if (typeof label === 'number') return Number.isInteger(label) ? (PRIORITY_BY_NUMBER[label] ?? null) : null;
  if (typeof label !== 'string' || label.length > MAX_LABEL_LENGTH) return null;
  return PRIORITY_BY_LABEL.get(labelKey(label)) ?? null;
};

// ---------------------------------------------------------------------------------------------
// Assembling a ticket

export interface TicketParts {
  externalId: string | null;
  subject?: string | null;
  description?: string | null;
  status?: string | null;
  priority?: string | null;
  /** Defaults to the status label normalised; an adapter passes its own when the platform has a
   * better signal (Jira's status category, Linear's state type). */
  statusNormalised?: TicketStatus | null;
  priorityNormalised?: TicketPriority | null;
  requesterEmail?: string | null;
  createdAt?: string | null;
  /** Defaults to createdAt: a ticket just made was last changed when it was made. */
  updatedAt?: string | null;
}

/** The ticket, or null without an id: a ticket we can't name can't be stored or updated later. */
export const buildTicket = (parts: TicketParts): ExtractedTicket | null => {
  if (parts.externalId === null) return null;
  const status = parts.status ?? null;
  const priority = parts.priority ?? null;
  const createdAt = parts.createdAt ?? null;
  return {
    externalId: parts.externalId,
    subject: parts.subject ?? null,
    description: parts.description ?? null,
    status,
    priority,
    statusNormalised: parts.statusNormalised !== undefined ? parts.statusNormalised : normaliseStatus(status),
    priorityNormalised: parts.priorityNormalised !== undefined ? parts.priorityNormalised : normalisePriority(priority),
    requesterEmail: parts.requesterEmail ?? null,
    createdAt,
    updatedAt: parts.updatedAt ?? createdAt,
  };
};

/** One ticket per id: when a batch carries several versions of a ticket (Zoho's Ticket_Add then
 * Ticket_Update), the latest by updatedAt, the later in the batch on a tie or when undated. */
export const latestPerTicket = (tickets: readonly ExtractedTicket[]): ExtractedTicket[] => {
  const byId = new Map<string, ExtractedTicket>();
  for (const ticket of tickets) {
    const seen = byId.get(ticket.externalId);
    const older = seen?.updatedAt && ticket.updatedAt && ticket.updatedAt < seen.updatedAt;
    if (!older) byId.set(ticket.externalId, ticket);
  }
  return [...byId.values()];
};

// ---------------------------------------------------------------------------------------------
// Limits and explanations

/** The most events one body may carry. Over it the body is refused rather than cut short: taking the
 * first thousand would silently drop the rest. */
export const MAX_TICKETS_PER_BODY = 1000;

export const tooManyEvents = (count: number, what = 'events') =>
  `too many ${what} in one body: ${count}, at most ${MAX_TICKETS_PER_BODY} are read from one delivery; send smaller batches`;

const MAX_KEYS_SHOWN = 10;
const MAX_KEY_LENGTH = 40;

/** Text from the sender (a key, an event type) fit to quote in a reason: no control characters in
 * our logs, and no novel-length names. */
export const shownText = (text: string, maxLength = MAX_KEY_LENGTH) => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  const printable = text.slice(0, maxLength + 1).replace(/[\u0000-\u001f\u007f]/g, '?');
  return printable.length > maxLength ? `${printable.slice(0, maxLength)}…` : printable;
};

/** What a body is, for a reason an operator reads: "an object with keys [foo, bar]". */
export const describeBody = (body: unknown): string => {
  if (body === null || body === undefined) return 'no body (null)';
  if (Array.isArray(body)) return body.length === 0 ? 'an empty array' : `an array of ${body.length} item${body.length === 1 ? '' : 's'}`;
  if (typeof body === 'string') return 'a string, not a JSON object (was it sent as JSON, with Content-Type: application/json?)';
  if (typeof body === 'number' || typeof body === 'boolean' || typeof body === 'bigint') return `a ${typeof body}`;
  if (!isRecord(body)) return `a ${typeof body}`;
  const keys = Object.keys(body);
  if (keys.length === 0) return 'an empty object';
  const shown = keys
    .slice(0, MAX_KEYS_SHOWN)
    .map((key) => shownText(key))
    .join(', ');
  const more = keys.length > MAX_KEYS_SHOWN ? `, … ${keys.length - MAX_KEYS_SHOWN} more` : '';
  return `an object with keys [${shown}${more}]`;
};
