// The generic adapter: finds a ticket in a body of no particular platform by the common wrappers
// and field names (docs/tickets.md "Connecting a platform", the generic row). It is also every platform
// adapter's second chance, because the admins of templated senders (Zendesk triggers, Freshdesk,
// Gorgias, Salesforce Flows) write their own bodies, and what they write usually looks like this.
import type { Platform } from '../platforms.ts';
import type { AdapterInput, AdapterResult, ExtractedTicket, PlatformAdapter } from './types.ts';
import {
  MAX_TICKETS_PER_BODY,
  adfText,
  buildTicket,
  describeBody,
  emailOf,
  firstOf,
  isRecord,
  labelOf,
  latestPerTicket,
  normalisePriority,
  normaliseStatus,
  own,
  parseTimestamp,
  plainText,
  textOf,
  toText,
  tooManyEvents,
  type JsonObject,
} from './fields.ts';

/** What an adapter makes of a body. `unrecognised`: the body is in none of the shapes it knows, so the
 * generic detection gets a go and `expected` says what was looked for. A plain failure: the adapter
 * understood the body and it holds no ticket (a contact event, too many events); detecting further
 * would turn users or deliveries into tickets. */
export type Reading =
  | { ok: true; tickets: ExtractedTicket[] }
  | { ok: false; reason: string }
  | { ok: false; unrecognised: true; expected: string };

export const unrecognised = (expected: string): Reading => ({ ok: false, unrecognised: true, expected });

export const refused = (reason: string): Reading => ({ ok: false, reason });

/** The tickets read, one per id; `whenNone` explains an empty result (there is no ok with nothing). */
export const found = (tickets: readonly (ExtractedTicket | null)[], whenNone: () => Reading): Reading => {
  const named = tickets.filter((ticket): ticket is ExtractedTicket => ticket !== null);
  return named.length > 0 ? { ok: true, tickets: latestPerTicket(named) } : whenNone();
};

const NO_TICKET = 'no ticket found:';

export const GENERIC_EXPECTED = 'a "ticket", "issue", "case" or "conversation" object, or an array of events';

// ---------------------------------------------------------------------------------------------
// Where the ticket is

const ROOT_KEYS = ['ticket', 'issue', 'case', 'conversation'] as const;
// Tried in this order: `data.item` before `data` (Intercom's data is an envelope of its own).
const WRAPPERS: readonly (readonly string[])[] = [['data', 'item'], ['detail'], ['freshdesk_webhook'], ['payload'], ['data']];
// When an envelope says it was sent: a ticket without its own updated time was at least this new.
const EVENT_TIME_NAMES = ['time', 'eventTime', 'occurredAt', 'emitted_at', 'webhookTimestamp', 'event_time', 'timestamp'];
// Enough for `payload.data.item.ticket`; a body nested deeper is not a wrapper we know.
const MAX_UNWRAP_DEPTH = 4;
const ID_NAMES = ['id', 'ticket_id', 'ticketId', 'objectId'];

interface Candidate {
  record: JsonObject;
  /** How we got there, for a reason: `ticket`, `data.item`, `[3].payload`. */
  path: string;
  eventTime: string | null;
}

type Search = { candidates: Candidate[]; tooMany?: undefined } | { candidates?: undefined; tooMany: string };

const eventTimeOf = (envelope: JsonObject): string | null =>
  firstOf(
    EVENT_TIME_NAMES.map((name) => own(envelope, name)),
    parseTimestamp,
  );

const joinPath = (path: string, step: string) => (path === '' ? step : `${path}.${step}`);

/** The objects that may be tickets: the one under a root key or a wrapper, or the body itself when it
 * carries an id; each event of an array the same way. */
