// The platform adapters: every documented webhook body (test/fixtures/platforms, copied from the
// platforms reference) read field by field through its platform's adapter and, where its root key
// allows, through the generic detection; then the parsing helpers, and bodies that hold no ticket.
import { describe, expect, test } from 'bun:test';
import { adapterFor, extractTickets } from '../../src/modules/tickets/adapters/index.ts';
import {
  MAX_TICKETS_PER_BODY,
  adfText,
  emailOf,
  normalisePriority,
  normaliseStatus,
  parseTimestamp,
  stripHtml,
  toText,
} from '../../src/modules/tickets/adapters/fields.ts';
import type { AdapterResult, ExtractedTicket, TicketPriority, TicketStatus } from '../../src/modules/tickets/adapters/types.ts';
import { PLATFORMS, type Platform } from '../../src/modules/tickets/platforms.ts';

const fixture = async (name: string): Promise<unknown> => Bun.file(new URL(`../fixtures/platforms/${name}.json`, import.meta.url)).json();

const extract = (platform: Platform, body: unknown, headers: Record<string, string> = {}) => extractTickets(platform, { body, headers });

const ticketsOf = (result: AdapterResult): ExtractedTicket[] => {
  if (!result.ok) throw new Error(`expected tickets, got: ${result.reason}`);
  return result.tickets;
};

const reasonOf = (result: AdapterResult): string => {
  if (result.ok) throw new Error(`expected no ticket, got ${JSON.stringify(result.tickets)}`);
  return result.reason;
};

const SUBJECT = 'Export to CSV times out for large accounts';
const DESCRIPTION = 'Since Monday our nightly export fails after 30s. This blocks our finance close.';
const CAROL = 'carol.customer@acme.example.com';
const AT_0915 = '2026-01-05T09:15:00.000Z';
const GENERIC_EXPECTED = 'a "ticket", "issue", "case" or "conversation" object, or an array of events';

interface FixtureCase {
  fixture: string;
  platform: Platform;
  /** The fixtures README: does the body's root key alone find the ticket? */
  rootKey: boolean;
  ticket: ExtractedTicket;
}

