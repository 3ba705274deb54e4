// Google Chat both ways on both backends (docs/chat-platforms.md "Google Chat"), against a fake
// Google on a real port: Google's key set (max-age, refetch on an unknown kid, bounded); real ID
// tokens signed with the fake's keys; a click in the Chat API format and one in the add-on format
// (the fixtures' shapes) each decide once and answer in their own format; every token fault is a
// 401 that stores nothing; Google's keys unreachable is a 503; the project-number audience; a
// replay acts once; who may not decide is told privately; messages run the commands; the approval
// card is created with its requestId through the chat outbox (one token for several sends; 429 and
// a lost answer, then delivered once) and patched after a decision over the API; a click racing an
// API reject gives one outcome; one action on Slack and Google Chat keeps both copies in step; one
// action on Slack, Google Chat and WhatsApp decided from all three at once has one outcome that
// every copy shows.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import { queryText } from '../../src/db/client.ts';
import { newId } from '../../src/lib/ids.ts';
import { actionSettingsOf } from '../../src/modules/agent-actions/settings.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src/settings.ts';
import { wakeSnoozedActions } from '../../src/modules/agent-actions/service.ts';
import { chatAdminUnits } from '../../src/modules/chat/installations.ts';
import { chatSendJob } from '../../src/modules/chat/platforms.ts';
import { forgetAccessToken } from '../../src/modules/google-chat/transport.ts';
import { googleKeySet, KeysUnavailable, TokenRejected } from '../../src/modules/google-chat/verify.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createHmac } from 'node:crypto';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { fakeGoogle, type FakeGoogle } from '../helpers/fake-google.ts';
import { fakeSlack } from '../helpers/fake-slack.ts';
import { fakeWhatsApp } from '../helpers/fake-whatsapp.ts';
import { whatsappInboundJob } from '../../src/modules/whatsapp/inbound.ts';
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
import { drainJobs } from '../helpers/jobs.ts';

const FIXTURES = new URL('../fixtures/google-chat/', import.meta.url);
const fixture = (name: string) => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8'));
const PATH = '/api/webhooks/workspace-chat';
const AUDIENCE = `https://revintel.example${PATH}`;
const PROJECT = '1234567890';
const CHAT = 'chat@system.gserviceaccount.com';
const ADDON = `service-${PROJECT}@gcp-sa-gsuiteaddons.iam.gserviceaccount.com`;
const SECRET_KEY = 'gchat-test-secret-key-0123456789abcdefghij';
const SLACK_SIGNING_SECRET = 'gchat-test-slack-signing-secret';
const WHATSAPP_APP_SECRET = 'gchat-test-whatsapp-app-secret';

/** Waits until `done` holds (a background fetch answered), failing after 10 s. */
async function until(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !done(); await Bun.sleep(20)) if (Date.now() > deadline) throw new Error('timed out waiting');
}