const searchTickets = (value: unknown, path: string, inheritedTime: string | null, depth: number): Search => {
  if (Array.isArray(value)) {
    if (depth > 1) return { candidates: [] }; // an array inside an event is the event's data, not more events
    if (value.length > MAX_TICKETS_PER_BODY) return { tooMany: tooManyEvents(value.length) };
    const candidates: Candidate[] = [];
    value.forEach((event, index) => {
      const inner = searchTickets(event, `${path}[${index}]`, inheritedTime, depth + 1);
      if (inner.candidates) candidates.push(...inner.candidates);
    });
    return { candidates };
  }
  if (!isRecord(value) || depth > MAX_UNWRAP_DEPTH) return { candidates: [] };
  const eventTime = eventTimeOf(value) ?? inheritedTime;
  for (const key of ROOT_KEYS) {
    const inner = own(value, key);
    if (isRecord(inner)) return { candidates: [{ record: inner, path: joinPath(path, key), eventTime }] };
  }
  for (const wrapper of WRAPPERS) {
    let inner: unknown = value;
    for (const key of wrapper) inner = own(inner, key);
    if (isRecord(inner) || (Array.isArray(inner) && depth === 0))
      return searchTickets(inner, joinPath(path, wrapper.join('.')), eventTime, depth + 1);
  }
  // The body itself: a bare ticket (Help Scout's conversation, a hand-written body, one of HubSpot's
  // events, which says when it happened in its own `occurredAt`).
  const hasId = ID_NAMES.some((name) => toText(own(value, name)) !== null);
  return { candidates: hasId ? [{ record: value, path, eventTime }] : [] };
};

// ---------------------------------------------------------------------------------------------
// The fields, by any of their common names

// Each object's keys lower-cased once, so looking up thirty names in a body with many keys stays
// linear in its size.
const lowerCaseKeys = new WeakMap<JsonObject, Map<string, unknown>>();

/** `record[name]`, or failing that the key that matches ignoring case (`Subject`, `CreatedDate`). */
const field = (record: unknown, name: string): unknown => {
  if (!isRecord(record)) return undefined;
  if (Object.hasOwn(record, name)) return record[name];
  let byLowerCase = lowerCaseKeys.get(record);
  if (!byLowerCase) {
    byLowerCase = new Map();
    for (const key of Object.keys(record)) {
      const lower = key.toLowerCase();
      if (!byLowerCase.has(lower)) byLowerCase.set(lower, record[key]);
    }
    lowerCaseKeys.set(record, byLowerCase);
  }
  return byLowerCase.get(name.toLowerCase());
};

type FieldName = string | readonly string[];

const fieldAt = (record: unknown, name: FieldName): unknown => {
  if (typeof name === 'string') return field(record, name);
  let current = record;
  for (const step of name) current = field(current, step);
  return current;
};

/** Every value the names point at, in each source in turn. */
const valuesOf = (sources: readonly unknown[], names: readonly FieldName[]): unknown[] =>
  sources.flatMap((source) => names.map((name) => fieldAt(source, name)));

export const FIELD_NAMES = {
  subject: ['subject', 'title', 'summary', '_default_title_', 'ticket_subject'],
  // `first_message_body` is Gorgias's; `source.body` is Intercom's conversation.
  description: [
    'description',
    'body',
    'content',
    'preview',
    '_default_description_',
    'ticket_description',
    'first_message_body',
    ['source', 'body'],
  ],
  status: ['status', 'ticket_status', 'state', 'ticket_state'],
  // The label before the number: Linear sends both, and only the label reads the same on every platform.
  priority: ['priorityLabel', 'priority', 'ticket_priority', 'hs_ticket_priority'],
  requesterEmail: [
    'requester_email',
    ['requester', 'email'],
    ['source', 'author', 'email'],
    ['primaryCustomer', 'email'],
    ['customer', 'email'],
    ['contact', 'email'],
    ['reporter', 'emailAddress'],
    'email',
    'SuppliedEmail',
    'ContactEmail',
    ['recipient', 'handle'],
    'ticket_contact_email',
    'ticket_requester_email',
  ],
  createdAt: ['created_at', 'createdAt', 'created', 'createdTime', 'created_datetime', 'CreatedDate', 'ticket_created_at'],
  updatedAt: ['updated_at', 'updatedAt', 'updated', 'modifiedTime', 'updated_datetime', 'LastModifiedDate', 'ticket_updated_at'],
} satisfies Record<string, readonly FieldName[]>;

