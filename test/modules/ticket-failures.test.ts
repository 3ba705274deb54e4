// Events the database could not store as sent, on each backend: NUL and lone surrogates are
// removed or replaced so the ticket is stored; a failure that no retry can fix dead-letters the event
// on its first attempt; a transient one is still retried with back-off.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { queryText } from '../../src/db/client.ts';
import { RemoteUnitError } from '../../src/db/units-of-work.ts';
import { failedOutcome, isPermanent, UnusableEvent } from '../../src/modules/tickets/queue/retry.ts';
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
import { drainQueue, makeConnector, TEST_SECRET_KEY } from '../helpers/tickets.ts';

/** A driver's error with a SQLSTATE, as postgres.js and PGlite throw them. */
const databaseError = (code: string) => Object.assign(new Error(`failed with ${code}`), { code });

describe('which failures no retry can fix', () => {
  test('an unusable event is permanent', () => {
    expect(isPermanent(new UnusableEvent('no ticket found in the body'))).toBe(true);
  });

  for (const code of ['22P05', '22021', '22P02', '22003', '22007', '22008', '23514']) {
    test(`SQLSTATE ${code} is permanent, also after crossing from the owner thread or wrapped by drizzle`, () => {
      expect(isPermanent(databaseError(code))).toBe(true);
      expect(isPermanent(new RemoteUnitError('tickets.apply', { name: 'error', message: 'refused', code }))).toBe(true);
      expect(isPermanent(Object.assign(new Error('Failed query'), { cause: databaseError(code) }))).toBe(true);
    });
  }

  // Serialization failure, deadlock, lock timeout, shutdown, connection failure, too many
  // connections, a unique violation (a concurrent insert), a trigger's own exception.
  for (const code of ['40001', '40P01', '55P03', '57P01', '08006', '53300', '23505', 'P0001', 'CONNECTION_CLOSED', 'ECONNREFUSED']) {
    test(`${code} is retried`, () => {
      expect(isPermanent(databaseError(code))).toBe(false);
    });
  }

  test('an error without a code is retried', () => {
    expect(isPermanent(new Error('socket hang up'))).toBe(false);
    expect(isPermanent(undefined)).toBe(false);
  });

  test('the last error of a permanent database failure names the SQLSTATE and says it is not retried', () => {
    expect(failedOutcome('evt_1', databaseError('22P05'), 'could not be stored')).toEqual({
      eventId: 'evt_1',
      ok: false,
      error: 'could not be stored: failed with 22P05 (SQLSTATE 22P05: the database refuses this data, not retried)',
      permanent: true,
    });
  });
});