const FIXTURES: FixtureCase[] = [
  {
    fixture: 'generic-ticket',
    platform: 'generic',
    rootKey: true,
    ticket: {
      externalId: 'TCK-10042',
      subject: SUBJECT,
      description: DESCRIPTION,
      status: 'open',
      priority: 'high',
      statusNormalised: 'open',
      priorityNormalised: 'high',
      requesterEmail: CAROL,
      createdAt: AT_0915,
      updatedAt: AT_0915,
    },
  },
  {
    fixture: 'zendesk-ticket',
    platform: 'zendesk',
    rootKey: true,
    ticket: {
      externalId: '35436',
      subject: SUBJECT,
      // {{ticket.description}} renders with its author-and-time header: kept as sent.
      description: `----------------------------------------------\n\nCarol Customer, Jan 5, 2026, 09:15\n\n${DESCRIPTION}`,
      status: 'Open',
      priority: 'High',
      statusNormalised: 'open',
      priorityNormalised: 'high',
      requesterEmail: CAROL, // from requester.email
      createdAt: AT_0915, // "2026-01-05T09:15Z": no seconds
      updatedAt: AT_0915,
    },
  },
  {
    fixture: 'zendesk-event-ticket-created',
    platform: 'zendesk',
    rootKey: false,
    ticket: {
      externalId: '35436',
      subject: SUBJECT,
      description: DESCRIPTION,
      status: 'NEW',
      priority: 'HIGH',
      statusNormalised: 'open',
      priorityNormalised: 'high',
      requesterEmail: null, // events carry only requester_id
      createdAt: AT_0915,
      updatedAt: AT_0915,
    },
  },
  {
    fixture: 'freshdesk-ticket',
    platform: 'freshdesk',
    rootKey: false,
    ticket: {
      externalId: '1228307', // a number in the body
      subject: SUBJECT,
      description: DESCRIPTION, // from <div>…</div>
      status: 'Open',
      priority: 'High',
      statusNormalised: 'open',
      priorityNormalised: 'high',
      requesterEmail: CAROL,
      createdAt: null,
      updatedAt: null, // the simple body has no timestamps
    },
  },
  {
    fixture: 'intercom-conversation',
    platform: 'intercom',
    rootKey: false,
    ticket: {
      externalId: '215468843221002',
      subject: null, // title null, source.subject ""
      description: DESCRIPTION, // from <p>…</p>
      status: 'open',
      priority: 'priority',
      statusNormalised: 'open',
      priorityNormalised: 'high',
      requesterEmail: CAROL,
      createdAt: AT_0915,
      updatedAt: AT_0915, // epoch seconds 1767604500
    },
  },
  {
    fixture: 'intercom-ticket',
    platform: 'intercom',
    rootKey: false,
    ticket: {
      externalId: '1295', // `id`, not `ticket_id` 1390
      subject: SUBJECT,
      description: 'Since Monday our nightly export fails after 30s.',
      status: 'submitted',
      priority: null,
      statusNormalised: 'open',
      priorityNormalised: null,
      requesterEmail: null,
      createdAt: AT_0915,
      updatedAt: AT_0915,
    },
  },
  {
    fixture: 'hubspot-ticket',
    platform: 'hubspot',
    rootKey: false,
    ticket: {
      externalId: '1122334455',
      subject: null,
      description: null,
      status: null,
      priority: 'HIGH', // from the hs_ticket_priority propertyChange
      statusNormalised: null,
      priorityNormalised: 'high',
      requesterEmail: null,
      createdAt: '2026-01-05T09:15:00.123Z', // the ticket.creation event's occurredAt
      updatedAt: '2026-01-05T09:15:00.456Z', // the latest occurredAt
    },
  },
  {
    fixture: 'front-conversation',
    platform: 'front',
    rootKey: true,
    ticket: {
      externalId: 'cnv_7b3c4d5e',
      subject: SUBJECT,
      description: null,
      status: 'unassigned',
      priority: null,
      statusNormalised: 'open',
      priorityNormalised: null,
      requesterEmail: CAROL,
      createdAt: '2026-01-05T09:14:59.876Z', // 1767604499.876
      updatedAt: '2026-01-05T09:15:00.123Z', // the event's emitted_at
    },
  },
  {
    fixture: 'helpscout-conversation',
    platform: 'helpscout',
    rootKey: false,
    ticket: {
      externalId: '2391938111',
      subject: SUBJECT,
      description: DESCRIPTION,
      status: 'active',
      priority: null,
      statusNormalised: 'open',
      priorityNormalised: null,
      requesterEmail: CAROL,
      createdAt: AT_0915,
      updatedAt: AT_0915,
    },
  },
  {
    fixture: 'jira-issue',
    platform: 'jira',
    rootKey: true,
    ticket: {
      externalId: '10042',
      subject: SUBJECT,
      description: DESCRIPTION,
      status: 'To Do',
      priority: 'High',
      statusNormalised: 'open',
      priorityNormalised: 'high',
      requesterEmail: 'dan.agent@example.com',
      createdAt: AT_0915,
      updatedAt: AT_0915, // "2026-01-05T09:15:00.000+0000"
    },
  },
  {
    fixture: 'linear-issue',
    platform: 'linear',
    rootKey: false,
    ticket: {
      externalId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      subject: SUBJECT,
      description: 'Since Monday our nightly export fails after 30s. Reported by carol.customer@acme.example.com.',
      status: 'Todo',
      priority: 'High',
      statusNormalised: 'open',
      priorityNormalised: 'high',
      requesterEmail: null, // an address in the description is not a requester
      createdAt: '2026-01-05T09:15:00.123Z',
      updatedAt: '2026-01-05T09:15:00.123Z',
    },
  },
  {
    fixture: 'github-issue',
    platform: 'github',
    rootKey: true,
    ticket: {
      externalId: '2345678901',
      subject: SUBJECT,
      description: DESCRIPTION,
      status: 'open',
      priority: null, // the "priority: high" label is not a priority field
      statusNormalised: 'open',
      priorityNormalised: null,
      requesterEmail: null,
      createdAt: AT_0915,
      updatedAt: AT_0915,
    },
  },
  {
    fixture: 'salesforce-case',
    platform: 'salesforce',
    rootKey: true,
    ticket: {
      externalId: '5005g00000EXAMPLE1',
      subject: SUBJECT,
      description: DESCRIPTION,
      status: 'New',
      priority: 'High',
      statusNormalised: 'open',
      priorityNormalised: 'high',
      requesterEmail: CAROL,
      createdAt: AT_0915,
      updatedAt: AT_0915,
    },
  },
  {
    fixture: 'gorgias-ticket',
    platform: 'gorgias',
    rootKey: true,
    ticket: {
      externalId: '123456',
      subject: SUBJECT,
      description: DESCRIPTION,
      status: 'open',
      priority: 'high',
      statusNormalised: 'open',
      priorityNormalised: 'high',
      requesterEmail: CAROL,
      createdAt: '2026-01-05T09:15:00.123Z', // "2026-01-05T09:15:00.123456", no zone
      updatedAt: '2026-01-05T09:15:00.123Z',
    },
  },
  {
    fixture: 'zohodesk-ticket',
    platform: 'zoho',
    rootKey: false,
    ticket: {
      externalId: '1004699000046503129',
      subject: SUBJECT,
      description: DESCRIPTION,
      status: 'Open',
      priority: 'High',
      statusNormalised: 'open',
      priorityNormalised: 'high',
      requesterEmail: CAROL,
      createdAt: AT_0915,
      updatedAt: AT_0915,
    },
  },
];

