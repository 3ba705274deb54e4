// Zoho Desk posts a JSON array of events [{eventType:"Ticket_Add", orgId, eventTime, payload:{…the
// ticket…}}]; Ticket_Update events carry the whole ticket too (and `prevState` beside it).
import {
  MAX_TICKETS_PER_BODY,
  at,
  buildTicket,
  emailOf,
  firstOf,
  htmlText,
  isRecord,
  labelOf,
  normaliseStatus,
  own,
  parseTimestamp,
  shownText,
  textOf,
  toText,
  tooManyEvents,
  type JsonObject,
} from './fields.ts';
import { found, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput } from './types.ts';

const EXPECTED = 'a Zoho Desk array of ticket events [{"eventType":"Ticket_Add","payload":{…}}]';
// Other events (Ticket_Comment_Add, Ticket_Thread_Add, Ticket_Delete) carry a comment, a thread or
// just an id as their payload, not the ticket.
const TICKET_EVENT_TYPES = new Set(['Ticket_Add', 'Ticket_Update']);

const fromPayload = (event: JsonObject, payload: JsonObject) => {
  const status = labelOf(own(payload, 'status'));
  return buildTicket({
    // A 19-digit number as a string: kept as text, a JavaScript number would round it.
    externalId: toText(own(payload, 'id')),
    subject: textOf(own(payload, 'subject')),
    description: htmlText(own(payload, 'description')),
    status,
    // A custom status (`Escalated`) still belongs to one of the fixed status types.
    statusNormalised: normaliseStatus(status) ?? normaliseStatus(own(payload, 'statusType')),
    priority: labelOf(own(payload, 'priority')),
    requesterEmail: firstOf([own(payload, 'email'), at(payload, 'contact', 'email')], emailOf),
    createdAt: parseTimestamp(own(payload, 'createdTime')),
    // `eventTime` is epoch milliseconds, sent as a string.
    updatedAt: parseTimestamp(own(payload, 'modifiedTime')) ?? parseTimestamp(own(event, 'eventTime')),
  });
};

const readZoho = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  // One event on its own, not in an array, is read the same way.
  const events = Array.isArray(body) ? body : isRecord(body) && typeof own(body, 'eventType') === 'string' ? [body] : null;
  if (events === null) return unrecognised(EXPECTED);
  if (events.length > MAX_TICKETS_PER_BODY) return refused(tooManyEvents(events.length));
  const types = events.map((event) => own(event, 'eventType'));
  if (!types.some((type) => typeof type === 'string')) return unrecognised(EXPECTED);
  const tickets = events.map((event, index) => {
    const payload = own(event, 'payload');
    return isRecord(event) && isRecord(payload) && TICKET_EVENT_TYPES.has(String(types[index])) ? fromPayload(event, payload) : null;
  });
  return found(tickets, () => {
    const kinds = [...new Set(types.filter((type): type is string => typeof type === 'string'))].slice(0, 5).map((type) => shownText(type));
    return refused(
      `none of the ${events.length} Zoho Desk events is a Ticket_Add or Ticket_Update with a ticket id (event types: ${kinds.join(', ')})`,
    );
  });
};

export const zohoAdapter = platformAdapter('zoho', readZoho);
