// The ticket pipeline in-process on each backend: the webhook's answers (and that nothing is stored
// when it refuses), every platform fixture end to end with its own signature, processing by the
// worker's units (customer linking, intelligence, risk inputs), re-deliveries and out-of-order
// events, retries and the dead letter, claims shared between workers, the import, and organisation
// isolation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { queryText } from '../../src/db/client.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { workerUnits } from '../../src/jobs/worker-units.ts';
import { replayEvents } from '../../src/modules/tickets/queue/service.ts';
import { MAX_ATTEMPTS } from '../../src/modules/tickets/queue/retry.ts';
import { writeCustomers } from '../../src/modules/customers/service.ts';
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
import { drainQueue, hubSignature, makeConnector, TEST_SECRET_KEY } from '../helpers/tickets.ts';
import type { Platform } from '../../src/modules/tickets/platforms.ts';
import { extractTickets } from '../../src/modules/tickets/adapters/index.ts';
import { INTELLIGENCE_METHOD } from '../../src/modules/tickets/intelligence.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

const fixtureText = (name: string) => readFileSync(new URL(`../fixtures/platforms/${name}`, import.meta.url), 'utf8');
const SIGNED = JSON.parse(fixtureText('signatures.json')) as { fixture: string; secret: string; headers: Record<string, string> }[];

/** The clock the platforms' recorded signatures were made at (2026-01-05T09:15:01Z). */
const FIXTURE_CLOCK = 1_767_604_501_000;

/** The fixtures signed in signatures.json that are ticket webhooks, and their platforms. */
const PLATFORM_OF: Record<string, Platform> = {
  'generic-ticket.json': 'generic',
  'github-issue.json': 'github',
  'jira-issue.json': 'jira',
  'zendesk-ticket.json': 'zendesk',
  'zendesk-event-ticket-created.json': 'zendesk',
  'intercom-conversation.json': 'intercom',
  'intercom-ticket.json': 'intercom',
  'hubspot-ticket.json': 'hubspot',
  'front-conversation.json': 'front',
  'helpscout-conversation.json': 'helpscout',
  'linear-issue.json': 'linear',
};