describe('every ticket fixture, field by field', () => {
  for (const { fixture: name, platform, ticket } of FIXTURES) {
    test(`${name} through the ${platform} adapter`, async () => {
      const tickets = ticketsOf(extract(platform, await fixture(name)));
      expect(tickets).toHaveLength(1);
      const [extracted] = tickets;
      for (const field of Object.keys(ticket) as (keyof ExtractedTicket)[])
        expect({ field, value: extracted?.[field] }).toEqual({ field, value: ticket[field] });
      expect(extracted).toEqual(ticket);
    });
  }

  for (const { fixture: name, ticket } of FIXTURES.filter((entry) => entry.rootKey)) {
    test(`${name} through the generic detection (root key)`, async () => {
      expect(ticketsOf(extract('generic', await fixture(name)))).toEqual([ticket]);
    });
  }

  // The common wrappers (data.item, detail, freshdesk_webhook, payload, data) and bare objects.
  for (const { fixture: name, ticket } of FIXTURES.filter((entry) => !entry.rootKey && entry.platform !== 'hubspot')) {
    test(`${name} through the generic detection (wrapper)`, async () => {
      expect(ticketsOf(extract('generic', await fixture(name)))).toEqual([ticket]);
    });
  }

  test('hubspot-ticket through the generic detection: the object id and the latest event time, nothing the events only name', async () => {
    expect(ticketsOf(extract('generic', await fixture('hubspot-ticket')))).toEqual([
      {
        externalId: '1122334455',
        subject: null,
        description: null,
        status: null,
        priority: null,
        statusNormalised: null,
        priorityNormalised: null,
        requesterEmail: null,
        createdAt: null,
        updatedAt: '2026-01-05T09:15:00.456Z',
      },
    ]);
  });

  test('every platform has an adapter that names its platform', () => {
    for (const platform of PLATFORMS) expect(adapterFor(platform).platform).toBe(platform);
  });
});

describe('parseTimestamp', () => {
  const cases: [unknown, string | null][] = [
    ['2026-01-05T09:15:00Z', AT_0915],
    ['2026-01-05T09:15:00.000+0000', AT_0915], // Jira, Salesforce: no colon
    ['2026-01-05T10:15:00+01:00', AT_0915],
    ['2026-01-05T04:45:00-04:30', AT_0915],
    ['2026-01-05T10:15:00+01', AT_0915],
    ['2013-12-12T05:35Z', '2013-12-12T05:35:00.000Z'], // Zendesk: no seconds
    ['2026-01-05T09:15:00', AT_0915], // no zone: UTC
    ['2026-01-05 09:15:00', AT_0915],
    ['2026-01-05T09:15:00.123456', '2026-01-05T09:15:00.123Z'], // Gorgias: microseconds, no zone
    ['2026-01-05T09:15:01.123456789Z', '2026-01-05T09:15:01.123Z'], // nanoseconds, cut not rounded
    ['2026-01-05T09:15:00.9999Z', '2026-01-05T09:15:00.999Z'],
    ['2026-01-05', '2026-01-05T00:00:00.000Z'],
    [1767604500, AT_0915], // epoch seconds
    ['1767604500', AT_0915], // as a string (WhatsApp)
    [1767604499.876, '2026-01-05T09:14:59.876Z'], // Front: a float
    ['1767604500.5', '2026-01-05T09:15:00.500Z'],
    [1767604500123, '2026-01-05T09:15:00.123Z'], // epoch ms (HubSpot, Jira, Linear)
    ['1767604500123', '2026-01-05T09:15:00.123Z'], // Zoho's eventTime
    ['May18, 2014', '2014-05-18T00:00:00.000Z'], // Zendesk's plain {{ticket.created_at}}
    ['Mon, 05 Jan 2026 10:15:00 +0100', AT_0915],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['1969-12-31T23:59:59Z', '1969-12-31T23:59:59.000Z'],
    // Unreadable: null, never an exception.
    ['2026-02-29T00:00:00Z', null],
    ['2026-13-01T00:00:00Z', null],
    ['2026-01-05T24:00:00Z', null],
    ['2026-01-05T09:15:00+25:00', null],
    ['yesterday', null],
    ['', null],
    ['9'.repeat(5_000_000), null],
    [0, null], // "not yet", not 1970
    [-1, null],
    [Number.NaN, null],
    [Number.POSITIVE_INFINITY, null],
    [1e20, null],
    [null, null],
    [undefined, null],
    [true, null],
    [{}, null],
    [[1767604500], null],
  ];
  for (const [value, expected] of cases) {
    test(`${typeof value === 'string' && value.length > 40 ? `a ${value.length}-character string` : (JSON.stringify(value) ?? String(value))} → ${expected}`, () => {
      expect(parseTimestamp(value)).toBe(expected);
    });
  }
});

