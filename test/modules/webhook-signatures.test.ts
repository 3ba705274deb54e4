// Who sent a ticket webhook: every scheme against the example signatures in
// fixtures/platforms/SIGNATURES.md (computed over the exact bytes on disk), plus the ways a request
// must fail: wrong secret, changed body, missing header, replayed timestamp, wrong token.
import { describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { PLATFORMS, type Platform } from '../../src/modules/tickets/platforms.ts';
import { SIGNING_HELP } from '../../src/modules/webhooks/signing-help.ts';
import {
  type ConnectorCredentials,
  hashToken,
  signatureHeadersOf,
  verifyWebhook,
  type WebhookRequestParts,
} from '../../src/modules/webhooks/signatures.ts';

const FIXTURES_DIR = `${import.meta.dir}/../fixtures/platforms`;
// The URL HubSpot signed for hubspot-ticket.json (SIGNATURES.md note).
const HUBSPOT_FIXTURE_URL = 'https://rev.example.com/api/webhooks/tickets?connectorId=hubspot-1';
const TICKETS_URL = 'https://rev.example.com/api/webhooks/tickets?connectorId=c-1';
// The fixtures' timestamps are 2026-01-05T09:15:00..01Z; 30 s later is inside every window (Linear: 60 s).
const FIXTURE_NOW = 1_767_604_530_000;
const MINUTE_MS = 60_000;

interface SignatureFixture {
  fixture: string;
  scheme: string;
  secret: string;
  headers: Record<string, string>;
  note: string;
}

const signatureFixtures = (await Bun.file(`${FIXTURES_DIR}/signatures.json`).json()) as SignatureFixture[];

// Slack signs for the chat endpoint, not the ticket webhook; WhatsApp uses the customer's interface's
// x-hub-signature-256 format, so its bodies exercise that scheme on a generic connector.
const PLATFORM_BY_FIXTURE: Record<string, { platform: Platform; scheme: string }> = {
  'generic-ticket.json': { platform: 'generic', scheme: 'hub-sha256' },
  'github-issue.json': { platform: 'github', scheme: 'hub-sha256' },
  'jira-issue.json': { platform: 'jira', scheme: 'jira' },
  'whatsapp-text-message.json': { platform: 'generic', scheme: 'hub-sha256' },
  'whatsapp-button-reply.json': { platform: 'generic', scheme: 'hub-sha256' },
  'whatsapp-template-quick-reply.json': { platform: 'generic', scheme: 'hub-sha256' },
  'whatsapp-status.json': { platform: 'generic', scheme: 'hub-sha256' },
  'zendesk-ticket.json': { platform: 'zendesk', scheme: 'zendesk' },
  'zendesk-event-ticket-created.json': { platform: 'zendesk', scheme: 'zendesk' },
  'intercom-conversation.json': { platform: 'intercom', scheme: 'intercom' },
  'intercom-ticket.json': { platform: 'intercom', scheme: 'intercom' },
  'hubspot-ticket.json': { platform: 'hubspot', scheme: 'hubspot-v3' },
  'front-conversation.json': { platform: 'front', scheme: 'front' },
  'helpscout-conversation.json': { platform: 'helpscout', scheme: 'helpscout' },
  'linear-issue.json': { platform: 'linear', scheme: 'linear' },
};

const ticketFixtures = signatureFixtures.filter((entry) => entry.fixture in PLATFORM_BY_FIXTURE);

const readFixtureBody = async (fixture: string) => new Uint8Array(await Bun.file(`${FIXTURES_DIR}/${fixture}`).arrayBuffer());

const requestFor = (rawBody: Uint8Array, headers: Record<string, string>, url = TICKETS_URL): WebhookRequestParts => ({
  rawBody,
  headers: new Headers(headers),
  method: 'POST',
  url,
});

const credentialsFor = (platform: Platform, secrets: string[], tokenHash: string | null = null): ConnectorCredentials => ({
  platform,
  secrets,
  tokenHash,
});

/** The fixture as its platform would deliver it. */
const fixtureDelivery = async (entry: SignatureFixture) => {
  const target = PLATFORM_BY_FIXTURE[entry.fixture] as { platform: Platform; scheme: string };
  const rawBody = await readFixtureBody(entry.fixture);
  const url = target.platform === 'hubspot' ? HUBSPOT_FIXTURE_URL : TICKETS_URL;
  return { ...target, rawBody, request: requestFor(rawBody, entry.headers, url) };
};

const fixtureEntry = (fixture: string) => signatureFixtures.find((entry) => entry.fixture === fixture) as SignatureFixture;

const hubSignature = (secret: string, rawBody: Uint8Array) => `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;

const expectRejected = (verdict: ReturnType<typeof verifyWebhook>, reasonPattern: RegExp) => {
  expect(verdict.ok).toBe(false);
  if (!verdict.ok) expect(verdict.reason).toMatch(reasonPattern);
};

describe('fixture signatures', () => {
  test('the fixtures cover every signing platform', () => {
    expect(ticketFixtures).toHaveLength(Object.keys(PLATFORM_BY_FIXTURE).length);
  });

  for (const entry of ticketFixtures) {
    test(`${entry.fixture} verifies with its secret`, async () => {
      const delivery = await fixtureDelivery(entry);
      const verdict = verifyWebhook(delivery.request, credentialsFor(delivery.platform, [entry.secret]), FIXTURE_NOW);
      expect(verdict).toEqual({ ok: true, scheme: delivery.scheme });
    });

    test(`${entry.fixture} fails with a wrong secret, and the reason leaks nothing`, async () => {
      const delivery = await fixtureDelivery(entry);
      const verdict = verifyWebhook(delivery.request, credentialsFor(delivery.platform, ['not-the-secret']), FIXTURE_NOW);
      expectRejected(verdict, /did not match/);
      if (!verdict.ok) {
        expect(verdict.reason).not.toContain('not-the-secret');
        for (const value of Object.values(entry.headers)) expect(verdict.reason).not.toContain(value);
      }
    });

    test(`${entry.fixture} fails when one byte of the body changes`, async () => {
      const delivery = await fixtureDelivery(entry);
      const changedBody = delivery.rawBody.slice();
      const changedIndex = changedBody.length - 2;
      changedBody[changedIndex] = (changedBody[changedIndex] as number) ^ 0x01;
      const verdict = verifyWebhook(
        { ...delivery.request, rawBody: changedBody },
        credentialsFor(delivery.platform, [entry.secret]),
        FIXTURE_NOW,
      );
      expectRejected(verdict, /did not match/);
    });

    test(`${entry.fixture} fails without its signature header`, async () => {
      const delivery = await fixtureDelivery(entry);
      const signatureHeader = Object.keys(entry.headers).find((name) => /signature/i.test(name)) as string;
      delivery.request.headers.delete(signatureHeader);
      const verdict = verifyWebhook(delivery.request, credentialsFor(delivery.platform, [entry.secret]), FIXTURE_NOW);
      expectRejected(verdict, /missing signature header \(expected x-hub-signature-256/);
    });
  }
});

describe('the x-hub-signature-256 header', () => {
  test('x-hub-signature-256 is accepted for every platform', async () => {
    const rawBody = await readFixtureBody('generic-ticket.json');
    for (const platform of PLATFORMS) {
      const request = requestFor(rawBody, { 'x-hub-signature-256': hubSignature('s3cret', rawBody) });
      expect(verifyWebhook(request, credentialsFor(platform, ['s3cret']), FIXTURE_NOW)).toEqual({ ok: true, scheme: 'hub-sha256' });
    }
  });

  test('uppercase hex and an uppercase prefix are accepted', async () => {
    const entry = fixtureEntry('generic-ticket.json');
    const rawBody = await readFixtureBody(entry.fixture);
    const upper = (entry.headers['x-hub-signature-256'] as string).toUpperCase();
    const verdict = verifyWebhook(requestFor(rawBody, { 'x-hub-signature-256': upper }), credentialsFor('generic', [entry.secret]));
    expect(verdict).toEqual({ ok: true, scheme: 'hub-sha256' });
  });

  test('a signature without the sha256= prefix, truncated, or with trailing junk is rejected', async () => {
    const entry = fixtureEntry('generic-ticket.json');
    const rawBody = await readFixtureBody(entry.fixture);
    const signature = entry.headers['x-hub-signature-256'] as string;
    const credentials = credentialsFor('generic', [entry.secret]);
    const bareHex = signature.slice('sha256='.length);
    expectRejected(verifyWebhook(requestFor(rawBody, { 'x-hub-signature-256': bareHex }), credentials), /does not start with "sha256="/);
    expectRejected(verifyWebhook(requestFor(rawBody, { 'x-hub-signature-256': signature.slice(0, -2) }), credentials), /did not match/);
    expectRejected(verifyWebhook(requestFor(rawBody, { 'x-hub-signature-256': `${signature}00` }), credentials), /did not match/);
    expectRejected(verifyWebhook(requestFor(rawBody, { 'x-hub-signature-256': 'sha256=' }), credentials), /did not match/);
  });

  test('a valid header wins even when the platform header next to it is wrong', async () => {
    const entry = fixtureEntry('zendesk-ticket.json');
    const rawBody = await readFixtureBody(entry.fixture);
    const request = requestFor(rawBody, {
      'x-zendesk-webhook-signature': 'AAAA',
      'x-zendesk-webhook-signature-timestamp': '2026-01-05T09:15:01Z',
      'x-hub-signature-256': hubSignature(entry.secret, rawBody),
    });
    expect(verifyWebhook(request, credentialsFor('zendesk', [entry.secret]), FIXTURE_NOW)).toEqual({ ok: true, scheme: 'hub-sha256' });
  });
});

describe('platform schemes', () => {
  test('uppercase hex is accepted for Intercom, Jira and Linear', async () => {
    for (const fixture of ['intercom-ticket.json', 'jira-issue.json', 'linear-issue.json']) {
      const entry = fixtureEntry(fixture);
      const delivery = await fixtureDelivery(entry);
      const signatureHeader = Object.keys(entry.headers).find((name) => /signature/i.test(name)) as string;
      delivery.request.headers.set(signatureHeader, (entry.headers[signatureHeader] as string).toUpperCase());
      const verdict = verifyWebhook(delivery.request, credentialsFor(delivery.platform, [entry.secret]), FIXTURE_NOW);
      expect(verdict).toEqual({ ok: true, scheme: delivery.scheme });
    }
  });

  test('x-hub-signature branches on its prefix: Intercom wants sha1=, Jira sha256=', async () => {
    const rawBody = await readFixtureBody('jira-issue.json');
    const sha256Header = { 'x-hub-signature': hubSignature('s3cret', rawBody) };
    expectRejected(verifyWebhook(requestFor(rawBody, sha256Header), credentialsFor('intercom', ['s3cret'])), /does not start with "sha1="/);
    const sha1Header = { 'x-hub-signature': `sha1=${createHmac('sha1', 's3cret').update(rawBody).digest('hex')}` };
    expectRejected(verifyWebhook(requestFor(rawBody, sha1Header), credentialsFor('jira', ['s3cret'])), /does not start with "sha256="/);
  });

  test('a platform header is ignored for another platform', async () => {
    const entry = fixtureEntry('helpscout-conversation.json');
    const delivery = await fixtureDelivery(entry);
    expectRejected(
      verifyWebhook(delivery.request, credentialsFor('generic', [entry.secret])),
      /missing signature header \(expected x-hub-signature-256\)/,
    );
  });

  test('a timestamped scheme without its timestamp header is rejected', async () => {
    for (const [fixture, timestampHeader] of [
      ['zendesk-ticket.json', 'x-zendesk-webhook-signature-timestamp'],
      ['front-conversation.json', 'x-front-request-timestamp'],
      ['hubspot-ticket.json', 'x-hubspot-request-timestamp'],
    ] as const) {
      const entry = fixtureEntry(fixture);
      const delivery = await fixtureDelivery(entry);
      delivery.request.headers.delete(timestampHeader);
      const verdict = verifyWebhook(delivery.request, credentialsFor(delivery.platform, [entry.secret]), FIXTURE_NOW);
      expectRejected(verdict, new RegExp(`missing header ${timestampHeader}`));
    }
  });

  test('a timestamp that is not a time is rejected', async () => {
    const entry = fixtureEntry('front-conversation.json');
    const delivery = await fixtureDelivery(entry);
    delivery.request.headers.set('x-front-request-timestamp', 'yesterday');
    const verdict = verifyWebhook(delivery.request, credentialsFor('front', [entry.secret]), FIXTURE_NOW);
    expectRejected(verdict, /x-front-request-timestamp is not a timestamp/);
  });

  test('HubSpot v3 signs the URL: another URL fails, and the escapes HubSpot decodes still verify', async () => {
    const entry = fixtureEntry('hubspot-ticket.json');
    const delivery = await fixtureDelivery(entry);
    const credentials = credentialsFor('hubspot', [entry.secret]);
    const otherUrl = { ...delivery.request, url: HUBSPOT_FIXTURE_URL.replace('hubspot-1', 'hubspot-2') };
    expectRejected(verifyWebhook(otherUrl, credentials, FIXTURE_NOW), /x-hubspot-signature-v3 did not match/);
    const otherMethod = { ...delivery.request, method: 'PUT' };
    expectRejected(verifyWebhook(otherMethod, credentials, FIXTURE_NOW), /did not match/);
    const encodedUrl = { ...delivery.request, url: HUBSPOT_FIXTURE_URL.replace('https://', 'https%3A%2F%2F') };
    expect(verifyWebhook(encodedUrl, credentials, FIXTURE_NOW)).toEqual({ ok: true, scheme: 'hubspot-v3' });
  });
});

describe('replay protection', () => {
  const timestampedFixtures = [
    { fixture: 'zendesk-ticket.json', signedAtMs: Date.parse('2026-01-05T09:15:01Z') },
    { fixture: 'front-conversation.json', signedAtMs: 1_767_604_500_500 },
    { fixture: 'hubspot-ticket.json', signedAtMs: 1_767_604_501_000 },
  ];

  for (const { fixture, signedAtMs } of timestampedFixtures) {
    test(`${fixture}: within 5 minutes verifies, older or further ahead is rejected`, async () => {
      const entry = fixtureEntry(fixture);
      const delivery = await fixtureDelivery(entry);
      const credentials = credentialsFor(delivery.platform, [entry.secret]);
      expect(verifyWebhook(delivery.request, credentials, signedAtMs + 5 * MINUTE_MS).ok).toBe(true);
      expect(verifyWebhook(delivery.request, credentials, signedAtMs - 5 * MINUTE_MS).ok).toBe(true);
      const stale = verifyWebhook(delivery.request, credentials, signedAtMs + 5 * MINUTE_MS + 1);
      expectRejected(stale, /timestamp outside the 5-minute window/);
      const fromTheFuture = verifyWebhook(delivery.request, credentials, signedAtMs - 5 * MINUTE_MS - 1);
      expectRejected(fromTheFuture, /timestamp outside the 5-minute window/);
    });
  }

  test('Linear: body webhookTimestamp within 60 s verifies, later is rejected', async () => {
    const entry = fixtureEntry('linear-issue.json');
    const delivery = await fixtureDelivery(entry);
    const webhookTimestamp = 1_767_604_500_456;
    const credentials = credentialsFor('linear', [entry.secret]);
    expect(verifyWebhook(delivery.request, credentials, webhookTimestamp + MINUTE_MS).ok).toBe(true);
    expectRejected(
      verifyWebhook(delivery.request, credentials, webhookTimestamp + MINUTE_MS + 1),
      /timestamp outside the 60-second window/,
    );
    expectRejected(
      verifyWebhook(delivery.request, credentials, webhookTimestamp - MINUTE_MS - 1),
      /timestamp outside the 60-second window/,
    );
  });

  /** A Linear delivery of `body`, signed with "lin-secret". */
  const linearRequest = (body: string) => {
    const rawBody = new TextEncoder().encode(body);
    return requestFor(rawBody, { 'linear-signature': createHmac('sha256', 'lin-secret').update(rawBody).digest('hex') });
  };
  const WITHOUT_A_NUMERIC_TIMESTAMP: Record<string, string> = {
    missing: '{"action":"create","type":"Issue","data":{"id":"x"}}',
    'as a string': `{"action":"create","type":"Issue","data":{"id":"x"},"webhookTimestamp":"${FIXTURE_NOW}"}`,
    null: '{"action":"create","type":"Issue","data":{"id":"x"},"webhookTimestamp":null}',
    'not finite (1e999)': '{"action":"create","type":"Issue","data":{"id":"x"},"webhookTimestamp":1e999}',
    'in a body that is not an object': '[1]',
  };
  for (const [what, body] of Object.entries(WITHOUT_A_NUMERIC_TIMESTAMP)) {
    test(`Linear: a signed body with webhookTimestamp ${what} is rejected`, () => {
      expectRejected(verifyWebhook(linearRequest(body), credentialsFor('linear', ['lin-secret']), FIXTURE_NOW), /webhookTimestamp/);
    });
  }

  test('Linear: a signed body that is not JSON passes the signature check (the route answers 400)', () => {
    expect(verifyWebhook(linearRequest('{"action":'), credentialsFor('linear', ['lin-secret']), FIXTURE_NOW)).toEqual({
      ok: true,
      scheme: 'linear',
    });
  });

  test('Linear: a webhookTimestamp with a fraction of a millisecond is a timestamp like any other', () => {
    const body = `{"action":"create","type":"Issue","data":{"id":"x"},"webhookTimestamp":${FIXTURE_NOW - 0.5}}`;
    expect(verifyWebhook(linearRequest(body), credentialsFor('linear', ['lin-secret']), FIXTURE_NOW)).toEqual({
      ok: true,
      scheme: 'linear',
    });
  });
});

describe('secret rotation', () => {
  test('the previous and the current secret both verify; a third does not', async () => {
    const rawBody = await readFixtureBody('generic-ticket.json');
    const credentials = credentialsFor('generic', ['old-secret', 'new-secret']);
    for (const secret of ['old-secret', 'new-secret']) {
      const request = requestFor(rawBody, { 'x-hub-signature-256': hubSignature(secret, rawBody) });
      expect(verifyWebhook(request, credentials)).toEqual({ ok: true, scheme: 'hub-sha256' });
    }
    const stranger = requestFor(rawBody, { 'x-hub-signature-256': hubSignature('other-secret', rawBody) });
    expectRejected(verifyWebhook(stranger, credentials), /x-hub-signature-256 did not match/);
  });

  test('a platform scheme accepts either secret too', async () => {
    for (const fixture of ['zendesk-ticket.json', 'hubspot-ticket.json', 'helpscout-conversation.json', 'linear-issue.json']) {
      const entry = fixtureEntry(fixture);
      const delivery = await fixtureDelivery(entry);
      for (const secrets of [
        [entry.secret, 'next-secret'],
        ['previous-secret', entry.secret],
      ]) {
        const verdict = verifyWebhook(delivery.request, credentialsFor(delivery.platform, secrets), FIXTURE_NOW);
        expect(verdict).toEqual({ ok: true, scheme: delivery.scheme });
      }
    }
  });
});

describe('static bearer token', () => {
  const token = 'tok_3f9c1a7e5b2d4c6e8f0a1b2c3d4e5f60';
  const tokenHash = hashToken(token);
  const rawBody = new TextEncoder().encode('{"freshdesk_webhook":{"ticket_id":1}}');

  test('hashToken is SHA-256 hex', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  test('the right token verifies (scheme word in any case)', () => {
    for (const authorization of [`Bearer ${token}`, `bearer ${token}`]) {
      const verdict = verifyWebhook(requestFor(rawBody, { authorization }), credentialsFor('freshdesk', [], tokenHash));
      expect(verdict).toEqual({ ok: true, scheme: 'bearer' });
    }
  });

  test('a wrong token, another scheme or no header is rejected without echoing the token', () => {
    const credentials = credentialsFor('freshdesk', [], tokenHash);
    const wrong = verifyWebhook(requestFor(rawBody, { authorization: `Bearer ${token}x` }), credentials);
    expectRejected(wrong, /bearer token did not match/);
    if (!wrong.ok) expect(wrong.reason).not.toContain(token);
    expectRejected(verifyWebhook(requestFor(rawBody, { authorization: `Basic ${btoa(token)}` }), credentials), /not "Bearer <token>"/);
    expectRejected(verifyWebhook(requestFor(rawBody, {}), credentials), /missing Authorization header/);
  });

  test('with a token and a secret, either one is enough; neither is rejected with both reasons', () => {
    const credentials = credentialsFor('gorgias', ['s3cret'], tokenHash);
    const byToken = verifyWebhook(requestFor(rawBody, { authorization: `Bearer ${token}` }), credentials);
    expect(byToken).toEqual({ ok: true, scheme: 'bearer' });
    const bySignature = verifyWebhook(requestFor(rawBody, { 'x-hub-signature-256': hubSignature('s3cret', rawBody) }), credentials);
    expect(bySignature).toEqual({ ok: true, scheme: 'hub-sha256' });
    const wrongTokenRightSignature = requestFor(rawBody, {
      authorization: 'Bearer nope',
      'x-hub-signature-256': hubSignature('s3cret', rawBody),
    });
    expect(verifyWebhook(wrongTokenRightSignature, credentials)).toEqual({ ok: true, scheme: 'hub-sha256' });
    expectRejected(verifyWebhook(requestFor(rawBody, {}), credentials), /missing Authorization header.*; missing signature header/);
  });
});

describe('a connector without credentials', () => {
  test('anything from the connector id is accepted', async () => {
    const rawBody = await readFixtureBody('generic-ticket.json');
    const headerSets: Record<string, string>[] = [{}, { 'x-hub-signature-256': 'sha256=garbage' }, { authorization: 'Bearer whatever' }];
    for (const headers of headerSets) {
      expect(verifyWebhook(requestFor(rawBody, headers), credentialsFor('zoho', []))).toEqual({ ok: true, scheme: 'none' });
    }
  });
});

describe('what the connector page tells a person', () => {
  test("every platform's signing instructions name a header the server reads its signature from", () => {
    for (const platform of PLATFORMS) {
      const help = SIGNING_HELP[platform];
      // A platform without a signature of its own may still sign with the shared header.
      expect(signatureHeadersOf(platform)).toContain((help.header ?? 'x-hub-signature-256').toLowerCase());
    }
  });
});
