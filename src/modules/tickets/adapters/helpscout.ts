// Help Scout posts the bare Conversation object, with no envelope; the event's name is only in the
// X-HelpScout-Event header (`convo.created`, `convo.status`, …). There is no priority.
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
import { found, headerOf, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput } from './types.ts';

const EXPECTED = 'a Help Scout conversation object (with "id" and "mailboxId")';
const CONVERSATION_EVENT_PREFIX = 'convo.';
// Without the header, these keys tell a Help Scout conversation from any object with an id.
const CONVERSATION_KEYS = ['mailboxId', 'primaryCustomer', 'customerWaitingSince', 'threads', 'preview'];

const fromConversation = (conversation: JsonObject) => {
  const createdBy = own(conversation, 'createdBy');
  return buildTicket({
    // `id`, not `number`: the API addresses conversations by id; `number` is what people see.
    externalId: toText(own(conversation, 'id')),
    subject: textOf(own(conversation, 'subject')),
    // A plain-text excerpt of the first thread; the threads themselves are not in the webhook.
    description: plainText(own(conversation, 'preview')),
    // `active`, `pending`, `closed` or `spam`.
    status: labelOf(own(conversation, 'status')),
    priority: null,
    requesterEmail: firstOf(
      [
        at(conversation, 'primaryCustomer', 'email'),
        at(conversation, 'customer', 'email'),
        own(createdBy, 'type') === 'customer' ? own(createdBy, 'email') : null,
      ],
      emailOf,
    ),
    createdAt: parseTimestamp(own(conversation, 'createdAt')),
    // Help Scout names its last change `userUpdatedAt` (older payloads: `modifiedAt`).
    updatedAt: firstOf(
      [own(conversation, 'updatedAt'), own(conversation, 'modifiedAt'), own(conversation, 'userUpdatedAt')],
      parseTimestamp,
    ),
  });
};

const readHelpscout = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  const event = headerOf(input, 'x-helpscout-event');
  if (event !== null && !event.startsWith(CONVERSATION_EVENT_PREFIX))
    return refused(`a Help Scout "${shownText(event)}" event carries no conversation`);
  if (!isRecord(body) || toText(own(body, 'id')) === null) return unrecognised(EXPECTED);
  if (event === null && !CONVERSATION_KEYS.some((key) => Object.hasOwn(body, key))) return unrecognised(EXPECTED);
  return found([fromConversation(body)], () => unrecognised(EXPECTED));
};

export const helpscoutAdapter = platformAdapter('helpscout', readHelpscout);
