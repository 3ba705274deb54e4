// Slack both ways on both backends (docs/chat-platforms.md "Slack"), against a fake Slack Web API
// on a real port: the recorded fixtures verify with their published signatures at their recorded
// time; bad, missing and stale signatures are 401 with X-Slack-No-Retry; an approval request goes
// out through the chat outbox (users.lookupByEmail, chat.postMessage with the buttons, 429 twice
// then delivered once, ok:false dead at once and visible); a signed click decides once (its
// redelivery changes nothing), updates its copy through response_url; who may not decide is told
// privately; a click racing an API decision gives one outcome; a mention is answered once in its
// thread; expiry updates every copy; the database down during a click is a 503 without retries.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { queryText } from '../../src/db/client.ts';
import { newId } from '../../src/lib/ids.ts';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { expireActions, wakeSnoozedActions } from '../../src/modules/agent-actions/service.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import { chatAdminUnits } from '../../src/modules/chat/installations.ts';
import { endpointAdminUnits } from '../../src/modules/agent-actions/endpoints.ts';
import { BUTTONS } from '../../src/modules/slack/messages.ts';
import { chatSendJob } from '../../src/modules/chat/platforms.ts';
import { verifySlackSignature } from '../../src/modules/slack/webhook.ts';
import { fakeSlack } from '../helpers/fake-slack.ts';
import {
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

const FIXTURES = new URL('../fixtures/slack/', import.meta.url);
const SIGNATURES: { fixture: string; secret: string; headers: Record<string, string> }[] = JSON.parse(
  readFileSync(new URL('signatures.json', FIXTURES), 'utf8'),
);
const SIGNING_SECRET = SIGNATURES[0]!.secret;
const SECRET_KEY = 'slack-test-secret-key-0123456789abcdefghij';
const PATH = '/api/webhooks/team-chat';

const randomTeam = () => `T${newId('org').slice(4, 14).toUpperCase()}`;
const randomUser = () => `U${newId('org').slice(4, 14).toUpperCase()}`;

function signed(body: string, contentType: string, at = Math.floor(Date.now() / 1000), secret = SIGNING_SECRET): Record<string, string> {
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${at}:${body}`).digest('hex')}`;
  return { 'content-type': contentType, 'x-slack-request-timestamp': String(at), 'x-slack-signature': signature };
}

test('every slack-* fixture verifies with its published signature at its recorded time, and not five minutes later', () => {
  expect(SIGNATURES.map((s) => s.fixture).sort()).toEqual([
    'slack-app-mention.json',
    'slack-block-actions.txt',
    'slack-url-verification.json',
  ]);
  for (const entry of SIGNATURES) {
    const raw = readFileSync(new URL(entry.fixture, FIXTURES));
    const headers = new Headers(entry.headers);
    const at = Number(entry.headers['X-Slack-Request-Timestamp']) * 1000;
    expect(verifySlackSignature(raw, headers, [entry.secret], at)).toEqual({ ok: true });
    expect(verifySlackSignature(raw, headers, ['another-secret', entry.secret], at)).toEqual({ ok: true });
    expect(verifySlackSignature(raw, headers, [entry.secret], at + 301_000).ok).toBe(false);
    expect(verifySlackSignature(Buffer.concat([raw, Buffer.from(' ')]), headers, [entry.secret], at).ok).toBe(false);
  }
});

for (const backend of BACKENDS) {
  describe(`Slack (${backend})`, () => {
    const slack = fakeSlack();
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    let orgName: string;
    let clock: number | null = null;
    const team = randomTeam();
    /** What the worker's chat.send jobs run with: the fake Slack, the SECRET_KEY that opens the bot tokens. */
    const settings = { ...DEFAULT_SETTINGS, actions: { ...DEFAULT_ACTION_SETTINGS, secretKey: SECRET_KEY, slackApiBase: slack.base } };

    const owner = { email: `ana.${newId('csm').slice(4, 12).toLowerCase()}@vendor.example`, user: randomUser(), name: 'Ana' };
    const other = { email: `bo.${newId('csm').slice(4, 12).toLowerCase()}@vendor.example`, user: randomUser(), name: 'Bo' };
    const manager = { email: `mia.${newId('csm').slice(4, 12).toLowerCase()}@vendor.example`, user: randomUser(), name: 'Mia' };

    const post = (path: string, body?: unknown) => call(app, 'POST', path, { key, body });
    const get = (path: string) => call(app, 'GET', path, { key });
    const drain = () => drainJobs(database.db, [chatSendJob], { clock: () => Date.now() + 3 * 3600_000, settings });
    const webhook = (body: string, headers: Record<string, string>) => call(app, 'POST', PATH, { rawBody: body, headers });

    async function install(orgIdOf: string, teamId: string): Promise<string> {
      const id = newId('chi');
      await database.db.transaction((tx) =>
        chatAdminUnits['chat.add'](tx as never, {
          id,
          org: orgIdOf,
          platform: 'slack',
          externalId: teamId,
          credentialsSealed: sealSecret(`xoxb-test-${teamId}`, SECRET_KEY, id),
          actor: 'test',
        }),
      );
      return id;
    }

    async function customerOf(csmEmail: string | null, name = `Acme ${newId('cus').slice(4, 10)}`): Promise<string> {
      const res = await post('/api/customers', { name, currency: 'EUR', ...(csmEmail ? { csm: { email: csmEmail } } : {}) });
      expect(res.status).toBe(201);
      return res.body.data.id;
    }

    async function propose(
      customerId: string,
      type = 'check_in',
      params: Record<string, unknown> = { channel: 'call', due_in_days: 5 },
    ): Promise<string> {
      const res = await post('/api/agent-actions', { customer_id: customerId, type, params });
      expect(res.status).toBe(201);
      return res.body.data.id;
    }

    /** The sent copy's buttons, as the fake Slack received them. */
    function buttonsOf(actionId: string) {
      const message = slack
        .callsOf('chat.postMessage')
        .find((c) => c.answered === 200 && JSON.stringify(c.body.blocks ?? []).includes(actionId));
      expect(message).toBeDefined();
      const actions = message!.body.blocks.find((b: any) => b.type === 'actions');
      return { channel: message!.body.channel as string, elements: actions.elements as { action_id: string; value: string }[] };
    }

    function click(input: {
      actionId: string;
      button: keyof typeof BUTTONS;
      value: string;
      user: string;
      teamId?: string;
      triggerId?: string;
      responseUrl?: string;
    }) {
      const payload = {
        type: 'block_actions',
        user: { id: input.user, username: 'someone', team_id: input.teamId ?? team },
        api_app_id: 'A0EXAMPLEAPP',
        container: { type: 'message', message_ts: '1767605460.002300', channel_id: 'D0DM', is_ephemeral: false },
        trigger_id: input.triggerId ?? `${Date.now()}.${newId('org').slice(4)}`,
        team: { id: input.teamId ?? team, domain: 'example' },
        channel: { id: 'D0DM', name: 'directmessage' },
        response_url: input.responseUrl ?? slack.hook(newId('org').slice(4)),
        actions: [
          {
            type: 'button',
            action_id: BUTTONS[input.button],
            block_id: 'revintel_decision',
            value: input.value,
            action_ts: '1767605490.118842',
          },
        ],
      };
      const body = `payload=${encodeURIComponent(JSON.stringify(payload)).replace(/%20/g, '+')}`;
      return { body, headers: signed(body, 'application/x-www-form-urlencoded') };
    }

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      const config = testConfig({
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
        secretKey: SECRET_KEY,
        slackSigningSecret: SIGNING_SECRET,
        slackApiBase: slack.base,
        allowInsecurePlatformUrls: true,
      });
      app = buildApp(database, { config, clock: () => clock ?? Date.now() }).app;
      const made = await createOrgWithKey(database);
      key = made.secret;
      orgId = made.org.id;
      orgName = made.org.name;
      await install(orgId, team);
      // Ana owns the customers and is found by e-mail; Bo is a plain CSM; Mia a manager.
      slack.addUser(owner.email, owner.user);
      expect((await post('/api/csms', { email: owner.email, name: owner.name, channels: ['slack'] })).status).toBe(201);
      expect((await post('/api/csms', { email: other.email, name: other.name, slack_user_id: other.user })).status).toBe(201);
      expect(
        (await post('/api/csms', { email: manager.email, name: manager.name, role: 'manager', slack_user_id: manager.user })).status,
      ).toBe(201);
    });
    afterAll(async () => {
      slack.stop();
      await database?.dispose();
    });

    test('the fixtures at their recorded time: url_verification echoes the challenge; the others are acknowledged', async () => {
      clock = 1_767_605_400_000;
      try {
        for (const entry of SIGNATURES) {
          const raw = readFileSync(new URL(entry.fixture, FIXTURES), 'utf8');
          const res = await webhook(raw, entry.headers);
          expect(res.status).toBe(200);
          if (entry.fixture === 'slack-url-verification.json')
            expect(res.body).toEqual({ challenge: 'p8QdB1xE3r0cYtHq7LmNw2aKsVf4Ug9ZoJiRbC6TyX5hDlMe' });
        }
      } finally {
        clock = null;
      }
      const stale = await webhook(
        readFileSync(new URL('slack-url-verification.json', FIXTURES), 'utf8'),
        SIGNATURES.find((s) => s.fixture === 'slack-url-verification.json')!.headers,
      );
      expect(stale.status).toBe(401);
      expect(stale.headers.get('x-slack-no-retry')).toBe('1');
    });

    test('a bad or missing signature, a stale timestamp: 401 with X-Slack-No-Retry; a signed body that does not parse: 400', async () => {
      const body = JSON.stringify({ type: 'url_verification', challenge: 'abc' });
      expect((await webhook(body, signed(body, 'application/json'))).body).toEqual({ challenge: 'abc' });
      for (const headers of [
        signed(body, 'application/json', undefined, 'wrong-secret'),
        { 'content-type': 'application/json' },
        signed(body, 'application/json', Math.floor(Date.now() / 1000) - 301),
        { ...signed(body, 'application/json'), 'x-slack-signature': 'v0=zz' },
      ]) {
        const res = await webhook(body, headers);
        expect(res.status).toBe(401);
        expect(res.headers.get('x-slack-no-retry')).toBe('1');
      }
      const garbage = 'payload=%7Bnot-json';
      expect((await webhook(garbage, signed(garbage, 'application/x-www-form-urlencoded'))).status).toBe(400);
    });

    test('an approval request: looked up by e-mail, posted with the buttons, 429 twice then delivered once; the action waits for a decision', async () => {
      slack.script('chat.postMessage', [
        { status: 429, headers: { 'retry-after': '1' } },
        { status: 429, headers: { 'retry-after': '2' } },
      ]);
      const actionId = await propose(await customerOf(owner.email));
      expect((await get(`/api/agent-actions/${actionId}`)).body.data.status).toBe('proposed');
      await drain();
      const posts = slack.callsOf('chat.postMessage').filter((c) => JSON.stringify(c.body.blocks ?? []).includes(actionId));
      expect(posts.map((p) => p.answered)).toEqual([429, 429, 200]);
      expect(posts[2]!.body.channel).toBe(owner.user);
      expect(posts[2]!.token).toBe(`xoxb-test-${team}`);
      const { elements } = buttonsOf(actionId);
      expect(elements.map((e) => e.action_id)).toEqual([BUTTONS.approve, BUTTONS.reject, BUTTONS.snooze]);
      expect(elements[0]!.value).toMatch(new RegExp(`^${actionId}:[0-9a-f]{32}$`));
      const detail = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(detail.status).toBe('pending_approval');
      expect(detail.notifications).toHaveLength(1);
      expect(detail.notifications[0]).toMatchObject({ platform: 'slack', status: 'sent', target: owner.user, attempts: 3 });
      expect(detail.notifications[0].platform_message_id).toMatch(/^\d+\.\d+$/);
      const [csm] = await queryText<{ slack_user_id: string }>(
        database.db,
        'select slack_user_id from csms where org_id = $1 and email = $2',
        [orgId, owner.email],
      );
      expect(csm!.slack_user_id).toBe(owner.user);
    });

    test("ok:false is permanent: the copy's send is dead after one attempt, visible on the action", async () => {
      slack.script('chat.postMessage', [{ status: 200, body: { ok: false, error: 'channel_not_found' } }]);
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const detail = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(detail.notifications[0]).toMatchObject({ status: 'failed', attempts: 1 });
      expect(detail.notifications[0].last_error).toContain('channel_not_found');
      expect(detail.status).toBe('pending_approval');
      const [send] = await queryText<{ status: string; attempts: number }>(
        database.db,
        `select status, attempts from chat_sends where action_id = $1 and kind = 'post'`,
        [actionId],
      );
      expect(send).toMatchObject({ status: 'dead', attempts: 1 });
      // The operator sees it in `revintel outbox list` and sends it again once Slack is fixed.
      const listed = await endpointAdminUnits['outbox.list'](database.db, { org: orgName, status: 'dead', limit: 50 });
      const dead = listed.find((d) => d.event_type === 'slack.post' && d.event_id === detail.notifications[0].id);
      expect(dead).toMatchObject({ status: 'dead', attempts: 1, url: 'slack:chat.postMessage' });
      expect(await endpointAdminUnits['outbox.retry'](database.db, { ids: [dead!.id], actor: 'test' })).toEqual({ retried: [dead!.id] });
      await drain();
      const again = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(again.notifications[0].status).toBe('sent');
    });

    test('a signed approve and its redelivery: one decision, one update of the message through response_url', async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { elements } = buttonsOf(actionId);
      const hook = slack.hook(`approve-${actionId}`);
      const approve = click({
        actionId,
        button: 'approve',
        value: elements[0]!.value,
        user: owner.user,
        triggerId: `trigger-${actionId}`,
        responseUrl: hook,
      });
      const first = await webhook(approve.body, approve.headers);
      expect(first.status).toBe(200);
      const again = await webhook(approve.body, { ...approve.headers, 'x-slack-retry-num': '1' });
      expect(again.status).toBe(200);
      await drain();
      const detail = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(detail.status).toBe('approved');
      expect(detail.decided_by).toMatchObject({ kind: 'csm', name: owner.name, platform: 'slack' });
      expect(detail.events.filter((e: any) => e.kind === 'approved')).toHaveLength(1);
      const updates = slack.calls.filter(
        (c) => c.method === 'response_url' && c.body.replace_original === true && JSON.stringify(c.body.blocks).includes(actionId),
      );
      expect(updates).toHaveLength(1);
      expect(updates[0]!.body.text).toContain(`Approved by ${owner.name}`);
      expect(JSON.stringify(updates[0]!.body.blocks)).not.toContain(BUTTONS.approve);
      expect(detail.notifications[0].status).toBe('updated');
      const [stored] = await queryText<{ n: number }>(
        database.db,
        `select count(*)::int as n from chat_inbound_events where dedupe_key like $1`,
        [`%trigger-${actionId}`],
      );
      expect(stored!.n).toBe(1);
    });

    test("a non-owner's click and a plain CSM approving a 20 % discount: nothing changes, each is told why privately", async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { elements } = buttonsOf(actionId);
      const notOwner = click({ actionId, button: 'approve', value: elements[0]!.value, user: other.user });
      expect((await webhook(notOwner.body, notOwner.headers)).status).toBe(200);
      const discountId = await propose(await customerOf(owner.email), 'discount_offer', { percent: 20, months: 3 });
      await drain();
      const discount = buttonsOf(discountId);
      const plain = click({
        actionId: discountId,
        button: 'approve',
        value: discount.elements[0]!.value,
        user: owner.user,
        responseUrl: slack.hook(`deny-${discountId}`),
      });
      expect((await webhook(plain.body, plain.headers)).status).toBe(200);
      await drain();
      expect((await get(`/api/agent-actions/${actionId}`)).body.data.status).toBe('pending_approval');
      expect((await get(`/api/agent-actions/${discountId}`)).body.data.status).toBe('pending_approval');
      const notices = slack.calls.filter((c) => c.body.response_type === 'ephemeral').map((c) => c.body.text as string);
      expect(notices.some((n) => n.includes("Only the customer's CSM or a manager"))).toBe(true);
      expect(notices.some((n) => n.includes('above 15%'))).toBe(true);
      // The manager may.
      const byManager = click({ actionId: discountId, button: 'approve', value: discount.elements[0]!.value, user: manager.user });
      expect((await webhook(byManager.body, byManager.headers)).status).toBe(200);
      expect((await get(`/api/agent-actions/${discountId}`)).body.data.status).toBe('approved');
    });

    test('a wrong nonce, a click from another workspace, a click on a decided action: nothing changes', async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { elements } = buttonsOf(actionId);
      const wrong = click({ actionId, button: 'approve', value: `${actionId}:${'0'.repeat(32)}`, user: owner.user });
      expect((await webhook(wrong.body, wrong.headers)).status).toBe(200);
      const otherOrg = await createOrgWithKey(database);
      const otherTeam = randomTeam();
      await install(otherOrg.org.id, otherTeam);
      const foreign = click({ actionId, button: 'approve', value: elements[0]!.value, user: owner.user, teamId: otherTeam });
      expect((await webhook(foreign.body, foreign.headers)).status).toBe(200);
      expect((await get(`/api/agent-actions/${actionId}`)).body.data.status).toBe('pending_approval');
      expect((await post(`/api/agent-actions/${actionId}/reject`, {})).status).toBe(200);
      const late = click({
        actionId,
        button: 'approve',
        value: elements[0]!.value,
        user: owner.user,
        responseUrl: slack.hook(`late-${actionId}`),
      });
      expect((await webhook(late.body, late.headers)).status).toBe(200);
      await drain();
      expect((await get(`/api/agent-actions/${actionId}`)).body.data.status).toBe('rejected');
      const notice = slack.calls.find(
        (c) => c.method === 'response_url' && c.body.response_type === 'ephemeral' && String(c.body.text).includes(actionId),
      );
      expect(notice?.body.text).toContain('already rejected');
      const outcomes = await queryText<{ outcome: string }>(
        database.db,
        `select outcome from chat_inbound_events where body->'actions'->0->>'value' like $1 order by created_at`,
        [`${actionId}:%`],
      );
      expect(outcomes.map((o) => o.outcome)).toEqual(['denied', 'denied', 'denied']);
    });

    test("snooze from Slack with a response_url off Slack's host: the copy is updated with chat.update, never through that URL", async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { elements } = buttonsOf(actionId);
      const foreign = `https://hooks.example.net/actions/${actionId}`;
      const snooze = click({ actionId, button: 'snooze', value: elements[2]!.value, user: owner.user, responseUrl: foreign });
      expect((await webhook(snooze.body, snooze.headers)).status).toBe(200);
      await drain();
      const detail = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(detail.status).toBe('snoozed');
      const updates = slack.callsOf('chat.update').filter((c) => JSON.stringify(c.body.blocks).includes(actionId));
      expect(updates).toHaveLength(1);
      expect(updates[0]!.body).toMatchObject({
        ts: detail.notifications[0].platform_message_id,
        channel: detail.notifications[0].platform_channel,
      });
      expect(updates[0]!.body.text).toContain(`Snoozed until ${detail.snoozed_until.slice(0, 10)}`);
      // The snooze ends: the copy gets its buttons back (the same nonce), the CSM is reminded in its
      // thread, and the old buttons decide again.
      await database.db.transaction((tx) =>
        wakeSnoozedActions(tx as never, new Date(Date.parse(detail.snoozed_until) + 1000), undefined, DEFAULT_ACTION_SETTINGS),
      );
      await drain();
      const reopened = slack.callsOf('chat.update').filter((c) => JSON.stringify(c.body.blocks).includes(actionId));
      expect(reopened).toHaveLength(2);
      expect(reopened[1]!.body.blocks.find((b: any) => b.type === 'actions').elements.map((e: any) => e.value)).toEqual(
        elements.map((e) => e.value),
      );
      const reminders = slack.callsOf('chat.postMessage').filter((c) => c.body.thread_ts === detail.notifications[0].platform_message_id);
      expect(reminders).toHaveLength(1);
      expect(reminders[0]!.body.text).toContain('waits for your decision again');
      const approve = click({ actionId, button: 'approve', value: elements[0]!.value, user: owner.user });
      expect((await webhook(approve.body, approve.headers)).status).toBe(200);
      expect((await get(`/api/agent-actions/${actionId}`)).body.data.status).toBe('approved');
    });

    test('an API decision updates the Slack copy; a click by someone who is no CSM is told so privately (chat.postEphemeral without a usable response_url)', async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { elements } = buttonsOf(actionId);
      const stranger = randomUser();
      const attempt = click({
        actionId,
        button: 'approve',
        value: elements[0]!.value,
        user: stranger,
        responseUrl: 'https://hooks.example.net/x',
      });
      expect((await webhook(attempt.body, attempt.headers)).status).toBe(200);
      expect((await post(`/api/agent-actions/${actionId}/approve`, {})).status).toBe(200);
      await drain();
      const notice = slack.callsOf('chat.postEphemeral').find((c) => c.body.user === stranger);
      expect(notice?.body.text).toContain('Only a CSM');
      const updates = slack.callsOf('chat.update').filter((c) => JSON.stringify(c.body.blocks).includes(actionId));
      expect(updates).toHaveLength(1);
      expect(updates[0]!.body.text).toContain('Approved by API key');
    });

    test('SLACK_SIGNING_SECRET_PREVIOUS is accepted during a rotation', async () => {
      const config = testConfig({
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
        secretKey: SECRET_KEY,
        slackSigningSecret: 'the-new-secret',
        slackSigningSecretPrevious: SIGNING_SECRET,
        slackApiBase: slack.base,
        allowInsecurePlatformUrls: true,
      });
      const rotated = buildApp(database, { config }).app;
      const body = JSON.stringify({ type: 'url_verification', challenge: 'rotated' });
      for (const secret of [SIGNING_SECRET, 'the-new-secret']) {
        const res = await call(rotated, 'POST', PATH, { rawBody: body, headers: signed(body, 'application/json', undefined, secret) });
        expect(res.body).toEqual({ challenge: 'rotated' });
      }
      expect(
        (await call(rotated, 'POST', PATH, { rawBody: body, headers: signed(body, 'application/json', undefined, 'older') })).status,
      ).toBe(401);
    });

    test('a Slack approve racing an API reject: exactly one outcome', async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { elements } = buttonsOf(actionId);
      const approve = click({ actionId, button: 'approve', value: elements[0]!.value, user: owner.user });
      const [slackAnswer, apiAnswer] = await Promise.all([
        webhook(approve.body, approve.headers),
        post(`/api/agent-actions/${actionId}/reject`, {}),
      ]);
      expect(slackAnswer.status).toBe(200);
      const detail = (await get(`/api/agent-actions/${actionId}`)).body.data;
      const decided = detail.events.filter((e: any) => e.kind === 'approved' || e.kind === 'rejected');
      expect(decided).toHaveLength(1);
      expect(detail.status).toBe(apiAnswer.status === 200 ? 'rejected' : 'approved');
    });

    test('status Acme and its retry: one answer in the thread; someone who is no CSM is not answered', async () => {
      const name = `Globex ${newId('cus').slice(4, 10)}`;
      await customerOf(owner.email, name);
      const eventId = `Ev${newId('org').slice(4, 14)}`;
      const envelope = (user: string, id: string) =>
        JSON.stringify({
          token: 'x',
          team_id: team,
          api_app_id: 'A0EXAMPLEAPP',
          type: 'event_callback',
          event_id: id,
          event_time: Math.floor(Date.now() / 1000),
          authorizations: [{ team_id: team, user_id: 'U0REVBOT01', is_bot: true }],
          event: {
            type: 'app_mention',
            user,
            text: `<@U0REVBOT01> status ${name}`,
            ts: '1767605400.001200',
            channel: 'C0CSTEAM01',
            event_ts: '1767605400.001200',
          },
        });
      const body = envelope(owner.user, eventId);
      expect((await webhook(body, signed(body, 'application/json'))).status).toBe(200);
      expect(
        (await webhook(body, { ...signed(body, 'application/json'), 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' }))
          .status,
      ).toBe(200);
      const stranger = envelope(randomUser(), `Ev${newId('org').slice(4, 14)}`);
      expect((await webhook(stranger, signed(stranger, 'application/json'))).status).toBe(200);
      const own = JSON.stringify({ ...JSON.parse(envelope('U0REVBOT01', `Ev${newId('org').slice(4, 14)}`)) });
      expect((await webhook(own, signed(own, 'application/json'))).status).toBe(200);
      await drain();
      const replies = slack
        .callsOf('chat.postMessage')
        .filter((c) => c.body.thread_ts === '1767605400.001200' && String(c.body.text).includes(name));
      expect(replies).toHaveLength(1);
      expect(replies[0]!.body.text).toContain('not scored yet; 0 open actions');
      const denied = slack.callsOf('chat.postEphemeral').filter((c) => String(c.body.text).includes('not allowed'));
      expect(denied.length).toBeGreaterThanOrEqual(1);
      const unknown = JSON.stringify({
        type: 'event_callback',
        team_id: team,
        event_id: `Ev${newId('org').slice(4, 14)}`,
        event: { type: 'reaction_added' },
      });
      expect((await webhook(unknown, signed(unknown, 'application/json'))).status).toBe(200);
      const [ignored] = await queryText<{ outcome: string }>(
        database.db,
        `select outcome from chat_inbound_events where type = 'event_callback.reaction_added' and org_id = $1`,
        [orgId],
      );
      expect(ignored!.outcome).toBe('ignored');
    });

    test('expiry updates every copy (chat.update on each)', async () => {
      // No CSM: the managers' channels. Two managers on Slack: two copies.
      const second = { email: `lea.${newId('csm').slice(4, 12).toLowerCase()}@vendor.example`, user: randomUser() };
      expect(
        (
          await call(app, 'PATCH', `/api/csms/${(await get('/api/csms?role=manager')).body.data[0].id}`, {
            key,
            body: { channels: ['slack'] },
          })
        ).status,
      ).toBe(200);
      expect(
        (await post('/api/csms', { email: second.email, role: 'manager', slack_user_id: second.user, channels: ['slack'] })).status,
      ).toBe(201);
      const actionId = await propose(await customerOf(null));
      await drain();
      const copies = (await get(`/api/agent-actions/${actionId}`)).body.data.notifications;
      expect(copies.map((c: any) => c.status)).toEqual(['sent', 'sent']);
      expect(await expireActions(database.db, new Date(Date.now() + 365 * 86_400_000))).toBeGreaterThanOrEqual(1);
      await drain();
      const updates = slack.callsOf('chat.update').filter((c) => JSON.stringify(c.body.blocks).includes(actionId));
      expect(updates).toHaveLength(2);
      expect(new Set(updates.map((u) => u.body.ts))).toEqual(new Set(copies.map((c: any) => c.platform_message_id)));
      expect(updates.every((u) => String(u.body.text).startsWith('Expired'))).toBe(true);
    });

    test('the database down during a click: 503 with X-Slack-No-Retry', async () => {
      const down = await openTestDatabase(backend);
      const config = testConfig({
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
        secretKey: SECRET_KEY,
        slackSigningSecret: SIGNING_SECRET,
        slackApiBase: slack.base,
        allowInsecurePlatformUrls: true,
      });
      const downApp = buildApp(down, { config }).app;
      await down.dispose();
      const attempt = click({ actionId: 'act_x', button: 'approve', value: 'act_x:00', user: owner.user });
      const res = await call(downApp, 'POST', PATH, { rawBody: attempt.body, headers: attempt.headers });
      expect(res.status).toBe(503);
      expect(res.headers.get('x-slack-no-retry')).toBe('1');
    });
  });
}