for (const backend of BACKENDS) {
  describe(`ticket pipeline (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let orgId: string;
    let key: string;
    let otherKey: string;
    let otherOrgId: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database, {
        config: testConfig({
          databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
          secretKey: TEST_SECRET_KEY,
          publicUrl: 'https://rev.example.com',
        }),
        clock: () => FIXTURE_CLOCK,
      }).app;
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      orgId = made.org.id;
      key = made.secret;
      const other = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      otherOrgId = other.org.id;
      otherKey = other.secret;
    });
    afterAll(() => database.dispose());

    const eventRows = async (connectorId: string) =>
      queryText<{ id: string; status: string; body: string; attempts: number; last_error: string | null; ticket_ids: string[] | null }>(
        database.db,
        `select id, status, body, attempts, last_error, ticket_ids from ticket_events where connector_id = $1 order by received_at, id`,
        [connectorId],
      );
    const post = (connectorId: string | null, body: string, headers: Record<string, string> = {}) =>
      call(app, 'POST', connectorId === null ? '/api/webhooks/tickets' : `/api/webhooks/tickets?connectorId=${connectorId}`, {
        rawBody: body,
        headers: { 'content-type': 'application/json', ...headers },
      });

    /** After processing, the API shows each ticket of the fixture exactly as its platform's adapter
     * reads the body (the adapters' own tests assert those readings field by field). */
    async function expectStoredAsMapped(fixture: string, platform: Platform, connectorId: string, headers: Record<string, string>) {
      await drainQueue(database);
      const events = await eventRows(connectorId);
      expect(events.map((e) => ({ fixture, status: e.status, error: e.last_error }))).toEqual([{ fixture, status: 'done', error: null }]);
      const extracted = extractTickets(platform, { body: JSON.parse(fixtureText(fixture)), headers });
      if (!extracted.ok) throw new Error(`${fixture}: ${extracted.reason}`);
      const stored = (await call(app, 'GET', `/api/tickets?connector_id=${connectorId}`, { key })).body.data as Record<string, unknown>[];
      const seen = stored.map((t) => ({
        externalId: t.external_id,
        subject: t.subject,
        description: t.description,
        status: t.external_status,
        statusNormalised: t.status,
        priority: t.external_priority,
        priorityNormalised: t.priority,
        requesterEmail: t.requester_email,
        createdAt: t.source_created_at,
        updatedAt: t.source_updated_at,
      }));
      const byId = (a: { externalId: unknown }, b: { externalId: unknown }) => String(a.externalId).localeCompare(String(b.externalId));
      expect({ fixture, tickets: seen.sort(byId) }).toEqual({ fixture, tickets: [...extracted.tickets].sort(byId) as never });
    }

    test('a signed delivery is stored and answered 200 at once, before any processing', async () => {
      const connector = await makeConnector(database, orgId, { name: 'Support desk', secret: 'generic-secret-1' });
      const body = fixtureText('generic-ticket.json');
      const res = await post(connector.id, body, { 'x-hub-signature-256': hubSignature('generic-secret-1', body) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, status: 'received', connector: 'Support desk', event_id: expect.stringMatching(/^evt_/) });
      expect(res.headers.get('x-ratelimit-limit')).toBe('60000');
      expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(59_999);
      // Nothing has processed it: the event waits, byte for byte, and there is no ticket yet.
      const [event] = await eventRows(connector.id);
      expect(event).toMatchObject({ id: res.body.event_id, status: 'pending', body, attempts: 0 });
      expect((await call(app, 'GET', `/api/tickets?connector_id=${connector.id}`, { key })).body.data).toEqual([]);

      await drainQueue(database); // (the database may hold other tests' events too)
      const list = await call(app, 'GET', `/api/tickets?connector_id=${connector.id}`, { key });
      expect(list.body.data).toHaveLength(1);
      const ticket = list.body.data[0];
      expect(ticket).toMatchObject({
        external_id: 'TCK-10042',
        subject: 'Export to CSV times out for large accounts',
        status: 'open',
        external_status: 'open',
        priority: 'high',
        external_priority: 'high',
        requester_email: 'carol.customer@acme.example.com',
        source_created_at: '2026-01-05T09:15:00.000Z',
        connector: { id: connector.id, name: 'Support desk', platform: 'generic' },
      });
      expect(ticket.intelligence.method).toBe(INTELLIGENCE_METHOD);
      expect(typeof ticket.intelligence.sentiment).toBe('number');
      const [done] = await eventRows(connector.id);
      expect(done).toMatchObject({ status: 'done', attempts: 1, ticket_ids: [ticket.id] });
      expect((await call(app, 'GET', `/api/tickets/${ticket.id}`, { key })).body.data).toEqual(ticket);
    });

    test('refusals: no connectorId 400, unknown 404, too large 413, bad or missing signature 401, not JSON 400 — nothing stored', async () => {
      const connector = await makeConnector(database, orgId, { secret: 'refusal-secret' });
      const body = JSON.stringify({ ticket: { id: 'R-1', subject: 'Hello' } });
      const noId = await post(null, body);
      expect(noId.status).toBe(400);
      expect(noId.body).toMatchObject({ success: false, data: null, error: 'Query parameter "connectorId" is required' });
      expect(noId.headers.get('x-ratelimit-limit')).not.toBeNull();

      const unknown = await post('con_doesnotexist0000000000000', body);
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toBe('Connector con_doesnotexist0000000000000 not found');

      const unsigned = await post(connector.id, body);
      expect(unsigned.status).toBe(401);
      expect(unsigned.body.error).toMatch(/^Invalid webhook signature: missing signature header/);

      const forged = await post(connector.id, body, { 'x-hub-signature-256': hubSignature('wrong-secret', body) });
      expect(forged.status).toBe(401);
      expect(forged.body.error).toContain('did not match');
      expect(forged.body.error).not.toContain('refusal-secret');

      const notJson = '{"ticket": ';
      const malformed = await post(connector.id, notJson, { 'x-hub-signature-256': hubSignature('refusal-secret', notJson) });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error).toBe('Request body is not valid JSON');

      const huge = JSON.stringify({ ticket: { id: 'big', description: 'x'.repeat(5 * 1024 * 1024) } });
      const tooLarge = await post(connector.id, huge, { 'x-hub-signature-256': hubSignature('refusal-secret', huge) });
      expect(tooLarge.status).toBe(413);

      expect(await eventRows(connector.id)).toEqual([]);
    });

    /** A Linear issue event carrying `webhookTimestamp` (left out when undefined), signed as Linear signs. */
    const linearDelivery = (webhookTimestamp: unknown) => {
      const body = JSON.stringify({ action: 'create', type: 'Issue', data: { id: 'LIN-1', title: 'Hello' }, webhookTimestamp });
      return { body, headers: { 'linear-signature': createHmac('sha256', 'linear-route-secret').update(body).digest('hex') } };
    };
    const WITHOUT_A_NUMERIC_TIMESTAMP: [string, unknown][] = [
      ['missing', undefined],
      ['a string', String(FIXTURE_CLOCK)],
      ['null', null],
    ];
    for (const [what, webhookTimestamp] of WITHOUT_A_NUMERIC_TIMESTAMP) {
      test(`Linear: a signed delivery whose webhookTimestamp is ${what} is refused 401, nothing stored`, async () => {
        const connector = await makeConnector(database, orgId, { platform: 'linear', secret: 'linear-route-secret' });
        const { body, headers } = linearDelivery(webhookTimestamp);
        const res = await post(connector.id, body, headers);
        expect(res.status).toBe(401);
        expect(res.body.error).toContain('webhookTimestamp');
        expect(await eventRows(connector.id)).toEqual([]);
      });
    }

    test('Linear: a signed delivery with webhookTimestamp within 60 s is accepted', async () => {
      const connector = await makeConnector(database, orgId, { platform: 'linear', secret: 'linear-route-secret' });
      const { body, headers } = linearDelivery(FIXTURE_CLOCK - 59_000);
      expect((await post(connector.id, body, headers)).status).toBe(200);
      expect(await eventRows(connector.id)).toHaveLength(1);
    });

    test('a connector without a secret accepts unsigned deliveries; a token connector needs its bearer token', async () => {
      const open = await makeConnector(database, orgId, { platform: 'freshdesk' });
      const body = fixtureText('freshdesk-ticket.json');
      expect((await post(open.id, body)).status).toBe(200);

      const tokened = await makeConnector(database, orgId, { platform: 'gorgias', token: 'gorgias-static-token-123' });
      const gorgias = fixtureText('gorgias-ticket.json');
      expect((await post(tokened.id, gorgias)).status).toBe(401);
      expect((await post(tokened.id, gorgias, { authorization: 'Bearer wrong-token-000000000' })).status).toBe(401);
      expect((await post(tokened.id, gorgias, { authorization: 'Bearer gorgias-static-token-123' })).status).toBe(200);
      await drainQueue(database);
      const [ticket] = (await call(app, 'GET', `/api/tickets?connector_id=${tokened.id}`, { key })).body.data;
      expect(ticket.connector.platform).toBe('gorgias');
      expect(ticket.external_id).not.toBe('');
    });

    test('every signed platform fixture through the webhook with its own signature scheme', async () => {
      for (const signed of SIGNED.filter((s) => PLATFORM_OF[s.fixture])) {
        const platform = PLATFORM_OF[signed.fixture]!;
        const body = fixtureText(signed.fixture);
        // HubSpot signs the URL it called: its recorded delivery went to connector "hubspot-1".
        let connectorId: string;
        if (platform === 'hubspot') {
          connectorId = 'hubspot-1';
          await database.db.execute(sql`delete from connectors where id = 'hubspot-1'`);
          const { sealSecret } = await import('../../src/lib/secret-box.ts');
          await database.db.execute(
            sql`insert into connectors (id, org_id, name, platform, secret_sealed) values ('hubspot-1', ${orgId}, ${`HubSpot ${backend}`}, 'hubspot', ${sealSecret(signed.secret, TEST_SECRET_KEY, 'hubspot-1')})`,
          );
        } else {
          connectorId = (await makeConnector(database, orgId, { platform, secret: signed.secret })).id;
        }
        const headers = Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k.toLowerCase(), v]));
        const res = await post(connectorId, body, headers);
        expect({ fixture: signed.fixture, status: res.status, error: res.body?.error ?? null }).toEqual({
          fixture: signed.fixture,
          status: 200,
          error: null,
        });
        // One byte changed: refused.
        const tampered = await post(connectorId, body.replace('}', ' }'), headers);
        expect({ fixture: signed.fixture, status: tampered.status }).toEqual({ fixture: signed.fixture, status: 401 });
        await drainQueue(database);
        const events = await eventRows(connectorId);
        expect(events.map((e) => ({ fixture: signed.fixture, status: e.status, error: e.last_error }))).toEqual([
          { fixture: signed.fixture, status: 'done', error: null },
        ]);
        // Absent: refused too.
        const unsigned = await post(connectorId, body);
        expect({ fixture: signed.fixture, status: unsigned.status }).toEqual({ fixture: signed.fixture, status: 401 });
        await expectStoredAsMapped(signed.fixture, platform, connectorId, headers);
      }
    });

    test('the platforms that cannot sign, through a token connector: Freshdesk, Gorgias, Zoho Desk, Salesforce', async () => {
      const unsignedFixtures: [string, Platform][] = [
        ['freshdesk-ticket.json', 'freshdesk'],
        ['gorgias-ticket.json', 'gorgias'],
        ['zohodesk-ticket.json', 'zoho'],
        ['salesforce-case.json', 'salesforce'],
      ];
      for (const [fixture, platform] of unsignedFixtures) {
        const connector = await makeConnector(database, orgId, { platform, token: `token-for-${platform}-0123456789` });
        const body = fixtureText(fixture);
        expect((await post(connector.id, body)).status).toBe(401);
        const res = await post(connector.id, body, { authorization: `Bearer token-for-${platform}-0123456789` });
        expect({ fixture, status: res.status }).toEqual({ fixture, status: 200 });
        await expectStoredAsMapped(fixture, platform, connector.id, {});
      }
    });

    test('tickets link to the customer by requester e-mail, then by domain, and mark its risk inputs changed', async () => {
      const suffix = Math.random().toString(36).slice(2, 8);
      const [byEmail, byDomain] = await database.db.transaction(async (tx) =>
        writeCustomers(tx as never, orgId, [
          {
            index: 0,
            input: { name: 'Exact Co', currency: 'EUR', email: `Owner@exact-${suffix}.example`, domain: `other-${suffix}.example` },
          },
          { index: 1, input: { name: 'Domain Co', currency: 'EUR', domain: `domain-${suffix}.example` } },
        ] as never),
      );
      const connector = await makeConnector(database, orgId);
      const send = (id: string, email: string) =>
        post(connector.id, JSON.stringify({ ticket: { id, subject: 'Question', requester_email: email } }));
      expect((await send('L-1', `owner@exact-${suffix}.example`)).status).toBe(200);
      expect((await send('L-2', `someone@domain-${suffix}.example`)).status).toBe(200);
      expect((await send('L-3', `nobody@unknown-${suffix}.example`)).status).toBe(200);
      await drainQueue(database);
      const tickets = (await call(app, 'GET', `/api/tickets?connector_id=${connector.id}`, { key })).body.data as {
        external_id: string;
        customer_id: string | null;
      }[];
      const customerOf = Object.fromEntries(tickets.map((t) => [t.external_id, t.customer_id]));
      const ids = [byEmail, byDomain].map((outcome) => {
        if (outcome?.outcome !== 'created') throw new Error(`customer not created: ${JSON.stringify(outcome)}`);
        return outcome.id;
      });
      expect(customerOf).toEqual({ 'L-1': ids[0]!, 'L-2': ids[1]!, 'L-3': null });
      const risk = await queryText<{ customer_id: string }>(
        database.db,
        `select customer_id from risk_input_changes where org_id = $1 and customer_id = any($2::text[])`,
        [orgId, ids],
      );
      expect(risk.map((r) => r.customer_id).sort()).toEqual([...ids].sort());
      const filtered = (await call(app, 'GET', `/api/tickets?customer_id=${ids[1]}`, { key })).body.data;
      expect(filtered.map((t: { external_id: string }) => t.external_id)).toEqual(['L-2']);
    });

    test('a re-delivery with the same delivery id is stored once; an older event never overwrites a newer one', async () => {
      const connector = await makeConnector(database, orgId, { platform: 'github' });
      const body = fixtureText('github-issue.json');
      const headers = { 'x-github-event': 'issues', 'x-github-delivery': `delivery-${backend}-1` };
      const first = await post(connector.id, body, headers);
      const again = await post(connector.id, body, headers);
      expect(again.status).toBe(200);
      expect(again.body.event_id).toBe(first.body.event_id);
      expect(await eventRows(connector.id)).toHaveLength(1);

      const generic = await makeConnector(database, orgId);
      const version = (subject: string, updated: string) =>
        JSON.stringify({ ticket: { id: 'OOO-1', subject, updated_at: updated, created_at: '2026-01-01T00:00:00Z' } });
      await post(generic.id, version('newest subject', '2026-03-01T10:00:00Z'));
      await drainQueue(database);
      await post(generic.id, version('stale subject', '2026-02-01T10:00:00Z'));
      await drainQueue(database);
      const [ticket] = (await call(app, 'GET', `/api/tickets?connector_id=${generic.id}`, { key })).body.data;
      expect(ticket.subject).toBe('newest subject');
      expect(ticket.source_updated_at).toBe('2026-03-01T10:00:00.000Z');
      // A newer one does replace it, and the same version again changes nothing (not even updated_at).
      await post(generic.id, version('newer still', '2026-04-01T10:00:00Z'));
      await drainQueue(database);
      const [updated] = (await call(app, 'GET', `/api/tickets?connector_id=${generic.id}`, { key })).body.data;
      expect(updated.subject).toBe('newer still');
      await post(generic.id, version('newer still', '2026-04-01T10:00:00Z'));
      await drainQueue(database);
      const [same] = (await call(app, 'GET', `/api/tickets?connector_id=${generic.id}`, { key })).body.data;
      expect(same.updated_at).toBe(updated.updated_at);
      expect((await eventRows(generic.id)).map((e) => e.status)).toEqual(['done', 'done', 'done', 'done']);
    });

    test('a body with no ticket is dead at once with a reason; a failing event retries with back-off, then dead-letters, and replays', async () => {
      const connector = await makeConnector(database, orgId);
      const res = await post(connector.id, JSON.stringify({ hello: 'world' }));
      expect(res.status).toBe(200);
      await drainQueue(database);
      const [dead] = await eventRows(connector.id);
      expect(dead!.status).toBe('dead');
      expect(dead!.last_error).toContain('no ticket found');

      // A transient failure: the database refuses this ticket until the trigger is dropped.
      await database.db.execute(
        sql.raw(`create or replace function test_refuse_poison() returns trigger language plpgsql as $$
          begin if new.subject = 'POISON' then raise exception 'poison refused by the test'; end if; return new; end $$`),
      );
      await database.db.execute(sql.raw(`drop trigger if exists test_refuse_poison on tickets`));
      await database.db.execute(
        sql.raw(`create trigger test_refuse_poison before insert or update on tickets for each row execute function test_refuse_poison()`),
      );
      try {
        const poison = await post(connector.id, JSON.stringify({ ticket: { id: 'P-1', subject: 'POISON' } }));
        const fine = await post(connector.id, JSON.stringify({ ticket: { id: 'P-2', subject: 'fine' } }));
        await drainQueue(database);
        const byId = async (id: string) => (await eventRows(connector.id)).find((e) => e.id === id)!;
        expect(await byId(fine.body.event_id)).toMatchObject({ status: 'done' });
        const waiting = await byId(poison.body.event_id);
        expect(waiting).toMatchObject({ status: 'pending', attempts: 1 });
        expect(waiting.last_error).toContain('poison refused by the test');
        const [{ delay }] = (await queryText<{ delay: number }>(
          database.db,
          `select extract(epoch from run_after - now())::float8 as delay from ticket_events where id = $1`,
          [poison.body.event_id],
        )) as [{ delay: number }];
        expect(delay).toBeGreaterThan(0);
        expect(delay).toBeLessThanOrEqual(2);
        for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) {
          await queryText(database.db, `update ticket_events set run_after = now() where id = $1`, [poison.body.event_id]);
          await drainQueue(database);
        }
        const given = await byId(poison.body.event_id);
        expect(given).toMatchObject({ status: 'dead', attempts: MAX_ATTEMPTS });
      } finally {
        await database.db.execute(sql.raw(`drop trigger if exists test_refuse_poison on tickets`));
      }
      const replay = await database.db.transaction((tx) => replayEvents(tx as never, { allDead: { orgId } }));
      expect(replay.replayed.length).toBeGreaterThanOrEqual(2);
      await drainQueue(database);
      const after = await eventRows(connector.id);
      expect(after.find((e) => e.body.includes('POISON'))).toMatchObject({ status: 'done', attempts: 1 });
      expect(after.find((e) => e.body.includes('hello'))).toMatchObject({ status: 'dead', attempts: 1 });
    });

    test('two workers claiming at once never take the same event; a lease taken over is not applied twice', async () => {
      const connector = await makeConnector(database, orgId);
      for (let i = 0; i < 40; i++) await post(connector.id, JSON.stringify({ ticket: { id: `W-${i}`, subject: `ticket ${i}` } }));
      const units = localRunner(database.db, workerUnits, DEFAULT_SETTINGS);
      const [{ events: a }, { events: b }] = await Promise.all([
        units.run('tickets.claim', { owner: 'worker-a', limit: 25, leaseSeconds: 60 }),
        units.run('tickets.claim', { owner: 'worker-b', limit: 25, leaseSeconds: 60 }),
      ]);
      const mine = (claimed: { id: string; connectorId: string }[]) =>
        claimed.filter((e) => e.connectorId === connector.id).map((e) => e.id);
      const overlap = mine(a).filter((id) => mine(b).includes(id));
      expect(overlap).toEqual([]);
      // Worker A stalls past its lease; C takes its events over and applies them; A's late apply is skipped.
      await queryText(database.db, `update ticket_events set lease_until = now() - interval '1 second' where lease_owner = 'worker-a'`, []);
      await drainQueue(database, 'worker-c');
      await drainQueue(database, 'worker-b-finishing');
      const late = await units.run('tickets.apply', {
        owner: 'worker-a',
        outcomes: mine(a).map((id) => ({ eventId: id, ok: true as const, tickets: [] })),
      });
      expect(late).toMatchObject({ done: 0, skipped: mine(a).length });
      await queryText(database.db, `update ticket_events set lease_until = now() - interval '1 second' where lease_owner = 'worker-b'`, []);
      await drainQueue(database, 'worker-d');
      const rows = await eventRows(connector.id);
      expect(rows.every((r) => r.status === 'done')).toBe(true);
      const tickets = (await call(app, 'GET', `/api/tickets?connector_id=${connector.id}&limit=100`, { key })).body.data;
      expect(tickets).toHaveLength(40);
    });

    test('import: 202 with per-item rejections, duplicates not stored twice, progress, then tickets', async () => {
      const items = [
        {
          id: 'IMP-1',
          subject: 'We want to cancel our subscription',
          description: 'Too expensive, switching to a competitor.',
          requester_email: 'a@imp.example',
        },
        { id: 'IMP-2', subject: 'Thanks!', description: 'Works great now, thank you.' },
        'not an object',
        { nothing: 'here' },
        { ticket: { id: 'IMP-3', subject: 'Raw platform shape' } },
      ];
      const res = await call(app, 'POST', '/api/ticket-intelligence/import', { key, body: { tickets: items } });
      expect(res.status).toBe(202);
      expect(res.body.data).toMatchObject({ received: 5, accepted: 3, duplicates: 0 });
      expect(res.body.data.rejected.map((r: { index: number }) => r.index)).toEqual([2, 3]);
      expect(res.body.data.rejected[0].error).toBe('must be a JSON object (a ticket)');
      expect(res.body.data.rejected[1].error).toContain('no ticket found');
      const batchId = res.body.data.batch_id;
      const pending = await call(app, 'GET', `/api/ticket-intelligence/import/${batchId}`, { key });
      expect(pending.body.data).toMatchObject({ status: 'processing', progress: { pending: 3, done: 0 } });

      const again = await call(app, 'POST', '/api/ticket-intelligence/import', {
        key,
        body: { tickets: [items[0], { ...(items[1] as object), id: 'IMP-4' }] },
      });
      expect(again.body.data).toMatchObject({ received: 2, accepted: 1, duplicates: 1 });

      await drainQueue(database);
      const done = await call(app, 'GET', `/api/ticket-intelligence/import/${batchId}`, { key });
      expect(done.body.data).toMatchObject({ status: 'completed', progress: { pending: 0, processing: 0, done: 3, dead: 0 } });
      const cancel = (await call(app, 'GET', `/api/tickets?churn_signal=cancellation`, { key })).body.data.find(
        (t: { external_id: string }) => t.external_id === 'IMP-1',
      );
      expect(cancel.intelligence.churn_signals).toEqual(expect.arrayContaining(['cancellation', 'competitor']));
      expect(cancel.intelligence.sentiment).toBeLessThan(0);
      const happy = (await call(app, 'GET', `/api/tickets?sentiment_below=0`, { key })).body.data.map(
        (t: { external_id: string }) => t.external_id,
      );
      expect(happy).not.toContain('IMP-2');
      expect(happy).toContain('IMP-1');

      const tooMany = await call(app, 'POST', '/api/ticket-intelligence/import', {
        key,
        body: { tickets: Array.from({ length: 1001 }, (_, i) => ({ id: `X-${i}` })) },
      });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.error).toContain('tickets');
      const unknownField = await call(app, 'POST', '/api/ticket-intelligence/import', {
        key,
        body: { tickets: [{ id: 'Y' }], extra: true },
      });
      expect(unknownField.status).toBe(400);
      expect(unknownField.body.error).toContain('extra');
      const noBody = await call(app, 'POST', '/api/ticket-intelligence/import', { key, body: {} });
      expect(noBody.status).toBe(400);
      expect(noBody.body.error).toContain('tickets');
    });

    test('organisations see only their own tickets, connectors and import batches', async () => {
      const mine = await makeConnector(database, orgId, { name: 'Mine only' });
      await post(mine.id, JSON.stringify({ ticket: { id: 'ISO-1', subject: 'private' } }));
      await drainQueue(database);
      const [ticket] = (await call(app, 'GET', `/api/tickets?connector_id=${mine.id}`, { key })).body.data;
      expect((await call(app, 'GET', `/api/tickets/${ticket.id}`, { key: otherKey })).status).toBe(404);
      expect((await call(app, 'GET', `/api/tickets/${ticket.id}`, { key: otherKey })).body.error).toBe(`Ticket ${ticket.id} not found`);
      expect((await call(app, 'GET', `/api/tickets?connector_id=${mine.id}`, { key: otherKey })).body.data).toEqual([]);
      const theirs = (await call(app, 'GET', '/api/connectors', { key: otherKey })).body.data;
      expect(theirs.map((c: { id: string }) => c.id)).not.toContain(mine.id);
      const listed = (await call(app, 'GET', '/api/connectors', { key })).body.data.find((c: { id: string }) => c.id === mine.id);
      expect(listed).toMatchObject({
        name: 'Mine only',
        webhook_url: `https://rev.example.com/api/webhooks/tickets?connectorId=${mine.id}`,
        signed: false,
      });
      expect(JSON.stringify((await call(app, 'GET', '/api/connectors', { key })).body)).not.toMatch(/sealed|token_hash|v1\./);
      const intoMine = await call(app, 'POST', '/api/ticket-intelligence/import', {
        key: otherKey,
        body: { connector_id: mine.id, tickets: [{ id: 'Z-1' }] },
      });
      expect(intoMine.status).toBe(404);
      const batch = (await call(app, 'POST', '/api/ticket-intelligence/import', { key, body: { tickets: [{ id: 'ISO-2' }] } })).body.data
        .batch_id;
      expect((await call(app, 'GET', `/api/ticket-intelligence/import/${batch}`, { key: otherKey })).status).toBe(404);
      expect(otherOrgId).not.toBe(orgId);
    });

    test('the list refuses bad filters naming the parameter', async () => {
      const bad = await call(app, 'GET', '/api/tickets?churn_signal=unhappy', { key });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toContain('churn_signal');
      const range = await call(app, 'GET', '/api/tickets?sentiment_below=2', { key });
      expect(range.status).toBe(400);
      expect(range.body.error).toContain('sentiment_below');
      const unknown = await call(app, 'GET', '/api/tickets?stauts=open', { key });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toContain('stauts');
    });
  });
}
