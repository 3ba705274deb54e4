// Freshdesk's automation rules post either the "simple" body {"freshdesk_webhook":{ticket_*}} or an
// "advanced" body the admin writes, which we expect as {"ticket":{…}} (or the ticket_* keys at the
// root). Either may use Freshdesk's placeholder names (`ticket_subject`) or the API's (`subject`).
import {
  at,
  buildTicket,
  emailOf,
  firstOf,
  htmlText,
  isRecord,
  labelOf,
  normalisePriority,
  normaliseStatus,
  own,
  parseTimestamp,
  plainText,
  textOf,
  toText,
  type JsonObject,
} from './fields.ts';
import { found, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput, TicketStatus } from './types.ts';

const EXPECTED = 'a Freshdesk body {"freshdesk_webhook":{"ticket_id":…}} or {"ticket":{…}}';

// Freshdesk's API numbers its default statuses; 6 and up are an account's own, unknown to us.
const STATUS_BY_NUMBER: Partial<Record<number, TicketStatus>> = { 2: 'open', 3: 'pending', 4: 'solved', 5: 'closed' };

/** A field under its placeholder name (`ticket_status`) or its API name (`status`). */
const ticketField = (record: JsonObject, name: string): unknown => own(record, `ticket_${name}`) ?? own(record, name);

const fromFreshdesk = (record: JsonObject) => {
  const status = ticketField(record, 'status');
  const priority = ticketField(record, 'priority');
  return buildTicket({
    externalId: toText(ticketField(record, 'id')),
    subject: textOf(ticketField(record, 'subject')),
    // `ticket_description` is HTML; the API's `description_text` is its plain twin.
    description: htmlText(ticketField(record, 'description')) ?? plainText(own(record, 'description_text')),
    status: labelOf(status),
    statusNormalised: typeof status === 'number' ? (STATUS_BY_NUMBER[status] ?? null) : normaliseStatus(labelOf(status)),
    priority: labelOf(priority),
    // A number is the API's 1 (low) to 4 (urgent), which normalisePriority reads.
    priorityNormalised: normalisePriority(typeof priority === 'number' ? priority : labelOf(priority)),
    // `ticket_contact_email` in current accounts; `requester_email` in older write-ups.
    requesterEmail: firstOf(
      [
        ticketField(record, 'contact_email'),
        ticketField(record, 'requester_email'),
        at(record, 'requester', 'email'),
        ticketField(record, 'email'),
      ],
      emailOf,
    ),
    // The simple body's timestamp keys are unconfirmed: the likely names are all read.
    createdAt: firstOf([ticketField(record, 'created_at'), ticketField(record, 'created_on')], parseTimestamp),
    updatedAt: firstOf([ticketField(record, 'updated_at'), ticketField(record, 'updated_on')], parseTimestamp),
  });
};

const readFreshdesk = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  const simple = own(body, 'freshdesk_webhook');
  if (isRecord(simple))
    return found([fromFreshdesk(simple)], () =>
      refused('the "freshdesk_webhook" object has no "ticket_id": add the Ticket ID placeholder to the webhook'),
    );
  const advanced = own(body, 'ticket');
  if (isRecord(advanced))
    return found([fromFreshdesk(advanced)], () => refused('the "ticket" object has no "id" (in the webhook\'s JSON: "id": {{ticket.id}})'));
  if (isRecord(body) && toText(own(body, 'ticket_id')) !== null) return found([fromFreshdesk(body)], () => unrecognised(EXPECTED));
  return unrecognised(EXPECTED);
};

export const freshdeskAdapter = platformAdapter('freshdesk', readFreshdesk);