describe("Google's keys", () => {
  test('kept for their max-age; an unknown kid fetches them again at most every 30 s; a rotated key is found', async () => {
    const google = await fakeGoogle();
    try {
      let now = Date.now();
      const keys = googleKeySet(google.jwksUrl, 'jwks', () => now);
      const fetches = () => google.callsOf('jwks').length;
      await keys.keyFor('fake-jwks-1');
      await keys.keyFor('fake-jwks-1');
      expect(fetches()).toBe(1);
      const rotated = await google.rotate();
      // Right after a fetch, an unknown kid does not fetch again: a flood of forged kids costs Google nothing.
      await expect(keys.keyFor(rotated)).rejects.toBeInstanceOf(TokenRejected);
      expect(fetches()).toBe(1);
      now += 31_000;
      expect(await keys.keyFor(rotated)).toBeDefined();
      expect(fetches()).toBe(2);
      await expect(keys.keyFor('nobody')).rejects.toThrow('no key of Google');
      expect(fetches()).toBe(2);
      // Past the max-age Google gave (3600 s), the keys are fetched again (behind the kept ones).
      now += 3_601_000;
      await keys.keyFor(rotated);
      await until(() => fetches() === 3);
    } finally {
      google.stop();
    }
  });

  test('past their max-age the kept keys answer at once while one refresh runs behind them', async () => {
    const google = await fakeGoogle();
    try {
      let now = Date.now();
      const keys = googleKeySet(google.jwksUrl, 'jwks', () => now);
      await keys.keyFor('fake-jwks-1');
      now += 3_601_000;
      // Google answers late: the event does not wait for it.
      google.script('jwks', [{ status: 200, delayMs: 1_500 }]);
      const verifications = await Promise.all(Array.from({ length: 5 }, () => keys.keyFor('fake-jwks-1')));
      expect(verifications.every(Boolean)).toBe(true);
      expect(google.callsOf('jwks')).toHaveLength(1); // the refresh is not answered yet
      await until(() => google.callsOf('jwks').length === 2);
      expect(google.callsOf('jwks')).toHaveLength(2); // one refresh for the five
    } finally {
      google.stop();
    }
  });

  test("Google's key endpoint failing: one fetch, then none for the back-off, whatever kids are forged", async () => {
    const google = await fakeGoogle();
    try {
      let now = Date.now();
      const keys = googleKeySet(google.jwksUrl, 'jwks', () => now);
      google.script(
        'jwks',
        Array.from({ length: 50 }, () => ({ status: 503 })),
      );
      await expect(keys.keyFor('fake-jwks-1')).rejects.toBeInstanceOf(KeysUnavailable);
      for (let i = 0; i < 20; i++) await expect(keys.keyFor(`forged-${i}`)).rejects.toBeInstanceOf(KeysUnavailable);
      expect(google.callsOf('jwks')).toHaveLength(1);
      now += 10_001;
      await expect(keys.keyFor('forged-x')).rejects.toBeInstanceOf(KeysUnavailable);
      expect(google.callsOf('jwks')).toHaveLength(2);
    } finally {
      google.stop();
    }
  });

  test('concurrent verifications with nothing cached share one fetch', async () => {
    const google = await fakeGoogle();
    try {
      const keys = googleKeySet(google.jwksUrl, 'jwks');
      google.script('jwks', [{ status: 200, delayMs: 200 }]);
      const found = await Promise.all(
        Array.from({ length: 20 }, (_, i) => keys.keyFor(i % 2 ? 'fake-jwks-1' : `forged-${i}`).catch((e) => e)),
      );
      expect(found.filter((k) => k instanceof TokenRejected)).toHaveLength(10);
      expect(google.callsOf('jwks')).toHaveLength(1);
    } finally {
      google.stop();
    }
  });

  test('at most 4 fetches a minute, however the endpoint fails and kids are forged', async () => {
    const google = await fakeGoogle();
    try {
      let now = Date.now();
      const keys = googleKeySet(google.jwksUrl, 'jwks', () => now);
      google.script(
        'jwks',
        Array.from({ length: 50 }, () => ({ status: 500 })),
      );
      // Past each back-off a new try: six in a minute would be asked, four are made.
      for (let i = 0; i < 6; i++) {
        await expect(keys.keyFor(`forged-${i}`)).rejects.toBeInstanceOf(KeysUnavailable);
        now += 10_001;
      }
      expect(google.callsOf('jwks')).toHaveLength(4);
    } finally {
      google.stop();
    }
  });

  test('Google Chat settings: plain http:// needs ALLOW_INSECURE_PLATFORM_URLS; the project-number audience needs the number', () => {
    const problem = (env: Record<string, string>) => {
      try {
        loadConfig({ LOG_LEVEL: 'silent', ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).variable;
      }
      return null;
    };
    expect(problem({ GOOGLE_JWKS_URL: 'http://127.0.0.1:9/certs' })).toBe('GOOGLE_JWKS_URL');
    expect(problem({ GCHAT_API_BASE: 'http://127.0.0.1:9/v1', ALLOW_INSECURE_PLATFORM_URLS: 'true' })).toBeNull();
    expect(problem({ GCHAT_AUDIENCE_MODE: 'project_number' })).toBe('GCHAT_AUDIENCE');
    expect(problem({ GCHAT_AUDIENCE_MODE: 'project_number', GCHAT_AUDIENCE: 'https://x.example/hook' })).toBe('GCHAT_AUDIENCE');
    expect(problem({ GCHAT_AUDIENCE_MODE: 'project_number', GCHAT_AUDIENCE: '1234567890' })).toBeNull();
    expect(problem({ GCHAT_PROJECT_NUMBER: 'my-project' })).toBe('GCHAT_PROJECT_NUMBER');
  });
});

for (const backend of BACKENDS) {
  describe(`Google Chat (${backend})`, () => {
    let google: FakeGoogle;
    const slack = fakeSlack();
    const meta = fakeWhatsApp();
    const team = `T${newId('org').slice(4, 14).toUpperCase()}`;
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    const space = `spaces/AAAA${newId('org').slice(4, 14)}`;
    /** What the worker's jobs run with: the app's own settings (the fakes, the service account). */
    let settings: Settings = DEFAULT_SETTINGS;
    const person = (name: string) => ({
      name,
      email: `${name.toLowerCase()}.${newId('csm').slice(4, 12).toLowerCase()}@vendor.example`,
      user: `users/${Math.floor(Math.random() * 1e15)}`,
    });
    const owner = person('Ana');
    const other = person('Bo');

    const post = (path: string, body?: unknown) => call(app, 'POST', path, { key, body });
    const get = (path: string) => call(app, 'GET', path, { key });
    const drain = () => drainJobs(database.db, [chatSendJob], { clock: () => Date.now() + 3 * 3600_000, settings });
    const configFor = (overrides: Parameters<typeof testConfig>[0] = {}) =>
      testConfig({
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
        gchatAudience: AUDIENCE,
        gchatProjectNumber: PROJECT,
        googleJwksUrl: google.jwksUrl,
        googleChatCertsUrl: google.certsUrl,
        allowInsecurePlatformUrls: true,
        secretKey: SECRET_KEY,
        slackSigningSecret: SLACK_SIGNING_SECRET,
        slackApiBase: slack.base,
        whatsappAppSecret: WHATSAPP_APP_SECRET,
        gchatApiBase: google.apiBase,
        googleTokenUrl: google.tokenUrl,
        gchatServiceAccountFile: google.serviceAccountFile,
        whatsappApiBase: meta.base,
        ...overrides,
      });
    const idToken = (email: string, claims: Record<string, unknown> = {}, options: Parameters<FakeGoogle['sign']>[1] = {}) =>
      google.sign({ iss: 'https://accounts.google.com', aud: AUDIENCE, email, email_verified: true, sub: '1089', ...claims }, options);
    const send = (event: unknown, token: string | null, target = app) =>
      call(target, 'POST', PATH, {
        rawBody: JSON.stringify(event),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Google-Dynamite',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      });
    const inbound = async () =>
      (
        await queryText<{ n: number }>(
          database.db,
          `select count(*)::int as n from chat_inbound_events where platform = 'google_chat' and org_id = $1`,
          [orgId],
        )
      )[0]!.n;

    async function customerOf(csmEmail: string | null, name = `Acme ${newId('cus').slice(4, 10)}`): Promise<string> {
      const res = await post('/api/customers', { name, currency: 'EUR', csm: { email: csmEmail } });
      expect(res.status).toBe(201);
      return res.body.data.id;
    }

    /** An action proposed for Ana's customer, its card posted; what its buttons carry. */
    async function posted(
      type = 'check_in',
      params: Record<string, unknown> = { channel: 'call', due_in_days: 5 },
      csmEmail = owner.email,
    ) {
      const res = await post('/api/agent-actions', { customer_id: await customerOf(csmEmail), type, params });
      expect(res.status).toBe(201);
      const actionId: string = res.body.data.id;
      await drain();
      const create = google.callsOf('create').find((c) => c.answered === 200 && JSON.stringify(c.body).includes(actionId));
      expect(create).toBeDefined();
      const buttons = create!.body.cardsV2[0].card.sections[1].widgets[0].buttonList.buttons as {
        text: string;
        onClick: { action: { function: string; parameters: { key: string; value: string }[] } };
      }[];
      const nonce = buttons[0]!.onClick.action.parameters.find((p) => p.key === 'nonce')!.value;
      const messageName = (await get(`/api/agent-actions/${actionId}`)).body.data.notifications.find(
        (n: any) => n.platform === 'google_chat',
      ).platform_message_id as string;
      return { actionId, nonce, buttons, messageName, create: create! };
    }

    /** A click as Google sends it, in the fixture's shape (Chat API or add-on). */
    function click(
      format: 'chat' | 'addon',
      input: {
        actionId: string;
        nonce: string;
        decision: 'approve' | 'reject' | 'snooze';
        who: { email: string; user: string; name?: string };
        messageName: string;
        at?: number;
        systemIdToken?: string;
      },
    ) {
      const eventTime = new Date(input.at ?? Date.now()).toISOString();
      const parameters = { decision: input.decision, action_id: input.actionId, nonce: input.nonce };
      const fn = `revintel_${input.decision}`;
      const user = { name: input.who.user, displayName: input.who.name ?? 'Someone', email: input.who.email, type: 'HUMAN' };
      if (format === 'chat') {
        const event = fixture('gchat-card-clicked.json');
        return {
          ...event,
          eventTime,
          user: { ...event.user, ...user },
          space: { ...event.space, name: space },
          message: { ...event.message, name: input.messageName, space: { ...event.message.space, name: space } },
          action: { actionMethodName: fn, parameters: Object.entries(parameters).map(([key, value]) => ({ key, value })) },
          common: { ...event.common, invokedFunction: fn, parameters },
        };
      }
      const event = fixture('gchat-card-clicked-addon.json');
      const { authorizationEventObject: _, ...rest } = event;
      return {
        ...rest,
        ...(input.systemIdToken ? { authorizationEventObject: { systemIdToken: input.systemIdToken } } : {}),
        commonEventObject: { ...event.commonEventObject, invokedFunction: fn, parameters },
        chat: {
          ...event.chat,
          user: { ...event.chat.user, ...user },
          eventTime,
          buttonClickedPayload: {
            ...event.chat.buttonClickedPayload,
            message: { ...event.chat.buttonClickedPayload.message, name: input.messageName },
            space: { ...event.chat.buttonClickedPayload.space, name: space },
          },
        },
      };
    }

    function message(format: 'chat' | 'addon', who: { email: string; user: string }, text: string) {
      const eventTime = new Date().toISOString();
      const msg = {
        name: `${space}/messages/m${newId('org').slice(4)}`,
        sender: { name: who.user, type: 'HUMAN' },
        text: `@revintel ${text}`,
        argumentText: ` ${text}`,
        space: { name: space },
      };
      const user = { name: who.user, email: who.email, type: 'HUMAN' };
      return format === 'chat'
        ? { type: 'MESSAGE', eventTime, message: msg, user, space: { name: space, spaceType: 'SPACE' } }
        : { commonEventObject: { hostApp: 'CHAT' }, chat: { user, eventTime, messagePayload: { message: msg, space: { name: space } } } };
    }

    beforeAll(async () => {
      google = await fakeGoogle();
      forgetAccessToken();
      settings = { ...DEFAULT_SETTINGS, actions: actionSettingsOf(configFor()) };
      database = await openTestDatabase(backend);
      app = buildApp(database, { config: configFor() }).app;
      const made = await createOrgWithKey(database);
      key = made.secret;
      orgId = made.org.id;
      await database.db.transaction((tx) =>
        chatAdminUnits['chat.add'](tx as never, {
          id: newId('chi'),
          org: orgId,
          platform: 'google_chat',
          externalId: space,
          credentialsSealed: null,
          actor: 'test',
        }),
      );
      expect((await post('/api/csms', { email: owner.email, name: owner.name, channels: ['google_chat'] })).status).toBe(201);
      expect((await post('/api/csms', { email: other.email, name: other.name })).status).toBe(201);
    });
    afterAll(async () => {
      google.stop();
      slack.stop();
      meta.stop();
      await database?.dispose();
    });

    test('approval cards are created in the space with the copy id as requestId; one access token serves both; 429, then a create whose answer was lost, then delivered once', async () => {
      const tokensBefore = google.callsOf('token').length;
      google.script('create', [
        { status: 429, headers: { 'retry-after': '1' } },
        { status: 503, commit: true },
      ]);
      const first = await posted();
      const second = await posted('escalation', { to: 'manager', note: 'renewal at risk' });
      expect(google.callsOf('token').length - tokensBefore).toBeLessThanOrEqual(1);
      expect(google.callsOf('token').filter((c) => c.answered === 200).length).toBe(1);
      for (const sent of [first, second]) {
        const detail = (await get(`/api/agent-actions/${sent.actionId}`)).body.data;
        expect(detail.status).toBe('pending_approval');
        expect(detail.notifications[0]).toMatchObject({
          platform: 'google_chat',
          status: 'sent',
          target: owner.email,
          platform_channel: space,
        });
        expect(sent.create.path).toBe(`/v1/${space}/messages`);
        expect(sent.create.query.requestId).toBe(detail.notifications[0].id);
        expect(sent.messageName.startsWith(`${space}/messages/`)).toBe(true);
        expect(sent.buttons.map((b) => b.text)).toEqual(['Approve', 'Reject', 'Snooze 7 days']);
        expect(sent.buttons[0]!.onClick.action.parameters).toEqual([
          { key: 'decision', value: 'approve' },
          { key: 'action_id', value: sent.actionId },
          { key: 'nonce', value: sent.nonce },
        ]);
      }
      // Every attempt carried the same requestId: the create Google carried out (its answer lost) is the message kept.
      const attempts = google.callsOf('create').filter((c) => c.query.requestId === first.create.query.requestId);
      expect(attempts.map((c) => c.answered)).toEqual([429, 503, 200]);
      expect(google.created.get(first.create.query.requestId!)!.name).toBe(first.messageName);
      expect([...google.created.values()].filter((m) => JSON.stringify(m.body).includes(first.actionId))).toHaveLength(1);
      expect((await get(`/api/agent-actions/${first.actionId}`)).body.data.notifications[0].attempts).toBe(3);
      expect(first.create.token).toMatch(/^ya29\.fake-/);
    });

    test('a Chat API click (the fixture) approves once; the answer replaces the card (UPDATE_MESSAGE) and no patch follows', async () => {
      const sent = await posted();
      const event = click('chat', { ...sent, decision: 'approve', who: { ...owner, name: 'Ana' } });
      const res = await send(event, await idToken(CHAT));
      expect(res.status).toBe(200);
      const shape = fixture('gchat-response-update-message.json');
      expect(Object.keys(res.body).sort()).toEqual(Object.keys(shape).sort());
      expect(res.body.actionResponse).toEqual({ type: 'UPDATE_MESSAGE' });
      expect(res.body.cardsV2[0].cardId).toBe(`revintel-${sent.actionId}`);
      expect(res.body.cardsV2[0].card.header.title).toStartWith(`Approved by ${owner.name}`);
      expect(JSON.stringify(res.body)).not.toContain('revintel_approve');
      const detail = (await get(`/api/agent-actions/${sent.actionId}`)).body.data;
      expect(detail.status).toBe('approved');
      expect(detail.decided_by).toMatchObject({ kind: 'csm', name: owner.name, platform: 'google_chat' });
      expect(detail.notifications[0].status).toBe('updated');
      await drain();
      expect(google.callsOf('patch').filter((c) => c.path.endsWith(sent.messageName))).toHaveLength(0);
    });

    test('an add-on click with its systemIdToken and no header rejects; the answer is updateMessageAction, never a bare text', async () => {
      const sent = await posted();
      const event = click('addon', { ...sent, decision: 'reject', who: owner, systemIdToken: await idToken(ADDON) });
      const res = await send(event, null);
      expect(res.status).toBe(200);
      const shape = fixture('gchat-response-update-message-addon.json');
      expect(Object.keys(res.body)).toEqual(Object.keys(shape));
      expect(res.body.text).toBeUndefined();
      const card = res.body.hostAppDataAction.chatDataAction.updateMessageAction.message.cardsV2[0];
      expect(card.card.header.title).toStartWith(`Rejected by ${owner.name}`);
      expect((await get(`/api/agent-actions/${sent.actionId}`)).body.data.status).toBe('rejected');
      const [stored] = await queryText<{ body: Record<string, unknown> }>(
        database.db,
        `select body from chat_inbound_events where platform = 'google_chat' and org_id = $1 and type = 'addon.buttonClickedPayload' order by created_at desc limit 1`,
        [orgId],
      );
      expect(JSON.stringify(stored!.body)).not.toContain('systemIdToken');
    });

    test('expired, wrong audience, wrong issuer, wrong e-mail, unknown kid, a forged signature, HS256, none: 401 and nothing stored or changed', async () => {
      const sent = await posted();
      const stored = await inbound();
      const event = click('chat', { ...sent, decision: 'approve', who: owner });
      const addOnEvent = click('addon', { ...sent, decision: 'approve', who: owner });
      const hs256 = await new SignJWT({ iss: 'https://accounts.google.com', aud: AUDIENCE, email: CHAT, email_verified: true })
        .setProtectedHeader({ alg: 'HS256', kid: 'fake-jwks-1' })
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new Uint8Array(32));
      const faults: [string, unknown, string | null, RegExp][] = [
        ['expired', event, await idToken(CHAT, {}, { issuedAt: Math.floor(Date.now() / 1000) - 7200, expiresIn: 3600 }), /expired/],
        ['wrong audience', event, await idToken(CHAT, { aud: 'https://elsewhere.example/hook' }), /another audience/],
        ['wrong issuer', event, await idToken(CHAT, { iss: 'https://evil.example' }), /another issuer/],
        ['wrong e-mail', event, await idToken('someone@evil.example'), /not issued to chat@system/],
        ['unverified e-mail', event, await idToken(CHAT, { email_verified: false }), /not issued to/],
        ['the Chat signer on an add-on event', addOnEvent, await idToken(CHAT), /not issued to service-/],
        ['unknown kid', event, await idToken(CHAT, {}, { kid: 'nobody-has-this' }), /kid/],
        ['forged signature', event, await idToken(CHAT, {}, { key: await google.otherKey() }), /signature/],
        ['HS256', event, hs256, /not RS256/],
        ['no token', event, null, /no bearer token/],
      ];
      for (const [label, body, token, reason] of faults) {
        const res = await send(body, token);
        expect({ label, status: res.status }).toEqual({ label, status: 401 });
        expect(res.body.error).toMatch(reason);
        expect(res.headers.get('www-authenticate')).toContain('Bearer');
      }
      expect(await inbound()).toBe(stored);
      expect((await get(`/api/agent-actions/${sent.actionId}`)).body.data.status).toBe('pending_approval');
      // A body that is no event: 401 without a token (a stranger learns nothing of it), 400 with Google's.
      const garbage = (token?: string) =>
        call(app, 'POST', PATH, {
          rawBody: '{"not":',
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        });
      expect((await garbage()).status).toBe(401);
      const malformed = await garbage(await idToken(CHAT));
      expect(malformed.status).toBe(400);
      expect(malformed.body.code).toBe('malformed_json');
      const untyped = await send({ eventTime: new Date().toISOString() }, await idToken(CHAT));
      expect(untyped.status).toBe(400);
      expect(untyped.body.error).toContain('Invalid field "type"');
    });

    test("Google's keys unreachable: 503 with Retry-After, nothing stored", async () => {
      const unreachable = buildApp(database, { config: configFor({ googleJwksUrl: 'http://127.0.0.1:1/oauth2/v3/certs' }) }).app;
      const stored = await inbound();
      const res = await send(message('chat', owner, 'help'), await idToken(CHAT), unreachable);
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('upstream_unavailable');
      expect(res.headers.get('retry-after')).toBe('30');
      expect(await inbound()).toBe(stored);
    });

    test('the project-number audience: a JWT chat@system signs with its x509 certificates is accepted; another project number is not', async () => {
      const byNumber = buildApp(database, { config: configFor({ gchatAudienceMode: 'project_number', gchatAudience: PROJECT }) }).app;
      const jwt = (aud: string) => google.sign({ iss: CHAT, aud }, { key: 'x509' });
      const ok = await send(message('chat', owner, 'help'), await jwt(PROJECT), byNumber);
      expect(ok.status).toBe(200);
      expect(ok.body.text).toContain('status <customer>');
      const wrong = await send(message('chat', owner, 'help'), await jwt('999'), byNumber);
      expect(wrong.status).toBe(401);
      // An ID token for the URL is no JWT of the project's (another key set, another issuer).
      expect((await send(message('chat', owner, 'help'), await idToken(CHAT), byNumber)).status).toBe(401);
    });

    test('a replayed event acts once; an event older than 300 s is refused', async () => {
      const sent = await posted();
      const event = click('chat', { ...sent, decision: 'approve', who: owner });
      const token = await idToken(CHAT);
      const first = await send(event, token);
      const again = await send(event, token);
      expect(first.body.actionResponse.type).toBe('UPDATE_MESSAGE');
      expect(again.status).toBe(200);
      expect(again.body).toEqual({});
      const detail = (await get(`/api/agent-actions/${sent.actionId}`)).body.data;
      expect(detail.events.filter((e: any) => e.kind === 'approved')).toHaveLength(1);
      const stale = await send(click('chat', { ...sent, decision: 'reject', who: owner, at: Date.now() - 301_000 }), token);
      expect(stale.status).toBe(401);
      expect(stale.body.error).toContain('300 s');
    });

    test('a plain CSM who does not own the customer, and someone who is no CSM: a private message, nothing changes', async () => {
      const sent = await posted();
      const notOwner = await send(click('chat', { ...sent, decision: 'approve', who: other }), await idToken(CHAT));
      expect(notOwner.status).toBe(200);
      expect(notOwner.body).toMatchObject({ actionResponse: { type: 'NEW_MESSAGE' }, privateMessageViewer: { name: other.user } });
      expect(notOwner.body.text).toContain("Only the customer's CSM or a manager");
      const stranger = person('Zed');
      const addOn = await send(click('addon', { ...sent, decision: 'approve', who: stranger }), await idToken(ADDON));
      const private_ = addOn.body.hostAppDataAction.chatDataAction.createMessageAction.message;
      expect(private_).toMatchObject({ privateMessageViewer: { name: stranger.user } });
      expect(private_.text).toContain('Only a CSM');
      const wrongNonce = await send(
        click('chat', { ...sent, nonce: '0'.repeat(32), decision: 'approve', who: owner }),
        await idToken(CHAT),
      );
      expect(wrongNonce.body.text).toContain('does not belong');
      expect((await get(`/api/agent-actions/${sent.actionId}`)).body.data.status).toBe('pending_approval');
      // Late: decided over the API first, the owner's click is told so privately.
      expect((await post(`/api/agent-actions/${sent.actionId}/reject`, {})).status).toBe(200);
      const late = await send(click('chat', { ...sent, decision: 'approve', who: owner }), await idToken(CHAT));
      expect(late.body).toMatchObject({ actionResponse: { type: 'NEW_MESSAGE' }, privateMessageViewer: { name: owner.user } });
      expect(late.body.text).toContain(`Action ${sent.actionId} was already rejected by API key`);
      expect((await get(`/api/agent-actions/${sent.actionId}`)).body.data.status).toBe('rejected');
    });

    test("a space's own budget: over RATE_LIMIT_WEBHOOK_PER_MINUTE it is a 429 with Retry-After", async () => {
      const tight = buildApp(database, { config: configFor({ webhookLimitPerMinute: 2 }) }).app;
      const token = await idToken(CHAT);
      await awayFromMinuteBoundary(3_000);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await send(message('chat', owner, 'help'), token, tight)).status);
      expect(statuses).toEqual([200, 200, 429]);
      const over = await send(message('chat', owner, 'help'), token, tight);
      expect(over.body.code).toBe('rate_limited');
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    test('messages to the app: status <customer> answered (Chat API), actions <customer> (add-on), a stranger is not answered', async () => {
      const name = `Globex ${newId('cus').slice(4, 10)}`;
      await customerOf(owner.email, name);
      const status = await send(message('chat', owner, `status ${name}`), await idToken(CHAT));
      expect(status.status).toBe(200);
      expect(status.body.text).toContain(name);
      expect(status.body.text).toContain('not scored yet; 0 open actions');
      const actions = await send(message('addon', owner, `actions ${name}`), await idToken(ADDON));
      expect(actions.body.hostAppDataAction.chatDataAction.createMessageAction.message.text).toBe(`${name} has no open action.`);
      const stranger = person('Zed');
      const denied = await send(message('chat', stranger, `status ${name}`), await idToken(CHAT));
      expect(denied.body).toMatchObject({ privateMessageViewer: { name: stranger.user } });
      expect(denied.body.text).toContain('not allowed');
      expect(denied.body.text).not.toContain('EUR');
    });

    test('a decision over the API patches the card (updateMask=cardsV2)', async () => {
      const sent = await posted();
      expect((await post(`/api/agent-actions/${sent.actionId}/approve`, {})).status).toBe(200);
      await drain();
      const patches = google.callsOf('patch').filter((c) => c.path === `/v1/${sent.messageName}`);
      expect(patches).toHaveLength(1);
      expect(patches[0]!.query).toEqual({ updateMask: 'cardsV2' });
      expect(patches[0]!.body.cardsV2[0].card.header.title).toStartWith('Approved by API key');
      expect(JSON.stringify(patches[0]!.body)).not.toContain('revintel_approve');
      expect((await get(`/api/agent-actions/${sent.actionId}`)).body.data.notifications[0].status).toBe('updated');
    });

    test('snoozed from Google Chat, then awake: the card gets its buttons back and a reminder is posted in the space', async () => {
      const sent = await posted();
      const snoozed = await send(click('addon', { ...sent, decision: 'snooze', who: owner }), await idToken(ADDON));
      const card = snoozed.body.hostAppDataAction.chatDataAction.updateMessageAction.message.cardsV2[0].card;
      expect(card.header.title).toStartWith('Snoozed until');
      const detail = (await get(`/api/agent-actions/${sent.actionId}`)).body.data;
      expect(detail.status).toBe('snoozed');
      await database.db.transaction((tx) =>
        wakeSnoozedActions(tx as never, new Date(Date.parse(detail.snoozed_until) + 1000), undefined, settings.actions),
      );
      await drain();
      const patch = google.callsOf('patch').find((c) => c.path === `/v1/${sent.messageName}`);
      const buttons = patch!.body.cardsV2[0].card.sections[1].widgets[0].buttonList.buttons;
      expect(buttons.map((b: any) => b.onClick.action.parameters[2].value)).toEqual([sent.nonce, sent.nonce, sent.nonce]);
      const reminder = google.callsOf('create').find((c) => String(c.body.text ?? '').includes(sent.actionId));
      expect(reminder!.body.text).toContain('The snooze is over');
      expect(reminder!.path).toBe(`/v1/${space}/messages`);
      expect(reminder!.query.requestId).toMatch(/^chs_/);
      // The card works again: the owner approves it.
      const approved = await send(click('chat', { ...sent, decision: 'approve', who: owner }), await idToken(CHAT));
      expect(approved.body.cardsV2[0].card.header.title).toStartWith(`Approved by ${owner.name}`);
    });

    test('a Google Chat approve racing an API reject: exactly one outcome', async () => {
      const sent = await posted();
      const event = click('chat', { ...sent, decision: 'approve', who: owner });
      const [chat, api] = await Promise.all([send(event, await idToken(CHAT)), post(`/api/agent-actions/${sent.actionId}/reject`, {})]);
      expect(chat.status).toBe(200);
      const detail = (await get(`/api/agent-actions/${sent.actionId}`)).body.data;
      expect(detail.events.filter((e: any) => e.kind === 'approved' || e.kind === 'rejected')).toHaveLength(1);
      expect(detail.status).toBe(api.status === 200 ? 'rejected' : 'approved');
      if (api.status === 200) expect(chat.body.text).toContain('already rejected');
      else expect(chat.body.actionResponse.type).toBe('UPDATE_MESSAGE');
    });

    /** The organisation's Slack workspace, installed once (an organisation has one). */
    let slackInstalled = false;
    async function installSlack() {
      if (slackInstalled) return;
      slackInstalled = true;
      await database.db.transaction(async (tx) => {
        const id = newId('chi');
        await chatAdminUnits['chat.add'](tx as never, {
          id,
          org: orgId,
          platform: 'slack',
          externalId: team,
          credentialsSealed: sealSecret(`xoxb-test-${team}`, SECRET_KEY, id),
          actor: 'test',
        });
      });
    }

    test('one action on all three platforms: a Slack approve, a Google Chat reject and a WhatsApp reject at once give one outcome, and every copy shows it', async () => {
      const zoe = {
        ...person('Zoe'),
        slackUser: `U${newId('org').slice(4, 14).toUpperCase()}`,
        number: `1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`,
      };
      const phoneNumberId = `8${String(Math.floor(Math.random() * 1e14)).padStart(14, '0')}`;
      await installSlack();
      await database.db.transaction(async (tx) => {
        const id = newId('chi');
        await chatAdminUnits['chat.add'](tx as never, {
          id,
          org: orgId,
          platform: 'whatsapp',
          externalId: phoneNumberId,
          credentialsSealed: sealSecret(`EAAG-test-token-${phoneNumberId}`, SECRET_KEY, id),
          actor: 'test',
        });
      });
      expect(
        (
          await post('/api/csms', {
            email: zoe.email,
            name: 'Zoe',
            slack_user_id: zoe.slackUser,
            phone: `+${zoe.number}`,
            channels: ['slack', 'google_chat', 'whatsapp'],
          })
        ).status,
      ).toBe(201);
      // Zoe wrote to the number a minute ago: Meta's 24-hour window is open.
      await queryText(database.db, `update csms set whatsapp_inbound_at = now() - interval '1 minute' where org_id = $1 and email = $2`, [
        orgId,
        zoe.email,
      ]);
      const card = await posted('check_in', { channel: 'call', due_in_days: 5 }, zoe.email);
      const { actionId } = card;
      const copies = (await get(`/api/agent-actions/${actionId}`)).body.data.notifications;
      expect(copies.map((c: any) => [c.platform, c.status]).sort()).toEqual([
        ['google_chat', 'sent'],
        ['slack', 'sent'],
        ['whatsapp', 'sent'],
      ]);

      const slackPost = slack.callsOf('chat.postMessage').find((c) => JSON.stringify(c.body.blocks ?? []).includes(actionId))!;
      const approveValue = slackPost.body.blocks.find((b: any) => b.type === 'actions').elements[0].value as string;
      const payload = {
        type: 'block_actions',
        user: { id: zoe.slackUser, team_id: team },
        team: { id: team },
        trigger_id: `t3-${actionId}`,
        container: { channel_id: 'D0DM' },
        actions: [{ action_id: 'revintel_approve', value: approveValue, action_ts: '1' }],
      };
      const slackBody = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
      const at = Math.floor(Date.now() / 1000);
      const slackHeaders = {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': String(at),
        'x-slack-signature': `v0=${createHmac('sha256', SLACK_SIGNING_SECRET).update(`v0:${at}:${slackBody}`).digest('hex')}`,
      };
      const wamid = meta.to(zoe.number).find((m) => m.answered === 200 && JSON.stringify(m.body).includes(`:${actionId}:`))!.wamid!;
      const reply = {
        from: zoe.number,
        id: `wamid.T3${newId('org').slice(4)}`,
        timestamp: String(at),
        type: 'text',
        text: { body: 'reject' },
        context: { from: '15550783881', id: wamid },
      };
      const metaBody = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: '1',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
                  contacts: [{ profile: { name: 'Zoe' }, wa_id: zoe.number }],
                  messages: [reply],
                },
              },
            ],
          },
        ],
      });
      const metaHeaders = {
        'content-type': 'application/json',
        'x-hub-signature-256': `sha256=${createHmac('sha256', WHATSAPP_APP_SECRET).update(metaBody).digest('hex')}`,
      };

      const [fromSlack, fromGoogle, fromMeta] = await Promise.all([
        call(app, 'POST', '/api/webhooks/team-chat', { rawBody: slackBody, headers: slackHeaders }),
        send(click('chat', { ...card, decision: 'reject', who: zoe }), await idToken(CHAT)),
        call(app, 'POST', '/api/webhooks/messaging', { rawBody: metaBody, headers: metaHeaders }),
      ]);
      expect([fromSlack.status, fromGoogle.status, fromMeta.status]).toEqual([200, 200, 200]);
      await drainJobs(database.db, [chatSendJob, whatsappInboundJob], { clock: () => Date.now() + 3 * 3600_000, settings });

      const decided = (await get(`/api/agent-actions/${actionId}`)).body.data;
      const decisions = decided.events.filter((e: any) => ['approved', 'rejected'].includes(e.kind));
      expect(decisions).toHaveLength(1);
      const word = decided.status === 'approved' ? 'Approved by Zoe' : 'Rejected by Zoe';
      expect(['approved', 'rejected']).toContain(decided.status);
      // Every copy shows the one outcome: Slack's message edited, Google's card replaced (in the
      // click's answer when its click won, else patched), a follow-up text on WhatsApp.
      const slackUpdates = slack.callsOf('chat.update').filter((c) => JSON.stringify(c.body.blocks).includes(actionId));
      expect(slackUpdates.map((c) => c.body.text.startsWith(word))).toEqual([true]);
      const patched = google.callsOf('patch').filter((c) => c.path === `/v1/${card.messageName}`);
      const googleShows =
        decided.decided_by.platform === 'google_chat'
          ? [fromGoogle.body.actionResponse.type, fromGoogle.body.cardsV2[0].card.header.title]
          : ['UPDATE_MESSAGE', patched[0]?.body.cardsV2[0].card.header.title];
      expect(googleShows[0]).toBe('UPDATE_MESSAGE');
      expect(String(googleShows[1])).toStartWith(word);
      expect(patched.length).toBe(decided.decided_by.platform === 'google_chat' ? 0 : 1);
      const texts = meta
        .to(zoe.number)
        .filter((m) => m.body.type === 'text' && m.answered === 200)
        .map((m) => String(m.body.text.body));
      expect(texts.filter((t) => t.startsWith(word) && t.includes(actionId))).toHaveLength(1);
      expect(decided.notifications.map((n: any) => n.status)).toEqual(['updated', 'updated', 'updated']);
    });

    test('one action on Slack and Google Chat: a Google click updates the Slack copy, a Slack click patches the Google card', async () => {
      const both = { ...person('Cy'), slackUser: `U${newId('org').slice(4, 14).toUpperCase()}` };
      await installSlack();
      expect(
        (await post('/api/csms', { email: both.email, name: 'Cy', slack_user_id: both.slackUser, channels: ['slack', 'google_chat'] }))
          .status,
      ).toBe(201);
      const fromGoogle = await posted('check_in', { channel: 'call', due_in_days: 5 }, both.email);
      const copies = (await get(`/api/agent-actions/${fromGoogle.actionId}`)).body.data.notifications;
      // One copy on each platform, both sent (in whichever order the two posts were recorded).
      expect(copies.map((c: any) => [c.platform, c.status]).sort()).toEqual([
        ['google_chat', 'sent'],
        ['slack', 'sent'],
      ]);
      const clicked = await send(click('chat', { ...fromGoogle, decision: 'approve', who: both }), await idToken(CHAT));
      expect(clicked.body.actionResponse.type).toBe('UPDATE_MESSAGE');
      await drain();
      const slackUpdate = slack.callsOf('chat.update').filter((c) => JSON.stringify(c.body.blocks).includes(fromGoogle.actionId));
      expect(slackUpdate).toHaveLength(1);
      expect(slackUpdate[0]!.body.text).toContain('Approved by Cy');

      const fromSlack = await posted('renewal_call', { due_in_days: 10 }, both.email);
      const slackPost = slack.callsOf('chat.postMessage').find((c) => JSON.stringify(c.body.blocks ?? []).includes(fromSlack.actionId))!;
      const value = slackPost.body.blocks.find((b: any) => b.type === 'actions').elements[1].value as string;
      const payload = {
        type: 'block_actions',
        user: { id: both.slackUser, team_id: team },
        team: { id: team },
        trigger_id: `t-${fromSlack.actionId}`,
        container: { channel_id: 'D0DM' },
        actions: [{ action_id: 'revintel_reject', value, action_ts: '1' }],
      };
      const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
      const at = Math.floor(Date.now() / 1000);
      const signature = `v0=${createHmac('sha256', SLACK_SIGNING_SECRET).update(`v0:${at}:${body}`).digest('hex')}`;
      const res = await call(app, 'POST', '/api/webhooks/team-chat', {
        rawBody: body,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': String(at),
          'x-slack-signature': signature,
        },
      });
      expect(res.status).toBe(200);
      await drain();
      expect((await get(`/api/agent-actions/${fromSlack.actionId}`)).body.data.status).toBe('rejected');
      const patches = google.callsOf('patch').filter((c) => c.path === `/v1/${fromSlack.messageName}`);
      expect(patches).toHaveLength(1);
      expect(patches[0]!.body.cardsV2[0].card.header.title).toStartWith('Rejected by Cy');
    });

    test('an event from a space no organisation installed: a hint, nothing decided', async () => {
      const event = { ...message('chat', owner, 'help'), space: { name: 'spaces/NOTINSTALLED1' } };
      (event as any).message.space = { name: 'spaces/NOTINSTALLED1' };
      const res = await send(event, await idToken(CHAT));
      expect(res.status).toBe(200);
      expect(res.body.text).toContain('revintel chat add google-chat');
    });
  });
}
