// Jira Cloud posts {timestamp (ms), webhookEvent, user, issue:{id, key, fields:{…}}, changelog?}.
// Every issue event carries the issue as it now is, so comment and update events refresh it too.
import { adfText, at, buildTicket, emailOf, isRecord, labelOf, normaliseStatus, own, parseTimestamp, textOf, toText } from './fields.ts';
import { found, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput, TicketStatus } from './types.ts';

const EXPECTED = 'a Jira webhook with an "issue" object';
// Every Jira status, however a project names it, belongs to one of three categories.
const STATUS_BY_CATEGORY: Partial<Record<string, TicketStatus>> = { new: 'open', indeterminate: 'open', done: 'solved' };

const readJira = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  const issue = own(body, 'issue');
  if (!isRecord(issue)) return unrecognised(EXPECTED);
  // An Automation rule's hand-written body may put the fields on the issue itself.
  const fields = isRecord(own(issue, 'fields')) ? own(issue, 'fields') : issue;
  const status = own(fields, 'status');
  const statusLabel = labelOf(status);
  const categoryKey = at(status, 'statusCategory', 'key');
  const description = own(fields, 'description');
  const ticket = buildTicket({
    // `id`, not the key: "SUP-42" changes when the issue moves to another project, the id never does.
    // A hand-written body with only the key still names the issue.
    externalId: toText(own(issue, 'id')) ?? toText(own(issue, 'key')),
    subject: textOf(own(fields, 'summary')),
    // Wiki markup as sent (a string), or Atlassian Document Format (an object) as plain text.
    description: textOf(description) ?? adfText(description),
    status: statusLabel,
    statusNormalised: normaliseStatus(statusLabel) ?? (typeof categoryKey === 'string' ? (STATUS_BY_CATEGORY[categoryKey] ?? null) : null),
    priority: labelOf(own(fields, 'priority')),
    // Privacy settings may hide the address; then it is absent, not guessed.
    requesterEmail: emailOf(at(fields, 'reporter', 'emailAddress')),
    createdAt: parseTimestamp(own(fields, 'created')),
    updatedAt: parseTimestamp(own(fields, 'updated')) ?? parseTimestamp(own(body, 'timestamp')),
  });
  return found([ticket], () => refused('the Jira "issue" has no "id"'));
};

export const jiraAdapter = platformAdapter('jira', readJira);
