// Gorgias's HTTP integrations post a body the admin writes with template variables ({{ticket.id}},
// {{ticket.customer.email}}), which we expect as {"ticket":{…}}. The names of the first message's
// text and of a priority are not documented, so the likely ones are all read.
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
  textOf,
  toText,
  type JsonObject,
} from './fields.ts';
import { found, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput } from './types.ts';

const EXPECTED = 'a Gorgias body {"ticket":{…}}';

const firstMessage = (ticket: JsonObject): unknown => {
  const messages = own(ticket, 'messages');
  return Array.isArray(messages) ? messages[0] : undefined;
};

const fromTicket = (ticket: JsonObject) =>
  buildTicket({
    // An integer; `external_id` is another system's id for the ticket, not Gorgias's.
    externalId: toText(own(ticket, 'id')),
    subject: textOf(own(ticket, 'subject')),
    description: firstOf(
      [
        own(ticket, 'first_message_body'),
        own(ticket, 'description'),
        own(ticket, 'body'),
        own(firstMessage(ticket), 'body_text'),
        own(firstMessage(ticket), 'stripped_text'),
        own(firstMessage(ticket), 'body_html'),
      ],
      plainText,
    ),
    // `open` or `closed`.
    status: labelOf(own(ticket, 'status')),
    priority: labelOf(own(ticket, 'priority')),
    requesterEmail: firstOf(
      [at(ticket, 'customer', 'email'), at(ticket, 'requester', 'email'), own(ticket, 'customer_email'), own(ticket, 'requester_email')],
      emailOf,
    ),
    // `2021-01-07T13:00:00.123456`: microseconds, no zone, meant as UTC.
    createdAt: firstOf([own(ticket, 'created_datetime'), own(ticket, 'created_at')], parseTimestamp),
    updatedAt: firstOf([own(ticket, 'updated_datetime'), own(ticket, 'updated_at')], parseTimestamp),
  });

const readGorgias = (input: AdapterInput): Reading => {
  const ticket = own(own(input, 'body'), 'ticket');
  if (!isRecord(ticket)) return unrecognised(EXPECTED);
  return found([fromTicket(ticket)], () => refused('the "ticket" object has no "id" (in the integration\'s body: "id": {{ticket.id}})'));
};

export const gorgiasAdapter = platformAdapter('gorgias', readGorgias);