describe('toText', () => {
  test('ids as text: numbers written as integers, strings kept as sent', () => {
    expect(toText(1228307)).toBe('1228307');
    expect(toText(123.0)).toBe('123');
    expect(toText(2345678901)).toBe('2345678901');
    expect(toText(-0)).toBe('0');
    expect(toText(1e21)).toBe('1000000000000000000000'); // never "1e+21"
    expect(toText(12.5)).toBe('12.5');
    expect(toText('1004699000046503129')).toBe('1004699000046503129'); // more digits than a number holds exactly
    expect(toText(1004699000046503129n)).toBe('1004699000046503129');
    expect(toText('00042')).toBe('00042');
    expect(toText('  TCK-1  ')).toBe('TCK-1');
    for (const nothing of ['', '   ', null, undefined, true, {}, [], Number.NaN]) expect(toText(nothing)).toBeNull();
  });
});

describe('stripHtml', () => {
  test('tags removed, line-ending tags become new lines, entities decoded, whitespace collapsed per line', () => {
    expect(stripHtml('<div>Hello&nbsp;<b>world</b></div><p>A &amp; B &lt;c&gt; &quot;q&quot; &#39;s&#39; &#x27;x&#x27;</p>')).toBe(
      "Hello world\nA & B <c> \"q\" 's' 'x'",
    );
    expect(stripHtml('one<br>two<br/>three<BR />four')).toBe('one\ntwo\nthree\nfour');
    expect(stripHtml('  <p>  spaced \t  out  </p>\n\n\n\n<p>next</p>  ')).toBe('spaced out\n\nnext');
    expect(stripHtml('<ul><li>a</li><li>b</li></ul>')).toBe('a\nb');
    expect(stripHtml('<style>.x{color:red}</style><script>alert("<p>")</script><!-- <p>hidden</p> -->shown')).toBe('shown');
    expect(stripHtml('&unknown; &#0; &#xD800; &amp;lt;')).toBe('&unknown; \ufffd \ufffd &lt;'); // decoded once, not twice
    expect(stripHtml('a < b and c > d, x<3')).toBe('a < b and c > d, x<3'); // not tags
    expect(stripHtml('unclosed <a href="x')).toBe('unclosed <a href="x');
    expect(stripHtml('plain text\nwith lines')).toBe('plain text\nwith lines');
    expect(stripHtml('')).toBe('');
  });

  // A quadratic scan would take minutes on these; linear ones take well under a second.
  const FIVE_MB = 5_000_000;
  const hostile: Record<string, string> = {
    'opening brackets': '<'.repeat(FIVE_MB),
    'tags never closed': '<a'.repeat(FIVE_MB / 2),
    'one tag never closed': `<a ${'x'.repeat(FIVE_MB)}`,
    'comments never closed': '<!--'.repeat(FIVE_MB / 4),
    'styles never closed': '<style>'.repeat(FIVE_MB / 7),
    'closing brackets': '</'.repeat(FIVE_MB / 2),
    ampersands: '&'.repeat(FIVE_MB),
    'entity-like runs': `&${'a'.repeat(40)}`.repeat(FIVE_MB / 41),
    'line breaks': '<br>'.repeat(FIVE_MB / 4),
    'tags and entities': '<p>a &amp; b</p>'.repeat(FIVE_MB / 16),
    whitespace: ' \t\n'.repeat(FIVE_MB / 3),
  };
  for (const [name, html] of Object.entries(hostile)) {
    test(`linear on 5 MB of ${name}`, () => {
      const started = performance.now();
      stripHtml(html);
      expect(performance.now() - started).toBeLessThan(3000);
    });
  }

  test('a 5 MB hostile description in a body is read in linear time too', () => {
    const started = performance.now();
    const hostileText = '<p x'.repeat(FIVE_MB / 4);
    const tickets = ticketsOf(
      extract('generic', { ticket: { id: 1, description: hostileText, email: hostileText, created_at: hostileText } }),
    );
    expect(tickets[0]?.requesterEmail).toBeNull();
    expect(tickets[0]?.createdAt).toBeNull();
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe('normaliseStatus and normalisePriority', () => {
  test('statuses onto open / pending / solved / closed, ignoring case, spaces and underscores', () => {
    const expected: Record<string, TicketStatus | null> = {
      new: 'open',
      OPEN: 'open',
      Active: 'open',
      unassigned: 'open',
      assigned: 'open',
      'In Progress': 'open',
      in_progress: 'open',
      'To Do': 'open',
      Todo: 'open',
      submitted: 'open',
      pending: 'pending',
      waiting: 'pending',
      'On Hold': 'pending',
      hold: 'pending',
      snoozed: 'pending',
      waiting_on_customer: 'pending',
      'Waiting on Customer': 'pending',
      solved: 'solved',
      Resolved: 'solved',
      DONE: 'solved',
      fixed: 'solved',
      closed: 'closed',
      archived: 'closed',
      spam: 'closed',
      deleted: 'closed',
      cancelled: 'closed',
      Canceled: 'closed',
      published: null,
      whatever: null,
      '': null,
    };
    for (const [label, status] of Object.entries(expected)) expect({ label, status: normaliseStatus(label) }).toEqual({ label, status });
    for (const notALabel of [2, null, undefined, {}, 'open'.repeat(100)]) expect(normaliseStatus(notALabel)).toBeNull();
  });

  test('priorities onto low / normal / high / urgent', () => {
    const expected: [unknown, TicketPriority | null][] = [
      ['low', 'low'],
      ['Lowest', 'low'],
      ['LOW', 'low'],
      ['normal', 'normal'],
      ['Medium', 'normal'],
      ['MEDIUM', 'normal'],
      ['not_priority', 'normal'],
      ['high', 'high'],
      ['HIGH', 'high'],
      ['priority', 'high'],
      ['urgent', 'urgent'],
      ['URGENT', 'urgent'],
      ['Critical', 'urgent'],
      ['Highest', 'urgent'],
      ['P1', 'urgent'],
      ['blocker', 'urgent'],
      // Freshdesk's API numbers, 1 (low) to 4 (urgent)
      [1, 'low'],
      [2, 'normal'],
      [3, 'high'],
      [4, 'urgent'],
      [0, null],
      [5, null],
      [2.5, null],
      ['2', null],
      ['someday', null],
      [null, null],
      [{ name: 'High' }, null],
    ];
    for (const [label, priority] of expected) expect({ label, priority: normalisePriority(label) }).toEqual({ label, priority });
  });

  test('Linear numbers its priorities the other way round, in its own adapter only', () => {
    const linearPriority = (priority: number, priorityLabel?: string) =>
      ticketsOf(extract('linear', { type: 'Issue', data: { id: 'i1', title: 't', priority, priorityLabel } }))[0];
    expect(linearPriority(0, 'No priority')).toMatchObject({ priority: 'No priority', priorityNormalised: null });
    expect(linearPriority(1, 'Urgent')).toMatchObject({ priority: 'Urgent', priorityNormalised: 'urgent' });
    expect(linearPriority(2, 'High')).toMatchObject({ priority: 'High', priorityNormalised: 'high' });
    expect(linearPriority(3, 'Medium')).toMatchObject({ priority: 'Medium', priorityNormalised: 'normal' });
    expect(linearPriority(4)).toMatchObject({ priority: '4', priorityNormalised: 'low' });
  });
});

describe('e-mail addresses', () => {
  test('lower-cased, trimmed, and only when they look like one', () => {
    expect(emailOf('  Carol.Customer@ACME.example.com ')).toBe(CAROL);
    expect(emailOf('Carol Customer <Carol.Customer@acme.example.com>')).toBe(CAROL);
    for (const notAnEmail of [
      '+15551234567',
      '@carol',
      'carol@localhost',
      '{{ticket.requester.email}}',
      'a b@c.d',
      '',
      null,
      42,
      `${'a'.repeat(400)}@x.com`,
    ]) {
      expect(emailOf(notAnEmail)).toBeNull();
    }
  });

  test('a Front conversation whose recipient is a phone number has no requester e-mail', async () => {
    const body = (await fixture('front-conversation')) as {
      conversation: { recipient: { handle: string } };
      target: { data: { recipients: { handle: string }[] } };
    };
    body.conversation.recipient.handle = '+15551234567';
    body.target.data.recipients[0]!.handle = '+15551234567';
    expect(ticketsOf(extract('front', body))[0]?.requesterEmail).toBeNull();
  });
});

describe('platform details', () => {
  test('Zendesk events accept numeric ids and lower-case enums, and name the ticket in `subject` when `detail.id` is missing', () => {
    const [ticket] = ticketsOf(
      extract('zendesk', {
        type: 'zen:event-type:ticket.status_changed',
        subject: 'zen:ticket:77',
        time: '2026-01-06T10:00:00Z',
        detail: { status: 'solved', priority: 'low' },
      }),
    );
    expect(ticket).toMatchObject({
      externalId: '77',
      status: 'solved',
      statusNormalised: 'solved',
      priorityNormalised: 'low',
      updatedAt: '2026-01-06T10:00:00.000Z',
    });
    expect(
      ticketsOf(extract('zendesk', { type: 'zen:event-type:ticket.created', detail: { id: 35436, status: 'open' } }))[0]?.externalId,
    ).toBe('35436');
  });

  test("Freshdesk's advanced body may use the API's numbers for status and priority", () => {
    const [ticket] = ticketsOf(
      extract('freshdesk', {
        ticket: { id: 7, subject: 's', status: 4, priority: 1, description: '<b>Hi</b> there', requester: { email: 'A@B.example' } },
      }),
    );
    expect(ticket).toEqual({
      externalId: '7',
      subject: 's',
      description: 'Hi there',
      status: '4',
      priority: '1',
      statusNormalised: 'solved',
      priorityNormalised: 'low',
      requesterEmail: 'a@b.example',
      createdAt: null,
      updatedAt: null,
    });
  });

  test('an Intercom conversation a teammate started has no requester e-mail: the author is the teammate', async () => {
    const body = (await fixture('intercom-conversation')) as { data: { item: { source: { author: { type: string; email: string } } } } };
    body.data.item.source.author = { type: 'admin', email: 'dan.agent@example.com' };
    expect(ticketsOf(extract('intercom', body))[0]?.requesterEmail).toBeNull();
  });

  test('HubSpot: events out of order still leave the latest priority, one ticket per object', () => {
    const tickets = ticketsOf(
      extract('hubspot', [
        {
          subscriptionType: 'ticket.propertyChange',
          objectId: 1,
          occurredAt: 3000000000000,
          propertyName: 'hs_ticket_priority',
          propertyValue: 'URGENT',
        },
        {
          subscriptionType: 'ticket.propertyChange',
          objectId: 1,
          occurredAt: 2000000000000,
          propertyName: 'hs_ticket_priority',
          propertyValue: 'LOW',
        },
        {
          subscriptionType: 'ticket.propertyChange',
          objectId: 2,
          occurredAt: 2000000000000,
          propertyName: 'subject',
          propertyValue: 'New subject',
        },
        { subscriptionType: 'contact.creation', objectId: 3, occurredAt: 2000000000000 },
      ]),
    );
    expect(
      tickets.map((ticket) => [ticket.externalId, ticket.priority, ticket.priorityNormalised, ticket.subject, ticket.updatedAt]),
    ).toEqual([
      ['1', 'URGENT', 'urgent', null, '2065-01-24T05:20:00.000Z'],
      ['2', null, null, 'New subject', '2033-05-18T03:33:20.000Z'],
    ]);
  });

  test('Zoho: a Ticket_Add and a Ticket_Update of one ticket make one ticket, the later; comments are skipped', async () => {
    const [added] = (await fixture('zohodesk-ticket')) as { payload: Record<string, unknown> }[];
    const updated = {
      eventType: 'Ticket_Update',
      eventTime: '1767608100000',
      payload: { ...added!.payload, status: 'Escalated', statusType: 'Open', modifiedTime: '2026-01-05T10:15:00.000Z' },
    };
    const comment = { eventType: 'Ticket_Comment_Add', payload: { id: '999', content: 'a comment' } };
    const tickets = ticketsOf(extract('zoho', [added, updated, comment]));
    expect(tickets).toHaveLength(1);
    expect(tickets[0]).toMatchObject({
      externalId: '1004699000046503129',
      status: 'Escalated',
      statusNormalised: 'open',
      updatedAt: '2026-01-05T10:15:00.000Z',
    });
  });

  test('Jira: an Atlassian Document Format description as text, the status category when the name is a project’s own', () => {
    const [ticket] = ticketsOf(
      extract('jira', {
        issue: {
          id: '10043',
          fields: {
            summary: 's',
            status: { name: 'Awaiting Deploy', statusCategory: { key: 'indeterminate' } },
            description: {
              type: 'doc',
              version: 1,
              content: [
                { type: 'paragraph', content: [{ type: 'text', text: 'First' }, { type: 'hardBreak' }, { type: 'text', text: 'line' }] },
                { type: 'paragraph', content: [{ type: 'text', text: 'Second' }] },
              ],
            },
          },
        },
      }),
    );
    expect(ticket).toMatchObject({
      externalId: '10043',
      status: 'Awaiting Deploy',
      statusNormalised: 'open',
      description: 'First\nline\nSecond',
    });
    expect(adfText({ type: 'paragraph' })).toBeNull();
  });

  test('Linear: a team’s own state name falls back on its state type', () => {
    const [ticket] = ticketsOf(
      extract('linear', {
        type: 'Issue',
        data: { id: 'i2', title: 't', state: { name: 'Shipped to QA', type: 'completed' }, createdAt: '2026-01-05T09:15:00Z' },
        webhookTimestamp: 1767608100000,
      }),
    );
    expect(ticket).toMatchObject({
      status: 'Shipped to QA',
      statusNormalised: 'solved',
      createdAt: AT_0915,
      updatedAt: '2026-01-05T10:15:00.000Z',
    });
  });

  test('Salesforce: a bare Case record from Apex, and an array of them', () => {
    const record = {
      attributes: { type: 'Case' },
      Id: '500A',
      CaseNumber: '1',
      Subject: 's',
      Status: 'Closed',
      ContactEmail: 'c@x.example',
      LastModifiedDate: '2026-01-06T00:00:00.000+0000',
    };
    expect(ticketsOf(extract('salesforce', record))[0]).toMatchObject({
      externalId: '500A',
      statusNormalised: 'closed',
      requesterEmail: 'c@x.example',
      updatedAt: '2026-01-06T00:00:00.000Z',
    });
    expect(ticketsOf(extract('salesforce', [record, { ...record, Id: '500B' }])).map((ticket) => ticket.externalId)).toEqual([
      '500A',
      '500B',
    ]);
  });

  test('a platform adapter that finds none of its shapes falls back on the generic detection', () => {
    // A Zendesk admin who wrote {"payload":{…}} instead of {"ticket":{…}}.
    expect(ticketsOf(extract('zendesk', { payload: { id: 77, title: 'Hand-written', status: 'pending' } }))).toEqual([
      {
        externalId: '77',
        subject: 'Hand-written',
        description: null,
        status: 'pending',
        priority: null,
        statusNormalised: 'pending',
        priorityNormalised: null,
        requesterEmail: null,
        createdAt: null,
        updatedAt: null,
      },
    ]);
    expect(ticketsOf(extract('gorgias', { case: { id: 'c-1', subject: 'via case' } }))[0]?.externalId).toBe('c-1');
  });
});

describe('bodies without a ticket', () => {
  test('the reason says what was looked for and what came', () => {
    expect(reasonOf(extract('generic', { foo: 1, bar: 2 }))).toBe(
      `no ticket found: expected ${GENERIC_EXPECTED}; got an object with keys [foo, bar]`,
    );
    expect(reasonOf(extract('zendesk', { foo: 1, bar: 2 }))).toBe(
      `no ticket found: expected a Zendesk trigger body {"ticket":{…}} or a ticket event {"type":"zen:event-type:ticket.…","detail":{…}}, or ${GENERIC_EXPECTED}; got an object with keys [foo, bar]`,
    );
    expect(reasonOf(extract('generic', { ticket: { subject: 'no id' } }))).toBe(
      'no ticket found: the "ticket" object has no id; looked for "id", "ticket_id", "ticketId", "objectId"',
    );
    expect(reasonOf(extract('zendesk', { ticket: { subject: 'no id' } }))).toBe(
      'the "ticket" object has no "id" (in the trigger\'s JSON body: "id": "{{ticket.id}}")',
    );
    const manyKeys = Object.fromEntries(Array.from({ length: 25 }, (_, index) => [`key${index}`, index]));
    expect(reasonOf(extract('generic', manyKeys))).toEndWith(
      'got an object with keys [key0, key1, key2, key3, key4, key5, key6, key7, key8, key9, … 15 more]',
    );
  });

  test('events that are understood and hold no ticket are refused, not guessed at by the generic detection', () => {
    expect(reasonOf(extract('zendesk', { type: 'zen:event-type:user.created', detail: { id: '1', email: 'u@x.example' } }))).toBe(
      'a Zendesk "user.created" event carries no ticket',
    );
    expect(
      reasonOf(
        extract('intercom', { type: 'notification_event', topic: 'contact.user.created', data: { item: { type: 'contact', id: 'c1' } } }),
      ),
    ).toBe('the Intercom notification "contact.user.created" is about a "contact", not a conversation or a ticket');
    expect(reasonOf(extract('hubspot', [{ subscriptionType: 'contact.creation', objectId: 5 }]))).toBe(
      'none of the 1 HubSpot events is about a ticket with an "objectId" (subscription types: contact.creation)',
    );
    expect(reasonOf(extract('linear', { type: 'Comment', data: { id: 'c1', body: 'x', issue: { id: 'i1', title: 't' } } }))).toBe(
      'a Linear "Comment" event carries no issue',
    );
    expect(reasonOf(extract('github', { zen: 'Keep it logically awesome.', hook_id: 1 }, { 'x-github-event': 'ping' }))).toBe(
      'a GitHub "ping" event carries no issue',
    );
    expect(reasonOf(extract('github', { issue: { id: 1, title: 't', pull_request: { url: 'u' } } }))).toBe(
      'the GitHub event is about a pull request, not an issue',
    );
    expect(reasonOf(extract('helpscout', { id: 5, email: 'x@y.example' }, { 'x-helpscout-event': 'customer.created' }))).toBe(
      'a Help Scout "customer.created" event carries no conversation',
    );
    expect(reasonOf(extract('zoho', [{ eventType: 'Ticket_Comment_Add', payload: { id: '9' } }]))).toStartWith(
      'none of the 1 Zoho Desk events is a Ticket_Add or Ticket_Update',
    );
  });

  test('a Salesforce Outbound Message (SOAP XML) is refused with what to send instead', async () => {
    const xml = await Bun.file(new URL('../fixtures/platforms/salesforce-case-outbound-message.xml', import.meta.url)).text();
    expect(reasonOf(extract('salesforce', xml))).toStartWith('Salesforce Outbound Messages (SOAP XML) are not supported');
  });

  test('non-object bodies, on every platform, never throw', () => {
    const bodies: [unknown, string][] = [
      [null, 'no body (null)'],
      [undefined, 'no body (null)'],
      [42, 'a number'],
      [true, 'a boolean'],
      ['{"ticket":{}}', 'a string, not a JSON object (was it sent as JSON, with Content-Type: application/json?)'],
      [[], 'an empty array'],
      [{}, 'an empty object'],
      [[1, 'two', null, [3]], 'an array of 4 items'],
    ];
    for (const platform of PLATFORMS) {
      for (const [body, got] of bodies) {
        const reason = reasonOf(extract(platform, body));
        expect({ platform, body, reason: reason.endsWith(`got ${got}`) }).toEqual({ platform, body, reason: true });
      }
    }
  });

  test('hostile shapes: deep nesting, a body whose every access throws, missing headers', () => {
    let deep: unknown = { id: 1 };
    for (let level = 0; level < 100_000; level += 1) deep = { data: deep };
    for (const platform of PLATFORMS) expect(extract(platform, deep).ok).toBe(false);

    const throwing = new Proxy(
      {},
      {
        get: () => {
          throw new Error('boom');
        },
        getOwnPropertyDescriptor: () => {
          throw new Error('boom');
        },
        ownKeys: () => {
          throw new Error('boom');
        },
        has: () => {
          throw new Error('boom');
        },
      },
    );
    for (const platform of PLATFORMS) expect(reasonOf(extract(platform, throwing))).toEndWith('could not read the body: boom');
    const keysThrow = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('no keys');
        },
      },
    );
    for (const platform of PLATFORMS) expect(reasonOf(extract(platform, keysThrow))).toEndWith('could not read the body: no keys');

    expect(ticketsOf(adapterFor('helpscout').extract({ body: { id: 1, mailboxId: 2 } } as never))[0]?.externalId).toBe('1');
    expect(adapterFor('generic').extract(undefined as never).ok).toBe(false);
  });
});

describe(`at most ${MAX_TICKETS_PER_BODY} events in one body`, () => {
  const hubspotEvents = (count: number) =>
    Array.from({ length: count }, (_, index) => ({ subscriptionType: 'ticket.creation', objectId: index + 1, occurredAt: 1767604500123 }));
  const zohoEvents = (count: number) =>
    Array.from({ length: count }, (_, index) => ({ eventType: 'Ticket_Add', payload: { id: String(index + 1) } }));
  const genericEvents = (count: number) => Array.from({ length: count }, (_, index) => ({ ticket: { id: index + 1 } }));
  const tooMany = `too many events in one body: ${MAX_TICKETS_PER_BODY + 1}, at most ${MAX_TICKETS_PER_BODY} are read from one delivery; send smaller batches`;

  test('exactly the cap is read in full', () => {
    expect(ticketsOf(extract('hubspot', hubspotEvents(MAX_TICKETS_PER_BODY)))).toHaveLength(MAX_TICKETS_PER_BODY);
    expect(ticketsOf(extract('zoho', zohoEvents(MAX_TICKETS_PER_BODY)))).toHaveLength(MAX_TICKETS_PER_BODY);
    expect(ticketsOf(extract('generic', genericEvents(MAX_TICKETS_PER_BODY)))).toHaveLength(MAX_TICKETS_PER_BODY);
  });

  test('one more is refused whole, never cut short', () => {
    expect(reasonOf(extract('hubspot', hubspotEvents(MAX_TICKETS_PER_BODY + 1)))).toBe(tooMany);
    expect(reasonOf(extract('zoho', zohoEvents(MAX_TICKETS_PER_BODY + 1)))).toBe(tooMany);
    expect(reasonOf(extract('generic', genericEvents(MAX_TICKETS_PER_BODY + 1)))).toBe(tooMany);
    expect(reasonOf(extract('generic', { data: genericEvents(MAX_TICKETS_PER_BODY + 1) }))).toBe(tooMany);
    expect(reasonOf(extract('zendesk', genericEvents(MAX_TICKETS_PER_BODY + 1)))).toEndWith(tooMany);
    expect(reasonOf(extract('generic', new Array(1_000_000).fill(0)))).toBe(tooMany.replace(String(MAX_TICKETS_PER_BODY + 1), '1000000'));
  });
});