const ticketOf = (candidate: Candidate): ExtractedTicket | null => {
  const { record } = candidate;
  // Jira keeps everything under `fields`, Intercom tickets under `ticket_attributes`, HubSpot CRM
  // objects under `properties`: read those after the object itself.
  const sources = [record, field(record, 'fields'), field(record, 'ticket_attributes'), field(record, 'properties')].filter(isRecord);
  const priorityValue = firstOf(valuesOf(sources, FIELD_NAMES.priority), (value) => (labelOf(value) === null ? null : value));
  const status = firstOf(valuesOf(sources, FIELD_NAMES.status), labelOf);
  return buildTicket({
    externalId: firstOf(
      ID_NAMES.map((name) => field(record, name)),
      toText,
    ),
    subject: firstOf(valuesOf(sources, FIELD_NAMES.subject), textOf),
    description: firstOf(valuesOf(sources, FIELD_NAMES.description), (value) => plainText(value) ?? adfText(value)),
    status,
    statusNormalised: normaliseStatus(status),
    priority: labelOf(priorityValue),
    // A bare number is read on Freshdesk's 1 (low) to 4 (urgent) scale, the only numbered one we know
    // of that is sent without a label.
    priorityNormalised: normalisePriority(isRecord(priorityValue) ? labelOf(priorityValue) : priorityValue),
    requesterEmail: firstOf(valuesOf(sources, FIELD_NAMES.requesterEmail), emailOf),
    createdAt: firstOf(valuesOf(sources, FIELD_NAMES.createdAt), parseTimestamp),
    updatedAt: firstOf(valuesOf(sources, FIELD_NAMES.updatedAt), parseTimestamp) ?? candidate.eventTime,
  });
};

/** The generic detection on its own. */
export const readGeneric = (input: AdapterInput): Reading => {
  const search = searchTickets(own(input, 'body'), '', null, 0);
  if (search.tooMany !== undefined) return refused(search.tooMany);
  if (search.candidates.length === 0) return unrecognised(GENERIC_EXPECTED);
  return found(search.candidates.map(ticketOf), () => {
    const [first] = search.candidates;
    const where = first === undefined || first.path === '' ? 'the body' : `the "${first.path}" object`;
    const others = search.candidates.length > 1 ? ` (nor do the other ${search.candidates.length - 1})` : '';
    return refused(`${NO_TICKET} ${where} has no id${others}; looked for ${ID_NAMES.map((name) => `"${name}"`).join(', ')}`);
  });
};

// ---------------------------------------------------------------------------------------------
// Adapters from readers

const couldNotRead = (error: unknown) => `could not read the body: ${error instanceof Error ? error.message : String(error)}`;

/** A reader's result, the unexpected included: a body that breaks a reader is reported, never
 * thrown, since the caller is answering a webhook. */
const readSafely = (read: (input: AdapterInput) => Reading, input: AdapterInput): Reading => {
  try {
    return read(input);
  } catch (error) {
    return refused(couldNotRead(error));
  }
};

/** The same guarantee around a whole extraction, explaining the body included. */
const neverThrowing =
  (extract: (input: AdapterInput) => AdapterResult) =>
  (input: AdapterInput): AdapterResult => {
    try {
      return extract(input);
    } catch (error) {
      return { ok: false, reason: couldNotRead(error) };
    }
  };

const asResult = (reading: Reading, body: unknown): AdapterResult => {
  if (reading.ok) return { ok: true, tickets: reading.tickets };
  if ('unrecognised' in reading) return { ok: false, reason: `${NO_TICKET} expected ${reading.expected}; got ${describeBody(body)}` };
  return { ok: false, reason: reading.reason };
};

export const genericAdapter: PlatformAdapter = {
  platform: 'generic',
  extract: neverThrowing((input) => asResult(readSafely(readGeneric, input), own(input, 'body'))),
};

/** A platform's adapter: its own reader first, then, when the body is in none of the platform's
 * shapes, the generic detection. */
export const platformAdapter = (platform: Platform, read: (input: AdapterInput) => Reading): PlatformAdapter => ({
  platform,
  extract: neverThrowing((input) => {
    const body = own(input, 'body');
    const reading = readSafely(read, input);
    if (reading.ok || !('unrecognised' in reading)) return asResult(reading, body);
    const generic = readSafely(readGeneric, input);
    if (generic.ok) return asResult(generic, body);
    if ('unrecognised' in generic)
      return { ok: false, reason: `${NO_TICKET} expected ${reading.expected}, or ${generic.expected}; got ${describeBody(body)}` };
    return {
      ok: false,
      reason: `${NO_TICKET} expected ${reading.expected}; the generic detection: ${generic.reason.replace(NO_TICKET, '').trim()}`,
    };
  }),
});

/** A request header by its lower-cased name, if the caller passed headers at all. */
export const headerOf = (input: AdapterInput, name: string): string | null => textOf(own(own(input, 'headers'), name));
