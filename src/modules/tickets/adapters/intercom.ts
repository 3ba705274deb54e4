// Intercom posts a notification_event whose `data.item` is the object the topic is about: a
// conversation (conversation.user.created, …) or a ticket (ticket.created, …). Timestamps are epoch
// seconds.
import {
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
  plainText,
  shownText,
  textOf,
  toText,
  type JsonObject,
} from './fields.ts';
import { found, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput } from './types.ts';

const EXPECTED = 'an Intercom notification_event whose "data.item" is a conversation or a ticket';
// Authors who are the company's side: their address is not the requester's.
const TEAM_AUTHOR_TYPES = new Set(['admin', 'bot', 'team']);
const MAX_CONTACTS_READ = 20;

const firstContactEmail = (item: JsonObject) => {
  const contacts = at(item, 'contacts', 'contacts');
  return Array.isArray(contacts)
    ? firstOf(
        contacts.slice(0, MAX_CONTACTS_READ).map((contact) => own(contact, 'email')),
        emailOf,
      )
    : null;
};

const fromConversation = (item: JsonObject) => {
  const author = at(item, 'source', 'author');
  const authorIsCustomer = !TEAM_AUTHOR_TYPES.has(String(own(author, 'type')));
  return buildTicket({
    externalId: toText(own(item, 'id')),
    // The title is often null and the source subject often empty (chats have none).
    subject: plainText(own(item, 'title')) ?? plainText(at(item, 'source', 'subject')),
    description: htmlText(at(item, 'source', 'body')),
    // `open`, `closed` or `snoozed`.
    status: labelOf(own(item, 'state')),
    // `priority` or `not_priority`, which normalisePriority reads as high and normal.
    priority: labelOf(own(item, 'priority')),
    requesterEmail: (authorIsCustomer ? emailOf(own(author, 'email')) : null) ?? firstContactEmail(item),
    createdAt: parseTimestamp(own(item, 'created_at')),
    updatedAt: parseTimestamp(own(item, 'updated_at')),
  });
};

const fromTicket = (item: JsonObject) => {
  const attributes = own(item, 'ticket_attributes');
  // A string (`submitted`, `in_progress`, `waiting_on_customer`, `resolved`) in older API versions,
  // an object {category, internal_label, external_label} in newer ones.
  const state = own(item, 'ticket_state');
  const stateLabel = labelOf(state) ?? textOf(own(state, 'internal_label')) ?? textOf(own(state, 'category'));
  return buildTicket({
    // `id`, not `ticket_id`: the API addresses tickets by `id`; `ticket_id` is the number shown to people.
    externalId: toText(own(item, 'id')),
    subject: plainText(own(attributes, '_default_title_')),
    description: plainText(own(attributes, '_default_description_')),
    status: stateLabel,
    statusNormalised: normaliseStatus(stateLabel) ?? normaliseStatus(own(state, 'category')),
    priority: labelOf(own(item, 'priority')),
    // Tickets name their contacts by id only, unless the workspace adds more.
    requesterEmail: firstContactEmail(item),
    createdAt: parseTimestamp(own(item, 'created_at')),
    updatedAt: parseTimestamp(own(item, 'updated_at')),
  });
};

const readIntercom = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  const item = at(body, 'data', 'item');
  if (!isRecord(item)) return unrecognised(EXPECTED);
  const type = own(item, 'type');
  const noId = () => refused(`the Intercom ${String(type)} has no "id"`);
  if (type === 'conversation') return found([fromConversation(item)], noId);
  if (type === 'ticket') return found([fromTicket(item)], noId);
  const topic = textOf(own(body, 'topic'));
  const about = typeof type === 'string' ? `a "${shownText(type)}"` : 'an item without a type';
  return refused(`the Intercom notification${topic ? ` "${shownText(topic)}"` : ''} is about ${about}, not a conversation or a ticket`);
};

export const intercomAdapter = platformAdapter('intercom', readIntercom);
