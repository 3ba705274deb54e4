// The group commit that stores inbound ticket events: every event handed over is stored once and
// answered with its own id, a burst goes in a few statements rather than one per event, a bad row
// fails alone, and drain() waits for everything in hand.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { newId } from '../../src/lib/ids.ts';
import { OVERLAP_AT } from '../../src/db/group-commit.ts';
import { createEventWriter, type InboundEvent } from '../../src/modules/tickets/queue/writer.ts';
import { BACKENDS, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { makeConnector } from '../helpers/tickets.ts';

for (const backend of BACKENDS) {
  describe(`event writer (${backend})`, () => {
    let database: TestDatabase;
    let orgId: string;
    let connectorId: string;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
      orgId = (await createOrgWithKey(database)).org.id;
      connectorId = (await makeConnector(database, orgId)).id;
    });
    afterAll(() => database.dispose());

    const event = (n: number, extra: Partial<InboundEvent> = {}): InboundEvent => ({
      id: newId('evt'),
      orgId,
      connectorId,
      source: 'webhook',
      body: JSON.stringify({ ticket: { id: `W-${n}`, subject: `Subject ${n}` } }),
      headers: { 'content-type': 'application/json' },
      dedupeKey: null,
      ...extra,
    });

    // Events one statement stored share received_at (the start of its transaction).
    const statementsFor = async (ids: string[]) =>
      (
        await queryText<{ n: number }>(
          database.db,
          `select count(distinct received_at)::int as n from ticket_events where id = any($1::text[])`,
          [ids],
        )
      )[0]!.n;

    for (const parallel of [1, 2]) {
      test(`a burst of 300 (${parallel} insert${parallel > 1 ? 's' : ''} in flight at most): each stored once, with its own id, in a few statements`, async () => {
        let committed = 0;
        const writer = createEventWriter(database.db, (count) => (committed += count), { parallel });
        const events = Array.from({ length: 300 }, (_, n) => event(n));
        const stored = await Promise.all(events.map((e) => writer.write(e)));
        expect(stored).toEqual(events.map((e) => ({ id: e.id, duplicate: false })));
        expect(committed).toBe(300);
        const rows = await queryText<{ id: string; body: string }>(
          database.db,
          `select id, body from ticket_events where id = any($1::text[])`,
          [events.map((e) => e.id)],
        );
        expect(rows).toHaveLength(300);
        expect(new Map(rows.map((r) => [r.id, r.body]))).toEqual(new Map(events.map((e) => [e.id, e.body])));
        // The first goes alone (nothing was waiting); the rest wait for it together.
        const statements = await statementsFor(events.map((e) => e.id));
        expect(statements).toBeGreaterThanOrEqual(2);
        expect(statements).toBeLessThanOrEqual(parallel === 1 ? 2 : Math.ceil(300 / OVERLAP_AT) + 1);
      });
    }

    test('a re-delivery is answered with the first copy; a bad row fails alone', async () => {
      const writer = createEventWriter(database.db, () => {}, { parallel: 2 });
      const first = await writer.write(event(1, { dedupeKey: 'webhook-id:abc' }));
      const good = event(2);
      const again = event(3, { dedupeKey: 'webhook-id:abc' });
      const bad = event(4, { connectorId: 'con_doesnotexist' });
      const results = await Promise.allSettled([writer.write(good), writer.write(again), writer.write(bad)]);
      expect(results[0]).toEqual({ status: 'fulfilled', value: { id: good.id, duplicate: false } });
      expect(results[1]).toEqual({ status: 'fulfilled', value: { id: first.id, duplicate: true } });
      expect(results[2]!.status).toBe('rejected');
      const rows = await queryText<{ id: string }>(database.db, `select id from ticket_events where id = any($1::text[]) order by id`, [
        [good.id, again.id, bad.id],
      ]);
      expect(rows.map((r) => r.id)).toEqual([good.id]);
    });

    test('drain() resolves once everything handed over is written', async () => {
      const writer = createEventWriter(database.db, () => {}, { parallel: 2 });
      const events = Array.from({ length: 50 }, (_, n) => event(100 + n));
      const writes = events.map((e) => writer.write(e));
      await writer.drain();
      const [row] = await queryText<{ n: number }>(database.db, `select count(*)::int as n from ticket_events where id = any($1::text[])`, [
        events.map((e) => e.id),
      ]);
      expect(row!.n).toBe(50);
      await Promise.all(writes);
      await writer.drain(); // nothing in hand: at once
    });
  });
}