for (const backend of BACKENDS) {
  describe(`ticket events the database cannot take as sent (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let orgId: string;
    let key: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database, {
        config: testConfig({ databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null, secretKey: TEST_SECRET_KEY }),
      }).app;
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      orgId = made.org.id;
      key = made.secret;
      // Refuses a ticket whose subject is "REFUSE <SQLSTATE>" with that SQLSTATE: the database's
      // failures, on demand.
      await database.db.execute(
        sql.raw(`create or replace function test_refuse_by_sqlstate() returns trigger language plpgsql as $$
          begin if new.subject like 'REFUSE %' then raise exception 'refused by the test' using errcode = substr(new.subject, 8, 5); end if; return new; end $$`),
      );
      await database.db.execute(sql.raw(`drop trigger if exists test_refuse_by_sqlstate on tickets`));
      await database.db.execute(
        sql.raw(
          `create trigger test_refuse_by_sqlstate before insert or update on tickets for each row execute function test_refuse_by_sqlstate()`,
        ),
      );
    });
    afterAll(async () => {
      await database.db.execute(sql.raw(`drop trigger if exists test_refuse_by_sqlstate on tickets`));
      await database.dispose();
    });

    /** Posts `rawBody` (JSON text, escapes as written) to a new connector; returns the connector and the event's id. */
    const deliver = async (rawBody: string) => {
      const connector = await makeConnector(database, orgId);
      const res = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(200);
      return { connectorId: connector.id, eventId: res.body.event_id as string };
    };
    const event = async (id: string) =>
      (
        await queryText<{ status: string; attempts: number; last_error: string | null }>(
          database.db,
          `select status, attempts, last_error from ticket_events where id = $1`,
          [id],
        )
      )[0]!;
    const ticketsOf = async (connectorId: string) =>
      (await call(app, 'GET', `/api/tickets?connector_id=${connectorId}`, { key })).body.data;

    test('NUL is removed and lone surrogates replaced in every field: the ticket is stored and readable', async () => {
      const { connectorId, eventId } = await deliver(
        String.raw`{"ticket":{"id":"N2\u0000","subject":"Refund \ud800now\u0000","description":"<p>It\u0000 broke \udfff</p>","status":"open\u0000","priority":"urgent\uDBFF","requester_email":"ann\u0000@nul.example"}}`,
      );
      await drainQueue(database);
      expect(await event(eventId)).toMatchObject({ status: 'done', attempts: 1, last_error: null });
      const [ticket] = await ticketsOf(connectorId);
      expect(ticket).toMatchObject({
        external_id: 'N2',
        subject: 'Refund \ufffdnow',
        description: 'It broke \ufffd',
        status: 'open',
        external_status: 'open',
        external_priority: 'urgent\ufffd',
        requester_email: 'ann@nul.example',
      });
    });

    test('an id that differs only by a NUL is the same ticket on every delivery', async () => {
      const connector = await makeConnector(database, orgId);
      const send = (body: string) =>
        call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
          rawBody: body,
          headers: { 'content-type': 'application/json' },
        });
      await send(String.raw`{"ticket":{"id":"N3\u0000","subject":"first","updated_at":"2026-01-01T00:00:00Z"}}`);
      await send(String.raw`{"ticket":{"id":"N3\u0000","subject":"second","updated_at":"2026-01-02T00:00:00Z"}}`);
      await drainQueue(database);
      await send(String.raw`{"ticket":{"id":"N3\u0000","subject":"third","updated_at":"2026-01-03T00:00:00Z"}}`);
      await drainQueue(database);
      const tickets = await ticketsOf(connector.id);
      expect(tickets.map((t: { external_id: string; subject: string }) => [t.external_id, t.subject])).toEqual([['N3', 'third']]);
    });

    test('a date the database cannot hold dead-letters the event on its first attempt, with the reason', async () => {
      const { eventId } = await deliver(JSON.stringify({ ticket: { id: 'Y0', subject: 'year zero', created_at: '0000-01-01T00:00:00Z' } }));
      await drainQueue(database);
      const dead = await event(eventId);
      expect(dead).toMatchObject({ status: 'dead', attempts: 1 });
      expect(dead.last_error).toContain('date/time field value out of range');
      expect(dead.last_error).toContain('22008');
    });

    test('a check constraint refusing the ticket dead-letters the event on its first attempt', async () => {
      const { eventId } = await deliver(JSON.stringify({ ticket: { id: 'C1', subject: 'REFUSE 23514' } }));
      await drainQueue(database);
      const dead = await event(eventId);
      expect(dead).toMatchObject({ status: 'dead', attempts: 1 });
      expect(dead.last_error).toContain('refused by the test');
    });

    test('a deadlock is retried with back-off, not dead-lettered', async () => {
      const { eventId } = await deliver(JSON.stringify({ ticket: { id: 'D1', subject: 'REFUSE 40P01' } }));
      await drainQueue(database);
      expect(await event(eventId)).toMatchObject({ status: 'pending', attempts: 1 });
      const [{ delay }] = (await queryText<{ delay: number }>(
        database.db,
        `select extract(epoch from run_after - now())::float8 as delay from ticket_events where id = $1`,
        [eventId],
      )) as [{ delay: number }];
      expect(delay).toBeGreaterThan(0);
      expect(delay).toBeLessThanOrEqual(2);
    });
  });
}
