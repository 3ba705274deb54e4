// Linear posts {action:"create"|"update"|"remove", type:"Issue", data:{…the issue…}, createdAt,
// webhookTimestamp (ms), …}. Other types (Comment, Project, IssueLabel, …) share the envelope.
import {
  buildTicket,
  isRecord,
  labelOf,
  normalisePriority,
  normaliseStatus,
  own,
  parseTimestamp,
  shownText,
  textOf,
  toText,
} from './fields.ts';
import { found, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput, TicketPriority } from './types.ts';

const EXPECTED = 'a Linear webhook {"type":"Issue","data":{…}}';
// Linear's numbers: 0 no priority, 1 urgent, 2 high, 3 medium, 4 low. Only Linear counts this way
// round, so the mapping lives here and not in normalisePriority.
const PRIORITY_BY_NUMBER: readonly (TicketPriority | null)[] = [null, 'urgent', 'high', 'normal', 'low'];

const readLinear = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  const data = own(body, 'data');
  const type = own(body, 'type');
  if (!isRecord(data)) return unrecognised(EXPECTED);
  if (typeof type === 'string' && type !== 'Issue') return refused(`a Linear "${shownText(type)}" event carries no issue`);
  if (type === undefined && own(data, 'identifier') === undefined) return unrecognised(EXPECTED);
  const priorityNumber = own(data, 'priority');
  const state = own(data, 'state');
  const stateName = labelOf(state);
  const ticket = buildTicket({
    // `id` (a UUID), not `identifier`: "SUP-123" changes when the issue moves to another team.
    externalId: toText(own(data, 'id')),
    subject: textOf(own(data, 'title')),
    // Markdown, kept as sent.
    description: textOf(own(data, 'description')),
    status: stateName,
    // A team's own state names ("Ready for QA") still have one of Linear's state types.
    statusNormalised: normaliseStatus(stateName) ?? normaliseStatus(own(state, 'type')),
    priority: textOf(own(data, 'priorityLabel')) ?? textOf(priorityNumber),
    priorityNormalised:
      typeof priorityNumber === 'number'
        ? (PRIORITY_BY_NUMBER[priorityNumber] ?? null)
        : normalisePriority(textOf(own(data, 'priorityLabel'))),
    // Linear sends only `creatorId`; an address written in the description is not a requester.
    requesterEmail: null,
    createdAt: parseTimestamp(own(data, 'createdAt')),
    updatedAt:
      parseTimestamp(own(data, 'updatedAt')) ?? parseTimestamp(own(body, 'webhookTimestamp')) ?? parseTimestamp(own(body, 'createdAt')),
  });
  return found([ticket], () => refused('the Linear issue has no "data.id"'));
};

export const linearAdapter = platformAdapter('linear', readLinear);
