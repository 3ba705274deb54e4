// WhatsApp both ways on both backends (docs/chat-platforms.md "WhatsApp"), against a fake Graph
// API on a real port: the recorded fixtures verify with their published signatures; the GET
// handshake; bad and missing signatures are 401 and store nothing; an acknowledged event is stored
// with its job before it is processed; approvals go as reply buttons inside the 24-hour window
// (429 then delivered once), as the template outside it or after 131047 (once); a signed button
// decides once (its redelivery does nothing more) and is confirmed once; whoever may not decide is
// told privately; a reply to an approval message decides or notes; a text naming one customer is a
// note, none or two a question; statuses are recorded; an API decision is followed up inside the
// window, recorded `window_closed` outside it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { queryText } from '../../src/db/client.ts';
import { newId } from '../../src/lib/ids.ts';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import { chatAdminUnits } from '../../src/modules/chat/installations.ts';
import { chatSendJob } from '../../src/modules/chat/platforms.ts';
import { whatsappInboundJob } from '../../src/modules/whatsapp/inbound.ts';
import { whatsappBatchJob } from '../../src/modules/whatsapp/batch.ts';
import { verifyMetaSignature } from '../../src/modules/whatsapp/webhook.ts';
import { BUTTONS } from '../../src/modules/slack/messages.ts';
import { fakeSlack } from '../helpers/fake-slack.ts';
import { fakeWhatsApp } from '../helpers/fake-whatsapp.ts';
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
import { drainJobs, runHandler } from '../helpers/jobs.ts';

const FIXTURES = new URL('../fixtures/whatsapp/', import.meta.url);
const SIGNATURES: { fixture: string; secret: string; headers: Record<string, string> }[] = JSON.parse(
  readFileSync(new URL('signatures.json', FIXTURES), 'utf8'),
);
const APP_SECRET = SIGNATURES[0]!.secret;
const VERIFY_TOKEN = 'example-verify-token-123';
const SECRET_KEY = 'whatsapp-test-secret-key-0123456789abcdefgh';
const PATH = '/api/webhooks/messaging';
const SLACK_SECRET = 'whatsapp-test-slack-signing-secret';

const digits = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 10)).join('');
const randomNumber = () => `1555${digits(7)}`;

const sign = (body: string, secret = APP_SECRET) => ({
  'content-type': 'application/json',
  'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

/** A delivery as Meta sends it: one entry, one change, these messages or statuses. */
function delivery(phoneNumberId: string, value: { messages?: Record<string, unknown>[]; statuses?: Record<string, unknown>[] }): string {
  const contacts = (value.messages ?? []).map((m) => ({ profile: { name: 'A CSM' }, wa_id: m.from }));
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              contacts,
              ...value,
            },
          },
        ],
      },
    ],
  });
}

const nowSeconds = () => String(Math.floor(Date.now() / 1000));
const wamid = () => `wamid.TEST${newId('org').slice(4)}`;
const buttonReply = (from: string, id: string, context: string) => ({
  context: { from: '15550783881', id: context },
  from,
  id: wamid(),
  timestamp: nowSeconds(),
  type: 'interactive',
  interactive: { type: 'button_reply', button_reply: { id, title: 'Approve' } },
});
const quickReply = (from: string, payload: string, context: string) => ({
  context: { from: '15550783881', id: context },
  from,
  id: wamid(),
  timestamp: nowSeconds(),
  type: 'button',
  button: { payload, text: 'Approve' },
});
const text = (from: string, body: string, context?: string) => ({
  ...(context ? { context: { from: '15550783881', id: context } } : {}),
  from,
  id: wamid(),
  timestamp: nowSeconds(),
  type: 'text',
  text: { body },
});

test('every whatsapp-* fixture verifies with its published signature; a changed byte or another secret does not', () => {
  expect(SIGNATURES.map((s) => s.fixture).sort()).toEqual([
    'whatsapp-button-reply.json',
    'whatsapp-status.json',
    'whatsapp-template-quick-reply.json',
    'whatsapp-text-message.json',
  ]);
  for (const entry of SIGNATURES) {
    const raw = readFileSync(new URL(entry.fixture, FIXTURES));
    const header = entry.headers['X-Hub-Signature-256']!;
    expect(verifyMetaSignature(raw, header, [entry.secret])).toEqual({ ok: true });
    expect(verifyMetaSignature(raw, header, ['the-new-secret', entry.secret])).toEqual({ ok: true });
    expect(verifyMetaSignature(raw, header, ['another-secret']).ok).toBe(false);
    expect(verifyMetaSignature(Buffer.concat([raw, Buffer.from(' ')]), header, [entry.secret]).ok).toBe(false);
    expect(verifyMetaSignature(raw, null, [entry.secret]).ok).toBe(false);
  }
});

