// GitHub posts {action, issue, repository, sender} for `issues` and `issue_comment` events, the
// event's name in the X-GitHub-Event header. No requester address (only the login) and no priority
// field: labels such as "priority: high" are a repository's own convention, not read.
import { at, buildTicket, emailOf, isRecord, labelOf, own, parseTimestamp, shownText, textOf, toText } from './fields.ts';
import { found, headerOf, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput } from './types.ts';

const EXPECTED = 'a GitHub "issues" webhook with an "issue" object';

const readGithub = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  const issue = own(body, 'issue');
  const event = headerOf(input, 'x-github-event');
  if (!isRecord(issue)) return event === null ? unrecognised(EXPECTED) : refused(`a GitHub "${shownText(event)}" event carries no issue`);
  // issue_comment events on pull requests describe the pull request as an issue.
  if (own(issue, 'pull_request') !== undefined) return refused('the GitHub event is about a pull request, not an issue');
  const ticket = buildTicket({
    // `id`, unique across repositories; `number` (#42) repeats in every repository of an organisation.
    externalId: toText(own(issue, 'id')),
    subject: textOf(own(issue, 'title')),
    // Markdown, kept as sent.
    description: textOf(own(issue, 'body')),
    // `open` or `closed`.
    status: labelOf(own(issue, 'state')),
    priority: null,
    requesterEmail: emailOf(at(issue, 'user', 'email')),
    createdAt: parseTimestamp(own(issue, 'created_at')),
    updatedAt: parseTimestamp(own(issue, 'updated_at')),
  });
  return found([ticket], () => refused('the GitHub "issue" has no "id"'));
};

export const githubAdapter = platformAdapter('github', readGithub);
