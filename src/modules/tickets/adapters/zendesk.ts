// Zendesk sends tickets two ways. A trigger or automation posts a body the admin wrote with
// placeholders, usually {"ticket":{…}}; an event subscription posts Zendesk's own envelope
// {type:"zen:event-type:ticket.created", time, subject:"zen:ticket:<id>", detail:{…the ticket…}}.
import {
  at,
  buildTicket,
  emailOf,
  firstOf,
  isRecord,
  labelOf,
  own,
  parseTimestamp,
  plainText,
  shownText,
  textOf,
  toText,
  type JsonObject,
} from './fields.ts';
import { found, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput } from './types.ts';

const EXPECTED = 'a Zendesk trigger body {"ticket":{…}} or a ticket event {"type":"zen:event-type:ticket.…","detail":{…}}';
const EVENT_TYPE_PREFIX = 'zen:event-type:';
const TICKET_EVENT_PREFIX = `${EVENT_TYPE_PREFIX}ticket.`;
// The event's `subject` names the ticket too: "zen:ticket:35436".
const TICKET_SUBJECT = /^zen:ticket:(\d{1,30})$/;

/** A trigger body: whatever names the admin gave the placeholders' values, within reason. */
const fromTrigger = (ticket: JsonObject) =>
  buildTicket({
    externalId: toText(own(ticket, 'id')),
    subject: textOf(own(ticket, 'subject')) ?? textOf(own(ticket, 'title')),
    // {{ticket.description}} is plain text (it starts with a "----" line naming the author and time,
    // kept as sent); {{ticket.latest_comment_html}} and friends are HTML.
    description: plainText(own(ticket, 'description')),
    status: labelOf(own(ticket, 'status')),
    priority: labelOf(own(ticket, 'priority')),
    requesterEmail: firstOf([at(ticket, 'requester', 'email'), own(ticket, 'requester_email'), own(ticket, 'email')], emailOf),
    // {{ticket.created_at_with_timestamp}} renders ISO without seconds (`2013-12-12T05:35Z`); plain
    // {{ticket.created_at}} renders "May18, 2014", which parseTimestamp reads as midnight UTC.
    createdAt: firstOf([own(ticket, 'created_at'), own(ticket, 'created_at_with_timestamp')], parseTimestamp),
    updatedAt: firstOf([own(ticket, 'updated_at'), own(ticket, 'updated_at_with_timestamp')], parseTimestamp),
  });

/** An event subscription: `detail` is the ticket as it is after the event. Its enums arrive in
 * upper case (`NEW`, `HIGH`) and its ids as strings or numbers depending on the source: both are read. */
const fromEvent = (event: JsonObject, detail: JsonObject) =>
  buildTicket({
    externalId: toText(own(detail, 'id')) ?? TICKET_SUBJECT.exec(textOf(own(event, 'subject')) ?? '')?.[1] ?? null,
    subject: textOf(own(detail, 'subject')),
    description: plainText(own(detail, 'description')),
    status: labelOf(own(detail, 'status')),
    priority: labelOf(own(detail, 'priority')),
    // Events carry only `requester_id`; the address is fetched from the API or left unknown.
    requesterEmail: emailOf(at(detail, 'requester', 'email')),
    createdAt: parseTimestamp(own(detail, 'created_at')),
    updatedAt: parseTimestamp(own(detail, 'updated_at')) ?? parseTimestamp(own(event, 'time')),
  });

const readZendesk = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  const type = own(body, 'type');
  if (isRecord(body) && typeof type === 'string' && type.startsWith(EVENT_TYPE_PREFIX)) {
    if (!type.startsWith(TICKET_EVENT_PREFIX))
      return refused(`a Zendesk "${shownText(type.slice(EVENT_TYPE_PREFIX.length))}" event carries no ticket`);
    const detail = own(body, 'detail');
    if (!isRecord(detail)) return refused('the Zendesk ticket event has no "detail" object');
    return found([fromEvent(body, detail)], () => refused('the Zendesk ticket event names no ticket: no "detail.id"'));
  }
  const ticket = own(body, 'ticket');
  if (isRecord(ticket))
    return found([fromTrigger(ticket)], () =>
      refused('the "ticket" object has no "id" (in the trigger\'s JSON body: "id": "{{ticket.id}}")'),
    );
  return unrecognised(EXPECTED);
};

export const zendeskAdapter = platformAdapter('zendesk', readZendesk);