for (const backend of BACKENDS) {
  describe(`WhatsApp (${backend})`, () => {
    const meta = fakeWhatsApp();
    const slack = fakeSlack();
    const team = `T${newId('org').slice(4, 14).toUpperCase()}`;
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    const phoneNumberId = `9${digits(14)}`;
    /** What the worker's jobs run with: the fake Graph API and Slack, the SECRET_KEY that opens the tokens. */
    const settings = {
      ...DEFAULT_SETTINGS,
      actions: { ...DEFAULT_ACTION_SETTINGS, secretKey: SECRET_KEY, whatsappApiBase: meta.base, slackApiBase: slack.base },
    };

    const tag = () => newId('csm').slice(4, 12).toLowerCase();
    const owner = { email: `ana.${tag()}@vendor.example`, number: randomNumber(), name: 'Ana' };
    const other = { email: `bo.${tag()}@vendor.example`, number: randomNumber(), name: 'Bo' };
    const manager = { email: `mia.${tag()}@vendor.example`, number: randomNumber(), name: 'Mia' };
    const later = { email: `lu.${tag()}@vendor.example`, number: randomNumber(), name: 'Lu' };
    const both = {
      email: `zoe.${tag()}@vendor.example`,
      number: randomNumber(),
      name: 'Zoe',
      user: `U${newId('org').slice(4, 14).toUpperCase()}`,
    };

    const post = (path: string, body?: unknown) => call(app, 'POST', path, { key, body });
    const get = (path: string) => call(app, 'GET', path, { key });
    const drain = () => drainJobs(database.db, [chatSendJob, whatsappInboundJob], { clock: () => Date.now() + 3 * 3600_000, settings });
    const webhook = (body: string, headers: Record<string, string> = sign(body)) => call(app, 'POST', PATH, { rawBody: body, headers });
    const deliver = async (value: Parameters<typeof delivery>[1]) => {
      const res = await webhook(delivery(phoneNumberId, value));
      expect(res.status).toBe(200);
    };
    const openWindow = (email: string, ago = "interval '1 minute'") =>
      queryText(database.db, `update csms set whatsapp_inbound_at = now() - ${ago} where org_id = $1 and email = $2`, [orgId, email]);

    async function customerOf(csmEmail: string, name = `Acme ${newId('cus').slice(4, 10)}`): Promise<string> {
      const res = await post('/api/customers', { name, currency: 'EUR', csm: { email: csmEmail } });
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

    /** The approval the fake received for `actionId` (delivered), its buttons' ids and its wamid. */
    function approvalOf(actionId: string) {
      const sent = meta.sends.find((s) => s.answered === 200 && JSON.stringify(s.body).includes(`:${actionId}:`));
      expect(sent).toBeDefined();
      const ids: string[] =
        sent!.body.type === 'interactive'
          ? sent!.body.interactive.action.buttons.map((b: any) => b.reply.id)
          : sent!.body.template.components.filter((c: any) => c.type === 'button').map((c: any) => c.parameters[0].payload);
      return { send: sent!, ids, wamid: sent!.wamid! };
    }

    const textsTo = (number: string) =>
      meta
        .to(number)
        .filter((s) => s.body.type === 'text' && s.answered === 200)
        .map((s) => s.body.text.body as string);

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      const config = testConfig({
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
        secretKey: SECRET_KEY,
        whatsappAppSecret: APP_SECRET,
        whatsappVerifyToken: VERIFY_TOKEN,
        whatsappApiBase: meta.base,
        slackSigningSecret: SLACK_SECRET,
        slackApiBase: slack.base,
        allowInsecurePlatformUrls: true,
      });
      app = buildApp(database, { config }).app;
      const made = await createOrgWithKey(database);
      key = made.secret;
      orgId = made.org.id;
      const id = newId('chi');
      await database.db.transaction((tx) =>
        chatAdminUnits['chat.add'](tx as never, {
          id,
          org: orgId,
          platform: 'whatsapp',
          externalId: phoneNumberId,
          credentialsSealed: sealSecret(`EAAG-test-token-${phoneNumberId}`, SECRET_KEY, id),
          actor: 'test',
        }),
      );
      for (const [person, role] of [
        [owner, 'csm'],
        [other, 'csm'],
        [manager, 'manager'],
        [later, 'csm'],
      ] as const) {
        expect(
          (await post('/api/csms', { email: person.email, name: person.name, role, phone: `+${person.number}`, channels: ['whatsapp'] }))
            .status,
        ).toBe(201);
      }
      // Zoe gets a copy on Slack and one on WhatsApp.
      const slackId = newId('chi');
      await database.db.transaction((tx) =>
        chatAdminUnits['chat.add'](tx as never, {
          id: slackId,
          org: orgId,
          platform: 'slack',
          externalId: team,
          credentialsSealed: sealSecret(`xoxb-test-${team}`, SECRET_KEY, slackId),
          actor: 'test',
        }),
      );
      expect(
        (
          await post('/api/csms', {
            email: both.email,
            name: both.name,
            phone: `+${both.number}`,
            slack_user_id: both.user,
            channels: ['slack', 'whatsapp'],
          })
        ).status,
      ).toBe(201);
      await openWindow(owner.email);
      await openWindow(both.email);
    });
    afterAll(async () => {
      meta.stop();
      slack.stop();
      await database?.dispose();
    });

    test('the GET handshake: the right token echoes the challenge as text/plain; a wrong token or mode is 403; a missing parameter 400', async () => {
      const request = readFileSync(new URL('whatsapp-verify-request.txt', FIXTURES), 'utf8');
      const target = /^GET (\S+) HTTP/.exec(request)![1]!;
      const ok = await call(app, 'GET', target);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toStartWith('text/plain');
      expect(ok.text).toBe('1158201444');
      expect((await call(app, 'GET', target.replace('example-verify-token-123', 'example-verify-token-124'))).status).toBe(403);
      const wrongMode = await call(app, 'GET', target.replace('hub.mode=subscribe', 'hub.mode=unsubscribe'));
      expect(wrongMode.status).toBe(403);
      expect(wrongMode.body).toMatchObject({ success: false, code: 'forbidden' });
      const missing = await call(app, 'GET', `${PATH}?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}`);
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({
        code: 'validation_failed',
        error: 'Invalid field "hub.challenge": the query parameter is required',
      });
    });

    test('the fixtures with their published signatures are acknowledged and stored once', async () => {
      for (const entry of SIGNATURES) {
        const raw = readFileSync(new URL(entry.fixture, FIXTURES), 'utf8');
        expect((await webhook(raw, { 'content-type': 'application/json', ...entry.headers })).status).toBe(200);
        expect((await webhook(raw, { 'content-type': 'application/json', ...entry.headers })).status).toBe(200);
        const id =
          JSON.parse(raw).entry[0].changes[0].value.messages?.[0]?.id ??
          `${JSON.parse(raw).entry[0].changes[0].value.statuses[0].id}:delivered`;
        const rows = await queryText<{ n: number }>(
          database.db,
          `select count(*)::int as n from chat_inbound_events where platform = 'whatsapp' and dedupe_key like $1`,
          [`%:${id}`],
        );
        expect(rows[0]!.n).toBe(1);
      }
    });

    test('a bad, missing or malformed signature is 401 and stores nothing', async () => {
      const message = text(owner.number, 'unsigned');
      const body = delivery(phoneNumberId, { messages: [message] });
      for (const headers of [
        sign(body, 'wrong-secret'),
        { 'content-type': 'application/json' },
        { 'x-hub-signature-256': 'sha256=zz' },
        { 'x-hub-signature-256': `sha1=${'0'.repeat(40)}` },
      ] as Record<string, string>[]) {
        const res = await webhook(body, headers);
        expect(res.status).toBe(401);
        expect(res.body.code).toBe('unauthorized');
        expect(res.text).not.toContain(APP_SECRET);
      }
      expect(
        await queryText(database.db, `select 1 from chat_inbound_events where dedupe_key = $1`, [`message:${message.id}`]),
      ).toHaveLength(0);
    });

    test('a signed body that is not JSON is 400', async () => {
      const garbage = '{"object": whatsapp';
      const bad = await webhook(garbage);
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('malformed_json');
    });

    test('a signed delivery with NUL characters and lone surrogates is stored without them, once', async () => {
      const id = `wamid.NUL${newId('org').slice(4)}`;
      const body = delivery(phoneNumberId, {
        messages: [{ ...text(owner.number, 'x'), id: `${id}\u0000`, text: { body: 'a\u0000b \ud800' }, 'k\u0000': 1 }],
      });
      expect((await webhook(body)).status).toBe(200);
      expect((await webhook(body)).status).toBe(200);
      const rows = await queryText<{ text: string }>(
        database.db,
        `select body->'message'->'text'->>'body' as text from chat_inbound_events where dedupe_key = $1`,
        [`message:${id}`],
      );
      expect(rows).toEqual([{ text: 'ab \ufffd' }]);
    });

    test('an approval inside the window: reply buttons, 429 then delivered once; the copy keeps the wamid', async () => {
      meta.script([{ status: 429, code: 130429, headers: { 'retry-after': '1' } }]);
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const sends = meta.to(owner.number).filter((s) => JSON.stringify(s.body).includes(actionId));
      expect(sends.map((s) => s.answered)).toEqual([429, 200]);
      const { send, ids } = approvalOf(actionId);
      expect(send.phoneNumberId).toBe(phoneNumberId);
      expect(send.token).toBe(`EAAG-test-token-${phoneNumberId}`);
      expect(send.body.type).toBe('interactive');
      const buttons = send.body.interactive.action.buttons;
      expect(buttons).toHaveLength(3);
      expect(buttons.every((b: any) => b.reply.title.length <= 20)).toBe(true);
      expect(send.body.interactive.body.text.length).toBeLessThanOrEqual(1024);
      expect(ids[0]).toMatch(new RegExp(`^approve:${actionId}:[0-9a-f]{32}$`));
      const detail = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(detail.status).toBe('pending_approval');
      expect(detail.notifications[0]).toMatchObject({
        platform: 'whatsapp',
        status: 'sent',
        target: `+${owner.number}`,
        attempts: 2,
        platform_message_id: send.wamid,
      });
    });

    test("a long proposal is cut to Meta's limits: an interactive body of at most 1,024 characters, template parameters of 200", async () => {
      const goals = Array.from({ length: 20 }, (_, i) => `Goal ${i} 😀 ${'x'.repeat(480)}`);
      const inWindow = await propose(await customerOf(owner.email), 'success_plan', { goals });
      const outside = await propose(await customerOf(later.email), 'success_plan', { goals });
      await drain();
      const interactive = approvalOf(inWindow).send;
      expect(interactive.body.type).toBe('interactive');
      expect([...interactive.body.interactive.body.text].length).toBe(1024);
      expect(interactive.body.interactive.body.text).toEndWith('…');
      const template = approvalOf(outside).send;
      expect(template.body.type).toBe('template');
      const proposal = template.body.template.components[0].parameters[3].text as string;
      expect([...proposal].length).toBe(200);
      expect(proposal).not.toMatch(/[\n\t]/);
    });

    test('a permanent error (400, code 100) kills the send at once: the copy is failed and the action waits in the inbox', async () => {
      meta.script([{ status: 400, code: 100 }]);
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const detail = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(detail.status).toBe('pending_approval');
      expect(detail.notifications[0]).toMatchObject({ status: 'failed', attempts: 1 });
      expect(detail.notifications[0].last_error).toContain('error 100');
      expect(detail.notifications[0].last_error).not.toContain('EAAG');
      expect(meta.to(owner.number).filter((s) => JSON.stringify(s.body).includes(actionId))).toHaveLength(1);
    });

    test("deliveries are counted on the installation's budget, not the caller's address", async () => {
      const config = testConfig({
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
        secretKey: SECRET_KEY,
        whatsappAppSecret: APP_SECRET,
        webhookLimitPerMinute: 1,
        anonLimitPerMinute: 1,
      });
      const limited = buildApp(database, { config }).app;
      const send = () => {
        const body = delivery(phoneNumberId, { statuses: [{ id: wamid(), status: 'sent', timestamp: nowSeconds() }] });
        return call(limited, 'POST', PATH, { rawBody: body, headers: sign(body) });
      };
      await awayFromMinuteBoundary(2_000);
      expect((await send()).status).toBe(200);
      const refused = await send();
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('rate_limited');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(refused.body.error).toContain('installation');
    });

    test('a signed button reply approves once: its redelivery does nothing more, and one confirmation goes back', async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { ids, wamid: context } = approvalOf(actionId);
      const body = delivery(phoneNumberId, { messages: [buttonReply(owner.number, ids[0]!, context)] });
      expect((await webhook(body)).status).toBe(200);
      // Stored with its job before anything is decided: an acknowledged event survives a crash.
      const [stored] = await queryText<{ outcome: string; queued: number }>(
        database.db,
        `select e.outcome, (select count(*)::int from jobs j where j.kind = 'whatsapp.inbound' and j.dedupe_key = e.id) as queued from chat_inbound_events e where e.org_id = $1 and e.body->'message'->'interactive'->'button_reply'->>'id' = $2`,
        [orgId, ids[0]],
      );
      expect(stored).toEqual({ outcome: 'received', queued: 1 });
      expect((await webhook(body)).status).toBe(200);
      await drain();
      expect((await webhook(body)).status).toBe(200);
      await drain();
      const detail = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(detail.status).toBe('approved');
      expect(detail.decided_by).toMatchObject({ kind: 'csm', name: owner.name, platform: 'whatsapp' });
      expect(detail.events.filter((e: any) => e.kind === 'approved')).toHaveLength(1);
      const confirmations = textsTo(owner.number).filter((t) => t.includes(actionId));
      expect(confirmations).toHaveLength(1);
      expect(confirmations[0]).toContain(`Approved by ${owner.name}`);
      expect(detail.notifications[0].status).toBe('updated');
    });

    test("a non-owner's button and a plain CSM approving a 20 % discount: nothing changes, each is told why privately; a manager may", async () => {
      const discountId = await propose(await customerOf(owner.email), 'discount_offer', { percent: 20, months: 3 });
      await drain();
      const { ids, wamid: context } = approvalOf(discountId);
      await deliver({ messages: [buttonReply(owner.number, ids[0]!, context), quickReply(other.number, ids[0]!, context)] });
      await drain();
      expect((await get(`/api/agent-actions/${discountId}`)).body.data.status).toBe('pending_approval');
      expect(textsTo(owner.number).some((t) => t.includes('above 15%'))).toBe(true);
      expect(textsTo(other.number).some((t) => t.includes("Only the customer's CSM or a manager"))).toBe(true);
      await deliver({ messages: [buttonReply(manager.number, ids[0]!, context)] });
      await drain();
      expect((await get(`/api/agent-actions/${discountId}`)).body.data.status).toBe('approved');
    });

    test("a number that is no CSM's and a stale nonce change nothing, and are told so", async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { ids, wamid: context } = approvalOf(actionId);
      const stranger = randomNumber();
      await deliver({
        messages: [buttonReply(stranger, ids[0]!, context), buttonReply(manager.number, `approve:${actionId}:${'0'.repeat(32)}`, context)],
      });
      await drain();
      expect(textsTo(stranger).some((t) => t.includes('only CSMs of this organisation'))).toBe(true);
      expect(textsTo(manager.number).some((t) => t.includes('does not belong'))).toBe(true);
      expect((await get(`/api/agent-actions/${actionId}`)).body.data.status).toBe('pending_approval');
      const outcomes = await queryText<{ outcome: string }>(
        database.db,
        `select outcome from chat_inbound_events where org_id = $1 and body->'message'->'interactive'->'button_reply'->>'id' like $2`,
        [orgId, `approve:${actionId}:%`],
      );
      expect(outcomes.map((o) => o.outcome)).toEqual(['denied', 'denied']);
    });

    test('a text replying to an approval message: "reject" rejects it; any other reply is a note on its customer', async () => {
      const customerId = await customerOf(owner.email);
      const actionId = await propose(customerId);
      await drain();
      const { wamid: context } = approvalOf(actionId);
      await deliver({ messages: [text(owner.number, 'They renewed their budget last week', context)] });
      await drain();
      expect((await get(`/api/agent-actions/${actionId}`)).body.data.status).toBe('pending_approval');
      await deliver({ messages: [text(owner.number, 'Reject', context)] });
      await drain();
      const detail = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(detail.status).toBe('rejected');
      expect(detail.decided_by).toMatchObject({ platform: 'whatsapp', name: owner.name });
      const notes = await queryText<{ body: string; author: string }>(
        database.db,
        'select body, author from customer_notes where org_id = $1 and customer_id = $2',
        [orgId, customerId],
      );
      expect(notes).toEqual([{ body: 'They renewed their budget last week', author: `csm:${owner.email}` }]);
      expect(textsTo(owner.number).filter((t) => t.includes(actionId) && t.startsWith('Rejected'))).toHaveLength(1);
    });

    test("a text naming one of the CSM's customers is a note on it; naming none or two, a question back", async () => {
      const suffix = newId('cus').slice(4, 10);
      const one = await customerOf(owner.email, `Globex ${suffix}`);
      await customerOf(owner.email, `Initech ${suffix}`);
      await deliver({ messages: [text(owner.number, `Spoke with Globex ${suffix}'s VP Ops, they're evaluating a competitor.`)] });
      await deliver({ messages: [text(owner.number, 'Nobody in particular')] });
      await deliver({ messages: [text(owner.number, `Globex ${suffix} and Initech ${suffix} merge`)] });
      await drain();
      const notes = await queryText<{ body: string }>(
        database.db,
        'select body from customer_notes where org_id = $1 and customer_id = $2',
        [orgId, one],
      );
      expect(notes.map((n) => n.body)).toEqual([`Spoke with Globex ${suffix}'s VP Ops, they're evaluating a competitor.`]);
      const texts = textsTo(owner.number);
      expect(texts).toContain(`Noted on Globex ${suffix}.`);
      expect(texts.some((t) => t.startsWith('Which customer is this about? Name one'))).toBe(true);
      expect(texts.some((t) => t.includes(`Globex ${suffix}, Initech ${suffix}`) && t.startsWith('Which customer'))).toBe(true);
    });

    test('statuses are recorded on the copy and never go back', async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { wamid: id } = approvalOf(actionId);
      const status = (name: string, ts: number) => ({
        id,
        status: name,
        timestamp: String(ts),
        recipient_id: owner.number,
        conversation: { id: 'c0ffee', origin: { type: 'utility' } },
        pricing: { billable: true, pricing_model: 'PMP', category: 'utility' },
      });
      const t0 = Math.floor(Date.now() / 1000) - 10;
      await deliver({ statuses: [status('delivered', t0 + 1), status('read', t0 + 2)] });
      await deliver({ statuses: [status('sent', t0)] });
      await drain();
      const [copy] = (await get(`/api/agent-actions/${actionId}`)).body.data.notifications;
      expect(copy).toMatchObject({ platform_status: 'read', platform_status_at: new Date((t0 + 2) * 1000).toISOString() });
    });

    test('a delivery of 5,000 statuses: stored as one event with one job, not 5,000; the copy moves to the furthest status once; a redelivery adds nothing', async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { wamid: id } = approvalOf(actionId);
      const t0 = Math.floor(Date.now() / 1000) - 100;
      const others = Array.from({ length: 4_997 }, (_, i) => ({
        id: `wamid.BULK${newId('org').slice(4, 12)}${i}`,
        status: 'delivered',
        timestamp: String(t0),
        recipient_id: '15551234567',
      }));
      // The copy's own statuses straddle parts, the furthest first.
      const mine = (name: string, ts: number) => ({ id, status: name, timestamp: String(ts), recipient_id: owner.number });
      const statuses = [
        mine('read', t0 + 2),
        ...others.slice(0, 2_000),
        mine('sent', t0),
        ...others.slice(2_000),
        mine('delivered', t0 + 1),
      ];
      const body = delivery(phoneNumberId, { statuses });
      const jobsOf = async (kind: string) =>
        (
          await queryText<{ n: number }>(database.db, `select count(*)::int as n from jobs where org_id = $1 and kind = $2`, [orgId, kind])
        )[0]!.n;
      const [batchesBefore, inboundBefore] = [await jobsOf('whatsapp.batch'), await jobsOf('whatsapp.inbound')];
      expect((await webhook(body)).status).toBe(200);
      expect((await jobsOf('whatsapp.batch')) - batchesBefore).toBe(1);
      expect((await jobsOf('whatsapp.inbound')) - inboundBefore).toBe(0);
      const events = await queryText<{ raw: string; body: unknown }>(
        database.db,
        `select p.raw, e.body from chat_inbound_events e join chat_inbound_events p on p.dedupe_key = e.dedupe_key || ':piece:0' where e.org_id = $1 and e.type = 'delivery' and e.outcome = 'received'`,
        [orgId],
      );
      expect(events).toEqual([{ raw: body, body: { phone_number_id: phoneNumberId, items: 5_000, pieces: 1, done: 0 } }]);
      await drainJobs(database.db, [whatsappBatchJob], { clock: () => Date.now() + 3 * 3600_000, settings });
      const [copy] = (await get(`/api/agent-actions/${actionId}`)).body.data.notifications;
      expect(copy).toMatchObject({ platform_status: 'read', platform_status_at: new Date((t0 + 2) * 1000).toISOString() });
      const stored = async () =>
        (
          await queryText<{ n: number }>(
            database.db,
            `select count(*)::int as n from chat_inbound_events where org_id = $1 and type = 'status' and dedupe_key like 'status:wamid.BULK%'`,
            [orgId],
          )
        )[0]!.n;
      expect(await stored()).toBe(4_997);
      // Settled; its text is not kept once every item is a row of its own.
      const settled = await queryText<{ outcome: string; done: number; raw: string | null }>(
        database.db,
        `select e.outcome, (e.body->>'done')::int as done, p.raw from chat_inbound_events e join chat_inbound_events p on p.dedupe_key = e.dedupe_key || ':piece:0' where e.org_id = $1 and e.type = 'delivery' and e.body->>'items' = '5000'`,
        [orgId],
      );
      expect(settled).toEqual([{ outcome: 'processed', done: 5_000, raw: null }]);
      expect((await webhook(body)).status).toBe(200);
      expect((await jobsOf('whatsapp.batch')) - batchesBefore).toBe(1);
      expect(await stored()).toBe(4_997);
    });

    test('a large delivery whose job died part-way: run again, it goes on from its progress, and every status is acted on once', async () => {
      const statuses = Array.from({ length: 2_500 }, (_, i) => ({
        id: `wamid.HALF${newId('org').slice(4, 12)}${i}`,
        status: 'sent',
        timestamp: nowSeconds(),
        recipient_id: '15551234567',
      }));
      const body = delivery(phoneNumberId, { statuses });
      expect((await webhook(body)).status).toBe(200);
      const [event] = await queryText<{ id: string }>(
        database.db,
        `select e.id from chat_inbound_events e join chat_inbound_events p on p.dedupe_key = e.dedupe_key || ':piece:0' where e.org_id = $1 and e.type = 'delivery' and p.raw = $2`,
        [orgId, body],
      );
      const parts: number[] = [];
      await expect(
        runHandler(
          database.db,
          whatsappBatchJob,
          { eventId: event!.id, partWeight: 400 },
          { orgId },
          { failAfter: 4, settings, seen: (unit, args) => unit === 'part' && parts.push((args as { from: number }).from) },
        ),
      ).rejects.toThrow('the worker died');
      // load and the text's one piece, then two parts committed before the worker died.
      expect(parts).toEqual([0, 400]);
      const progress = async () =>
        (
          await queryText<{ done: number; outcome: string }>(
            database.db,
            `select (body->>'done')::int as done, outcome from chat_inbound_events where id = $1`,
            [event!.id],
          )
        )[0];
      expect(await progress()).toEqual({ done: 800, outcome: 'received' });
      parts.length = 0;
      await runHandler(
        database.db,
        whatsappBatchJob,
        { eventId: event!.id, partWeight: 400 },
        { orgId },
        { settings, seen: (unit, args) => unit === 'part' && parts.push((args as { from: number }).from) },
      );
      expect(parts).toEqual([800, 1_200, 1_600, 2_000, 2_400]);
      expect(await progress()).toEqual({ done: 2_500, outcome: 'processed' });
      // The job queued by the webhook finds the event settled.
      await drainJobs(database.db, [whatsappBatchJob], { clock: () => Date.now() + 3 * 3600_000, settings });
      const [row] = await queryText<{ n: number; distinct: number }>(
        database.db,
        `select count(*)::int as n, count(distinct dedupe_key)::int as distinct from chat_inbound_events where org_id = $1 and type = 'status' and dedupe_key like 'status:wamid.HALF%'`,
        [orgId],
      );
      expect(row).toEqual({ n: 2_500, distinct: 2_500 });
    });

    test('a delivery of 60 messages in parts: each acted on once (a note per message), as a small delivery would', async () => {
      const name = `Initech ${newId('cus').slice(4, 10)}`;
      const customerId = await customerOf(owner.email, name);
      const messages = Array.from({ length: 60 }, (_, i) => text(owner.number, `${name} bulk note ${i}`));
      const body = delivery(phoneNumberId, { messages });
      expect((await webhook(body)).status).toBe(200);
      expect((await webhook(body)).status).toBe(200);
      await drainJobs(database.db, [whatsappBatchJob, chatSendJob], { clock: () => Date.now() + 3 * 3600_000, settings });
      const notes = (await get(`/api/customers/${customerId}/notes?limit=200`)).body.data
        .map((n: { body: string }) => n.body)
        .filter((b: string) => b.includes('bulk note'));
      expect(notes.sort()).toEqual(messages.map((m) => m.text.body).sort());
    });

    test('outside the window the approval goes as the template, and its quick reply decides like a button', async () => {
      const closedId = await propose(await customerOf(later.email));
      await drain();
      const closed = approvalOf(closedId);
      expect(closed.send.body.type).toBe('template');
      expect(closed.send.body.template.name).toBe('revintel_approval');
      const body = closed.send.body.template.components.find((c: any) => c.type === 'body');
      expect(body.parameters).toHaveLength(4);
      expect(body.parameters[0].text).toStartWith('Acme');
      expect(body.parameters[3].text).toBe('Check in (call)');
      expect(closed.ids.map((p) => p.split(':')[0])).toEqual(['approve', 'reject', 'snooze']);
      expect(
        meta
          .to(later.number)
          .filter((s) => JSON.stringify(s.body).includes(closedId))
          .map((s) => s.body.type),
      ).toEqual(['template']);
      await deliver({ messages: [quickReply(later.number, closed.ids[2]!, closed.wamid)] });
      await drain();
      expect((await get(`/api/agent-actions/${closedId}`)).body.data.status).toBe('snoozed');
    });

    test('a 131047 inside the window: the template is sent instead, once', async () => {
      meta.script([{ status: 400, code: 131047 }]);
      const staleId = await propose(await customerOf(owner.email));
      await drain();
      const tries = meta.to(owner.number).filter((s) => JSON.stringify(s.body).includes(staleId));
      expect(tries.map((s) => [s.body.type, s.answered])).toEqual([
        ['interactive', 400],
        ['template', 200],
      ]);
      const detail = (await get(`/api/agent-actions/${staleId}`)).body.data;
      expect(detail.notifications[0]).toMatchObject({ status: 'sent', platform_message_id: tries[1]!.wamid });
    });

    test('a decision over the API: a follow-up text inside the window; outside it the copy records window_closed', async () => {
      const openId = await propose(await customerOf(owner.email));
      const closedId = await propose(await customerOf(later.email));
      await drain();
      await openWindow(later.email, "interval '25 hours'");
      expect((await post(`/api/agent-actions/${openId}/approve`, {})).status).toBe(200);
      expect((await post(`/api/agent-actions/${closedId}/reject`, {})).status).toBe(200);
      await drain();
      const followUps = textsTo(owner.number).filter((t) => t.includes(openId));
      expect(followUps).toHaveLength(1);
      expect(followUps[0]).toStartWith('Approved by API key');
      expect((await get(`/api/agent-actions/${openId}`)).body.data.notifications[0].status).toBe('updated');
      expect(textsTo(later.number).filter((t) => t.includes(closedId))).toHaveLength(0);
      expect((await get(`/api/agent-actions/${closedId}`)).body.data.notifications[0].status).toBe('window_closed');
    });

    test('Meta reports 131047 after accepting the buttons: the approval goes again as the template, once', async () => {
      const actionId = await propose(await customerOf(owner.email));
      await drain();
      const { wamid: id } = approvalOf(actionId);
      const failed = {
        id,
        status: 'failed',
        timestamp: nowSeconds(),
        recipient_id: owner.number,
        errors: [{ code: 131047, title: 'Re-engagement message' }],
      };
      await deliver({ statuses: [failed] });
      await drain();
      await deliver({ statuses: [{ ...failed, status: 'failed', timestamp: String(Number(nowSeconds()) + 1) }] });
      await drain();
      const sends = meta.to(owner.number).filter((s) => JSON.stringify(s.body).includes(`:${actionId}:`));
      expect(sends.map((s) => s.body.type)).toEqual(['interactive', 'template']);
      const [copy] = (await get(`/api/agent-actions/${actionId}`)).body.data.notifications;
      expect(copy).toMatchObject({ status: 'sent', platform_message_id: sends[1]!.wamid, platform_status: null });
    });

    test('one action on Slack and WhatsApp: a Slack approve and a WhatsApp reject sent at once give one outcome, and both copies show it', async () => {
      const actionId = await propose(await customerOf(both.email));
      await drain();
      const detail = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(detail.notifications.map((n: any) => [n.platform, n.status]).sort()).toEqual([
        ['slack', 'sent'],
        ['whatsapp', 'sent'],
      ]);
      const posted = slack.callsOf('chat.postMessage').find((c) => JSON.stringify(c.body.blocks ?? []).includes(actionId))!;
      const value = posted.body.blocks.find((b: any) => b.type === 'actions').elements[0].value as string;
      const payload = {
        type: 'block_actions',
        user: { id: both.user, team_id: team },
        trigger_id: `trigger-${actionId}`,
        team: { id: team },
        container: { type: 'message', channel_id: 'D0DM' },
        actions: [{ type: 'button', action_id: BUTTONS.approve, value, action_ts: '1767605490.118842' }],
      };
      const clickBody = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
      const at = Math.floor(Date.now() / 1000);
      const clickHeaders = {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': String(at),
        'x-slack-signature': `v0=${createHmac('sha256', SLACK_SECRET).update(`v0:${at}:${clickBody}`).digest('hex')}`,
      };
      const { wamid: context } = approvalOf(actionId);
      const [clicked, replied] = await Promise.all([
        call(app, 'POST', '/api/webhooks/team-chat', { rawBody: clickBody, headers: clickHeaders }),
        webhook(delivery(phoneNumberId, { messages: [text(both.number, 'reject', context)] })),
      ]);
      expect([clicked.status, replied.status]).toEqual([200, 200]);
      await drain();
      const decided = (await get(`/api/agent-actions/${actionId}`)).body.data;
      expect(decided.status).toBe('approved');
      expect(decided.events.filter((e: any) => ['approved', 'rejected'].includes(e.kind))).toHaveLength(1);
      // The WhatsApp reply lost: Zoe is told who decided first; the WhatsApp copy shows the approval.
      const texts = textsTo(both.number);
      expect(texts.some((t) => t.includes('already approved by Zoe'))).toBe(true);
      expect(texts.filter((t) => t.startsWith(`Approved by Zoe`) && t.includes(actionId))).toHaveLength(1);
      expect(slack.callsOf('chat.update').filter((c) => JSON.stringify(c.body.blocks).includes(actionId))).toHaveLength(1);
      expect(decided.notifications.map((n: any) => n.status)).toEqual(['updated', 'updated']);
    });
  });
}
