// Connectors over the API on each backend: create one, set and rotate its webhook secret (sealed,
// generated secrets answered once; an admin signed in to the console only), a delivery signed with
// it arrives and is listed with its status, a dead letter is replayed; bad input names its field;
// another organisation sees nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
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
import { drainQueue, hubSignature, TEST_SECRET_KEY } from '../helpers/tickets.ts';
import { consoleSession } from '../helpers/sessions.ts';

const PUBLIC_URL = 'https://rev.example.com';
const TICKET = JSON.stringify({
  ticket: { id: 'TCK-1', subject: 'Export times out', requester_email: 'carol@acme.example.com', created_at: '2026-01-05T09:15:00Z' },
});

for (const backend of BACKENDS) {
  describe(`connectors API (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let otherKey: string;
    /** An admin of `key`'s organisation, and one of the other's, signed in to the console. */
    let admin: Record<string, string>;
    let otherAdmin: Record<string, string>;
    const config = () =>
      testConfig({ databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null, secretKey: TEST_SECRET_KEY, publicUrl: PUBLIC_URL });

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database, { config: config() }).app;
      const mine = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      const theirs = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      key = mine.secret;
      otherKey = theirs.secret;
      admin = (await consoleSession(app, database, mine.org.id, 'admin', PUBLIC_URL)).headers;
      otherAdmin = (await consoleSession(app, database, theirs.org.id, 'admin', PUBLIC_URL)).headers;
    });
    afterAll(async () => {
      await database?.close();
    });

    const deliver = (url: string, body: string, secret: string) =>
      call(app, 'POST', new URL(url).pathname + new URL(url).search, {
        rawBody: body,
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': hubSignature(secret, body) },
      });

    test('create, generate a secret (answered once, sealed at rest), deliver a signed ticket and see it in the events', async () => {
      const created = await call(app, 'POST', '/api/connectors', { key, body: { name: 'Zendesk EU', platform: 'generic' } });
      expect(created.status).toBe(201);
      const connector = created.body.data;
      expect(connector).toMatchObject({
        name: 'Zendesk EU',
        platform: 'generic',
        signed: false,
        webhook_url: `https://rev.example.com/api/webhooks/tickets?connectorId=${connector.id}`,
      });

      const set = await call(app, 'POST', `/api/connectors/${connector.id}/secret`, { headers: admin });
      expect(set.status).toBe(200);
      const secret: string = set.body.data.secret;
      expect(secret).toMatch(/^whsec_[0-9A-Za-z]{40}$/);
      expect(set.body.data.connector).toMatchObject({ id: connector.id, signed: true, previous_secret_valid_until: null });
      // Sealed at rest; never in a listing.
      const [stored] = await queryText<{ secret_sealed: string }>(database.db, 'select secret_sealed from connectors where id = $1', [
        connector.id,
      ]);
      expect(stored!.secret_sealed).not.toContain(secret);
      expect((await call(app, 'GET', '/api/connectors', { key })).text).not.toContain(secret);

      expect((await deliver(connector.webhook_url, TICKET, 'not-the-secret')).status).toBe(401);
      expect((await deliver(connector.webhook_url, TICKET, secret)).status).toBe(200);
      const pending = await call(app, 'GET', `/api/ticket-events?connector_id=${connector.id}`, { key });
      expect(pending.status).toBe(200);
      expect(pending.body.data).toHaveLength(1);
      expect(pending.body.data[0]).toMatchObject({
        connector_id: connector.id,
        connector_name: 'Zendesk EU',
        source: 'webhook',
        status: 'pending',
        attempts: 0,
        ticket_ids: null,
      });
      await drainQueue(database);
      const [done] = (await call(app, 'GET', `/api/ticket-events?connector_id=${connector.id}&status=done`, { key })).body.data;
      expect(done.ticket_ids).toHaveLength(1);
      expect(done.processed_at).not.toBeNull();
    });

    test('rotating keeps the previous secret valid for the grace period; a typed secret is not answered back', async () => {
      const connector = (await call(app, 'POST', '/api/connectors', { key, body: { name: 'Rotating', platform: 'generic' } })).body.data;
      await call(app, 'POST', `/api/connectors/${connector.id}/secret`, { headers: admin, body: { secret: 'first-secret-123' } });
      const rotated = await call(app, 'POST', `/api/connectors/${connector.id}/secret`, {
        headers: admin,
        body: { secret: 'second-secret-456', grace_seconds: 3600 },
      });
      expect(rotated.status).toBe(200);
      expect(rotated.body.data.secret).toBeUndefined();
      const until = Date.parse(rotated.body.data.connector.previous_secret_valid_until);
      expect(until - Date.now()).toBeGreaterThan(3500_000);
      expect(until - Date.now()).toBeLessThan(3700_000);
      expect((await deliver(connector.webhook_url, TICKET, 'first-secret-123')).status).toBe(200);
      expect((await deliver(connector.webhook_url, TICKET.replace('TCK-1', 'TCK-2'), 'second-secret-456')).status).toBe(200);
      // No grace: the old one stops at once.
      await call(app, 'POST', `/api/connectors/${connector.id}/secret`, {
        headers: admin,
        body: { secret: 'third-secret-789', grace_seconds: 0 },
      });
      expect((await deliver(connector.webhook_url, TICKET.replace('TCK-1', 'TCK-3'), 'second-secret-456')).status).toBe(401);
    });

    test('a dead letter is replayed back to the queue; a done event is not (409); pages walk the events', async () => {
      const connector = (await call(app, 'POST', '/api/connectors', { key, body: { name: 'Dead letters', platform: 'generic' } })).body
        .data;
      expect((await deliver(connector.webhook_url, JSON.stringify({ hello: 'world' }), 'unused')).status).toBe(200);
      expect((await deliver(connector.webhook_url, TICKET.replace('TCK-1', 'TCK-9'), 'unused')).status).toBe(200);
      await drainQueue(database);
      const [dead] = (await call(app, 'GET', `/api/ticket-events?connector_id=${connector.id}&status=dead`, { key })).body.data;
      expect(dead.last_error).toContain('no ticket found');
      const replayed = await call(app, 'POST', `/api/ticket-events/${dead.id}/replay`, { key });
      expect(replayed.status).toBe(200);
      expect(replayed.body.data).toMatchObject({ id: dead.id, status: 'pending', attempts: 0, last_error: null });
      const [done] = (await call(app, 'GET', `/api/ticket-events?connector_id=${connector.id}&status=done`, { key })).body.data;
      const refused = await call(app, 'POST', `/api/ticket-events/${done.id}/replay`, { key });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toContain('is done');

      const first = await call(app, 'GET', `/api/ticket-events?connector_id=${connector.id}&limit=1`, { key });
      expect(first.body.data).toHaveLength(1);
      expect(first.body.meta.has_more).toBe(true);
      const second = await call(
        app,
        'GET',
        `/api/ticket-events?connector_id=${connector.id}&limit=1&cursor=${first.body.meta.next_cursor}`,
        { key },
      );
      expect(second.body.data).toHaveLength(1);
      expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    });

    test('a secret is set by an admin signed in to the console: an API key or a member gets 403, nothing stored', async () => {
      const connector = (await call(app, 'POST', '/api/connectors', { key, body: { name: 'People only', platform: 'generic' } })).body.data;
      const byKey = await call(app, 'POST', `/api/connectors/${connector.id}/secret`, { key, body: { secret: 'chosen-by-a-key' } });
      expect(byKey.status).toBe(403);
      expect(byKey.body.error).toContain('API key');
      const [mine] = await queryText<{ org_id: string }>(database.db, 'select org_id from connectors where id = $1', [connector.id]);
      const member = (await consoleSession(app, database, mine!.org_id, 'member', PUBLIC_URL)).headers;
      const byMember = await call(app, 'POST', `/api/connectors/${connector.id}/secret`, {
        headers: member,
        body: { secret: 'chosen-by-a-member' },
      });
      expect(byMember.status).toBe(403);
      expect(byMember.body.error).toContain('admin');
      const [row] = await queryText<{ secret_sealed: string | null }>(database.db, 'select secret_sealed from connectors where id = $1', [
        connector.id,
      ]);
      expect(row!.secret_sealed).toBeNull();
    });

    test('bad input names its field; a duplicate name is a 409', async () => {
      const platform = await call(app, 'POST', '/api/connectors', { key, body: { name: 'X', platform: 'myspace' } });
      expect(platform.status).toBe(400);
      expect(platform.body.error).toContain('platform');
      const empty = await call(app, 'POST', '/api/connectors', { key, body: { platform: 'generic' } });
      expect(empty.status).toBe(400);
      expect(empty.body.error).toContain('name');
      await call(app, 'POST', '/api/connectors', { key, body: { name: 'Twice', platform: 'zendesk' } });
      const twice = await call(app, 'POST', '/api/connectors', { key, body: { name: 'Twice', platform: 'zendesk' } });
      expect(twice.status).toBe(409);
      const connector = (await call(app, 'GET', '/api/connectors', { key })).body.data.find((c: { name: string }) => c.name === 'Twice');
      const short = await call(app, 'POST', `/api/connectors/${connector.id}/secret`, { headers: admin, body: { secret: 'short' } });
      expect(short.status).toBe(400);
      expect(short.body.error).toContain('secret');
      const grace = await call(app, 'POST', `/api/connectors/${connector.id}/secret`, { headers: admin, body: { grace_seconds: -1 } });
      expect(grace.status).toBe(400);
      expect(grace.body.error).toContain('grace_seconds');
      const status = await call(app, 'GET', '/api/ticket-events?status=exploded', { key });
      expect(status.status).toBe(400);
      expect(status.body.error).toContain('status');
      const [after] = await queryText<{ secret_sealed: string | null }>(database.db, 'select secret_sealed from connectors where id = $1', [
        connector.id,
      ]);
      expect(after!.secret_sealed).toBeNull();
    });

    test("another organisation's connectors and events are not found", async () => {
      const connector = (await call(app, 'POST', '/api/connectors', { key, body: { name: 'Private', platform: 'generic' } })).body.data;
      await deliver(connector.webhook_url, JSON.stringify({ nothing: true }), 'unused');
      await drainQueue(database);
      const [event] = (await call(app, 'GET', `/api/ticket-events?connector_id=${connector.id}`, { key })).body.data;
      expect((await call(app, 'POST', `/api/connectors/${connector.id}/secret`, { headers: otherAdmin })).status).toBe(404);
      expect((await call(app, 'POST', `/api/ticket-events/${event.id}/replay`, { key: otherKey })).status).toBe(404);
      expect((await call(app, 'GET', `/api/ticket-events?connector_id=${connector.id}`, { key: otherKey })).body.data).toEqual([]);
      expect((await call(app, 'GET', '/api/ticket-events', { key: otherKey })).body.data).toEqual([]);
      const [still] = await queryText<{ status: string; secret_sealed: string | null }>(
        database.db,
        'select e.status, c.secret_sealed from ticket_events e join connectors c on c.id = e.connector_id where e.id = $1',
        [event.id],
      );
      expect(still).toEqual({ status: 'dead', secret_sealed: null });
    });

    test('without SECRET_KEY a secret cannot be set: 503 not_configured, nothing stored', async () => {
      const bare = buildApp(database, { config: { ...config(), secretKey: null } }).app;
      const connector = (await call(bare, 'POST', '/api/connectors', { key, body: { name: 'No key', platform: 'generic' } })).body.data;
      const refused = await call(bare, 'POST', `/api/connectors/${connector.id}/secret`, {
        headers: admin,
        body: { secret: 'a-secret-of-length' },
      });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toContain('SECRET_KEY');
      expect(
        (await call(bare, 'GET', '/api/connectors', { key })).body.data.find((c: { id: string }) => c.id === connector.id).signed,
      ).toBe(false);
    });
  });
}
