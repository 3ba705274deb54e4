// The chat platforms' webhooks (Slack, Google Chat, WhatsApp) against what a stranger or a hostile
// payload can send, on both backends: refused signatures spend a budget — the sender address's
// failed authentications and the named installation's — and are answered 429 with Retry-After past
// it, while the platform's valid deliveries still pass; a signed event holding text PostgreSQL
// cannot store (NUL, a lone surrogate) is stored cleaned, never a 503 that loses it; a payload of the
// wrong shape is a 400 from its schema (a fault of ours: test/modules/signed-webhooks.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { queryText } from '../../src/db/client.ts';
import { newId } from '../../src/lib/ids.ts';
import { createLogger } from '../../src/lib/log.ts';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { chatAdminUnits } from '../../src/modules/chat/installations.ts';
import { fakeGoogle, type FakeGoogle } from '../helpers/fake-google.ts';
import {
  awayFromMinuteBoundary,
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  testConfig,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../helpers/harness.ts';

const SECRET_KEY = 'abuse-test-secret-key-0123456789abcdefghij';
const SLACK_SECRET = 'abuse-test-slack-signing-secret';
const WHATSAPP_SECRET = 'abuse-test-whatsapp-app-secret';
const GCHAT_PATH = '/api/webhooks/workspace-chat';
const AUDIENCE = `https://revintel.example${GCHAT_PATH}`;
/** Failed authentications an address may make per minute in these tests (RATE_LIMIT_ANON_PER_MINUTE). */
const BUDGET = 5;

const slackHeaders = (body: string, secret = SLACK_SECRET, at = Math.floor(Date.now() / 1000)) => ({
  'content-type': 'application/json',
  'x-slack-request-timestamp': String(at),
  'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${at}:${body}`).digest('hex')}`,
});
const metaHeaders = (body: string, secret = WHATSAPP_SECRET) => ({
  'content-type': 'application/json',
  'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});
const randomTeam = () => `T${newId('org').slice(4, 14).toUpperCase()}`;
const from = (address: string) => ({ 'x-forwarded-for': address });
let addresses = 0;
/** A client address no other test used (the budgets are per address and per minute). */
const freshAddress = () => `198.51.100.${++addresses}`;

for (const backend of BACKENDS) {
  describe(`chat webhooks under abuse (${backend})`, () => {
    let database: TestDatabase;
    let google: FakeGoogle;
    let app: ReturnType<typeof buildApp>['app'];
    let orgId: string;
    const errorLines: string[] = [];
    const team = `T${newId('org').slice(4, 14).toUpperCase()}`;
    const space = `spaces/AAAA${newId('org').slice(4, 14)}`;
    const phoneNumberId = `1${Date.now()}`;

    const slackEvent = (overrides: Record<string, unknown> = {}, event: Record<string, unknown> = {}) =>
      JSON.stringify({
        token: 'x',
        team_id: team,
        api_app_id: 'A0EXAMPLEAPP',
        type: 'event_callback',
        event_id: `Ev${newId('org').slice(4, 14)}`,
        event_time: Math.floor(Date.now() / 1000),
        event: {
          type: 'app_mention',
          user: 'U0NOBODY01',
          text: '<@U0REVBOT01> help',
          ts: '1767605400.001200',
          channel: 'C0CSTEAM01',
          event_ts: '1767605400.001200',
          ...event,
        },
        ...overrides,
      });
    const slack = (body: string, headers: Record<string, string>) =>
      call(app, 'POST', '/api/webhooks/team-chat', { rawBody: body, headers });
    const whatsapp = (body: string, headers: Record<string, string>) =>
      call(app, 'POST', '/api/webhooks/messaging', { rawBody: body, headers });
    const statusDelivery = () =>
      JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: 'WABA',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { display_phone_number: '15550000000', phone_number_id: phoneNumberId },
                  statuses: [
                    {
                      id: `wamid.${newId('org').slice(4)}`,
                      status: 'delivered',
                      timestamp: String(Math.floor(Date.now() / 1000)),
                      recipient_id: '15551234567',
                    },
                  ],
                },
              },
            ],
          },
        ],
      });
    const gchatMessage = (text: string) =>
      JSON.stringify({
        type: 'MESSAGE',
        eventTime: new Date().toISOString(),
        message: {
          name: `${space}/messages/m${newId('org').slice(4)}`,
          sender: { name: 'users/1', type: 'HUMAN' },
          text: `@revintel ${text}`,
          argumentText: ` ${text}`,
          space: { name: space },
        },
        user: { name: 'users/1', email: 'someone@vendor.example', type: 'HUMAN' },
        space: { name: space, spaceType: 'SPACE' },
      });
    const gchat = async (body: string, headers: Record<string, string>, token?: string) =>
      call(app, 'POST', GCHAT_PATH, {
        rawBody: body,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${token ?? (await google.sign({ iss: 'https://accounts.google.com', aud: AUDIENCE, email: 'chat@system.gserviceaccount.com', email_verified: true, sub: '1' }))}`,
          ...headers,
        },
      });

    beforeAll(async () => {
      google = await fakeGoogle();
      database = await openTestDatabase(backend);
      const config = testConfig({
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
        secretKey: SECRET_KEY,
        slackSigningSecret: SLACK_SECRET,
        whatsappAppSecret: WHATSAPP_SECRET,
        gchatAudience: AUDIENCE,
        googleJwksUrl: google.jwksUrl,
        googleChatCertsUrl: google.certsUrl,
        allowInsecurePlatformUrls: true,
        anonLimitPerMinute: BUDGET,
        trustProxy: { mode: 'all' },
      });
      const log = createLogger('error', {}, (line) => void errorLines.push(line));
      app = buildApp(database, { config, log }).app;
      orgId = (await createOrgWithKey(database)).org.id;
      await database.db.transaction(async (tx) => {
        for (const [platform, externalId] of [
          ['slack', team],
          ['google_chat', space],
          ['whatsapp', phoneNumberId],
        ] as const) {
          const id = newId('chi');
          await chatAdminUnits['chat.add'](tx as never, {
            id,
            org: orgId,
            platform,
            externalId,
            credentialsSealed: platform === 'google_chat' ? null : sealSecret(`token-${externalId}`, SECRET_KEY, id),
            actor: 'test',
          });
        }
      });
    });
    afterAll(async () => {
      google.stop();
      await database?.dispose();
    });

    test('Slack: refused signatures from one address are 401 up to its budget, then 429 with Retry-After', async () => {
      await awayFromMinuteBoundary();
      const address = freshAddress();
      const body = slackEvent({ team_id: randomTeam() });
      const statuses: number[] = [];
      for (let i = 0; i < BUDGET + 3; i++)
        statuses.push((await slack(body, { ...slackHeaders(body, 'forged-secret'), ...from(address) })).status);
      expect(statuses).toEqual([...Array(BUDGET).fill(401), 429, 429, 429]);
      const refused = await slack(body, { ...slackHeaders(body, 'forged-secret'), ...from(address) });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.body.code).toBe('rate_limited');
    });

    test("Slack: a valid delivery from another address passes while a forger's budget is spent", async () => {
      await awayFromMinuteBoundary();
      const forger = freshAddress();
      const forged = slackEvent({ team_id: randomTeam() });
      for (let i = 0; i < BUDGET + 1; i++) await slack(forged, { ...slackHeaders(forged, 'forged-secret'), ...from(forger) });
      expect((await slack(forged, { ...slackHeaders(forged, 'forged-secret'), ...from(forger) })).status).toBe(429);
      const real = slackEvent();
      expect((await slack(real, { ...slackHeaders(real), ...from(freshAddress()) })).status).toBe(200);
    });

    test("Slack: forgeries in a workspace's name from many addresses turn 429 past its budget; Slack's own delivery still passes", async () => {
      await awayFromMinuteBoundary();
      const statuses: number[] = [];
      for (let i = 0; i < BUDGET + 2; i++) {
        const forged = slackEvent();
        statuses.push((await slack(forged, { ...slackHeaders(forged, 'forged-secret'), ...from(freshAddress()) })).status);
      }
      expect(statuses).toEqual([...Array(BUDGET).fill(401), 429, 429]);
      const real = slackEvent();
      expect((await slack(real, { ...slackHeaders(real), ...from(freshAddress()) })).status).toBe(200);
    });

    test('Slack: a signed event with NUL and lone surrogates is acknowledged and stored without them', async () => {
      const eventId = `Ev${newId('org').slice(4, 14)}`;
      const body = slackEvent({ event_id: eventId, 'odd\u0000key': 1 }, { text: '<@U0REVBOT01> status a\u0000b \ud800' });
      const res = await slack(body, { ...slackHeaders(body), ...from(freshAddress()) });
      expect(res.status).toBe(200);
      const [row] = await queryText<{ text: string; keys: string[] }>(
        database.db,
        `select body->'event'->>'text' as text, array(select jsonb_object_keys(body)) as keys from chat_inbound_events where platform = 'slack' and dedupe_key = $1`,
        [`event:${eventId}`],
      );
      expect(row!.text).toBe('<@U0REVBOT01> status ab \ufffd');
      expect(row!.keys).toContain('oddkey');
    });

    test('Slack: a payload of the wrong shape is refused by its schema, naming the field, before any handler reads it', async () => {
      const lines = errorLines.length;
      // An id that is not text (it made String() throw a TypeError in the handler before payloads were checked).
      const body = slackEvent({ event_id: { toString: 1, valueOf: 1 } });
      const res = await slack(body, { ...slackHeaders(body), ...from(freshAddress()), 'x-request-id': 'req-abuse-typeerror' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.error).toContain('event_id');
      expect(errorLines.length).toBe(lines);
    });

    test('WhatsApp: refused signatures from one address are 401 up to its budget, then 429; a valid delivery from another address passes', async () => {
      await awayFromMinuteBoundary();
      const address = freshAddress();
      const statuses: number[] = [];
      for (let i = 0; i < BUDGET + 2; i++) {
        const body = statusDelivery();
        statuses.push((await whatsapp(body, { ...metaHeaders(body, 'forged-secret'), ...from(address) })).status);
      }
      expect(statuses).toEqual([...Array(BUDGET).fill(401), 429, 429]);
      const real = statusDelivery();
      expect((await whatsapp(real, { ...metaHeaders(real), ...from(freshAddress()) })).status).toBe(200);
    });

    test('Google Chat: refused tokens from one address are 401 up to its budget, then 429; a valid event from another address passes', async () => {
      await awayFromMinuteBoundary();
      const address = freshAddress();
      const forged = await google.sign(
        { iss: 'https://accounts.google.com', aud: AUDIENCE, email: 'chat@system.gserviceaccount.com', email_verified: true, sub: '1' },
        { key: await google.otherKey() },
      );
      const statuses: number[] = [];
      for (let i = 0; i < BUDGET + 2; i++) statuses.push((await gchat(gchatMessage('help'), from(address), forged)).status);
      expect(statuses).toEqual([...Array(BUDGET).fill(401), 429, 429]);
      expect((await gchat(gchatMessage('help'), from(freshAddress()))).status).toBe(200);
    });

    test('Google Chat: a message with NUL and a lone surrogate is answered and stored without them', async () => {
      const body = gchatMessage('status a\u0000b \udfff');
      const res = await gchat(body, from(freshAddress()));
      expect(res.status).toBe(200);
      const name = JSON.parse(body).message.name;
      const [row] = await queryText<{ text: string }>(
        database.db,
        `select body->'message'->>'argumentText' as text from chat_inbound_events where platform = 'google_chat' and dedupe_key = $1`,
        [`message:${name}`],
      );
      expect(row!.text).toBe(' status ab \ufffd');
    });
  });
}
