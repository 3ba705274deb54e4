// Front's application webhooks post an event preview {id:"evt_…", type, emitted_at, conversation,
// source, target}. The preview has no message body and no priority; times are epoch seconds with
// fractions.
import {
  at,
  buildTicket,
  emailOf,
  isRecord,
  labelOf,
  normaliseStatus,
  own,
  parseTimestamp,
  textOf,
  toText,
  type JsonObject,
} from './fields.ts';
import { found, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput } from './types.ts';

const EXPECTED = 'a Front event with a "conversation" object';
// A message has a handful of recipients; a body with more is not worth walking.
const MAX_RECIPIENTS_READ = 100;

/** The sender of the event's message, when the event is about an inbound message. */
const inboundSender = (event: JsonObject): string | null => {
  const message = at(event, 'target', 'data');
  if (at(event, 'target', '_meta', 'type') !== 'message' || own(message, 'is_inbound') !== true) return null;
  const recipients = own(message, 'recipients');
  if (!Array.isArray(recipients)) return null;
  const sender = recipients.slice(0, MAX_RECIPIENTS_READ).find((recipient) => own(recipient, 'role') === 'from');
  return emailOf(own(sender, 'handle'));
};

const fromConversation = (event: JsonObject, conversation: JsonObject) => {
  const status = labelOf(own(conversation, 'status'));
  return buildTicket({
    externalId: toText(own(conversation, 'id')),
    subject: textOf(own(conversation, 'subject')),
    // Not in the preview: only a truncated `blurb` of the event's message, which for a reply is the
    // reply, not the request. The body is fetched through `_links.related.messages`, or left unknown.
    description: null,
    // `unassigned`, `assigned`, `archived`, `deleted`, …; newer accounts add a `status_category`.
    status,
    statusNormalised: normaliseStatus(status) ?? normaliseStatus(own(conversation, 'status_category')),
    priority: null,
    // The main recipient is the contact; its handle may be a phone number or a social handle.
    requesterEmail: emailOf(at(conversation, 'recipient', 'handle')) ?? inboundSender(event),
    createdAt: parseTimestamp(own(conversation, 'created_at')),
    updatedAt: parseTimestamp(own(conversation, 'updated_at')) ?? parseTimestamp(own(event, 'emitted_at')),
  });
};

const readFront = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  const conversation = own(body, 'conversation');
  if (!isRecord(body) || !isRecord(conversation)) return unrecognised(EXPECTED);
  return found([fromConversation(body, conversation)], () => refused('the Front "conversation" has no "id"'));
};

export const frontAdapter = platformAdapter('front', readFront);
