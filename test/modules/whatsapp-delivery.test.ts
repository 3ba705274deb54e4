// A large WhatsApp delivery is stored as it came, as one event with one job, before Meta gets its
// 200 (docs/chat-platforms.md "WhatsApp"), on both backends: the server stopping before the job
// runs loses nothing (the database opened again, the job works through every status, once); a
// redelivery of the same body, before or after, stores nothing more; a delivery naming a number no
// one installed is one ignored row; chunks an older release stored, with their job, are still worked
// through. Its text is cut into pieces without splitting a character.
import { afterAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connectPostgres, openEmbedded, queryText, type Database } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { newId } from '../../src/lib/ids.ts';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { chatAdminUnits } from '../../src/modules/chat/installations.ts';
import { piecesOf, RAW_PIECE, whatsappBatchJob } from '../../src/modules/whatsapp/batch.ts';
import {
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  tempDir,
  testConfig,
  TEST_DATABASE_URL,
  type BackendKind,
} from '../helpers/harness.ts';
import { drainJobs } from '../helpers/jobs.ts';
import { enqueueJob } from '../../src/queue/job-queue.ts';

const APP_SECRET = 'whatsapp-delivery-test-app-secret';
const SECRET_KEY = 'whatsapp-delivery-test-secret-key-0123456789';
const PATH = '/api/webhooks/messaging';

const sign = (body: string) => ({
  'content-type': 'application/json',
  'x-hub-signature-256': `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
});

function delivery(phoneNumberId: string, statuses: Record<string, unknown>[]): string {
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
              statuses,
            },
          },
        ],
      },
    ],
  });
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** The backend's database, opened (again) as `serve` would after a restart. */
function opener(backend: BackendKind): () => Promise<Database> {
  if (backend === 'postgres') return async () => connectPostgres(TEST_DATABASE_URL!, 4);
  const dir = tempDir();
  dirs.push(dir);
  return () => openEmbedded(dir, 'test');
}

for (const backend of BACKENDS) {
  describe(`a large WhatsApp delivery (${backend})`, () => {
    test('acknowledged, then the server stops before its job runs: opened again, the job stores and acts on every status once; redeliveries add nothing; chunks of an older release are still worked through', async () => {
      const open = opener(backend);
      let database = await open();
      await runMigrations(database, backend === 'postgres' ? TEST_DATABASE_URL : null);
      const config = testConfig({
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null,
        secretKey: SECRET_KEY,
        whatsappAppSecret: APP_SECRET,
      });
      const { org } = await createOrgWithKey(database);
      const phoneNumberId = `8${String(Date.now()).slice(-10)}${Math.floor(Math.random() * 1e4)}`;
      const id = newId('chi');
      await database.db.transaction((tx) =>
        chatAdminUnits['chat.add'](tx as never, {
          id,
          org: org.id,
          platform: 'whatsapp',
          externalId: phoneNumberId,
          credentialsSealed: sealSecret('EAAG-test-token', SECRET_KEY, id),
          actor: 'test',
        }),
      );
      const tag = newId('org').slice(4, 12);
      const statuses = Array.from({ length: 10_000 }, (_, i) => ({
        id: `wamid.RESTART${tag}${i}`,
        status: 'delivered',
        timestamp: String(Math.floor(Date.now() / 1000)),
        recipient_id: '15551234567',
      }));
      const body = delivery(phoneNumberId, statuses);
      const stranger = delivery(`7${phoneNumberId.slice(1)}`, statuses.slice(0, 100));

      let app = buildApp(database, { config }).app;
      expect((await call(app, 'POST', PATH, { rawBody: body, headers: sign(body) })).status).toBe(200);
      expect((await call(app, 'POST', PATH, { rawBody: stranger, headers: sign(stranger) })).status).toBe(200);
      // Stopped before any job ran.
      await database.close();

      database = await open();
      app = buildApp(database, { config }).app;
      const events = async () =>
        queryText<{ type: string; outcome: string; items: number | null }>(
          database.db,
          `select type, outcome, (body->>'items')::int as items from chat_inbound_events where org_id = $1 order by type`,
          [org.id],
        );
      expect(await events()).toEqual([
        { type: 'delivery', outcome: 'received', items: 10_000 },
        { type: 'delivery-piece', outcome: 'ignored', items: null },
        { type: 'delivery-piece', outcome: 'ignored', items: null },
      ]);
      expect(body.length).toBeGreaterThan(RAW_PIECE);
      const jobs = async () =>
        (
          await queryText<{ n: number }>(database.db, `select count(*)::int as n from jobs where org_id = $1 and kind = 'whatsapp.batch'`, [
            org.id,
          ])
        )[0]!.n;
      expect(await jobs()).toBe(1);
      const unknown = await queryText<{ outcome: string }>(
        database.db,
        `select outcome from chat_inbound_events where org_id is null and dedupe_key like $1`,
        [`unknown:7${phoneNumberId.slice(1)}:%`],
      );
      expect(unknown).toEqual([{ outcome: 'ignored' }]);
      // Meta's retry before the job ran finds the event.
      expect((await call(app, 'POST', PATH, { rawBody: body, headers: sign(body) })).status).toBe(200);
      expect(await jobs()).toBe(1);

      await drainJobs(database.db, [whatsappBatchJob], { clock: () => Date.now() + 3_600_000 });
      const stored = async () =>
        (
          await queryText<{ n: number; distinct: number }>(
            database.db,
            `select count(*)::int as n, count(distinct dedupe_key)::int as distinct from chat_inbound_events where org_id = $1 and type = 'status'`,
            [org.id],
          )
        )[0];
      expect(await stored()).toEqual({ n: 10_000, distinct: 10_000 });
      expect((await events()).filter((e) => e.type === 'delivery')).toEqual([{ type: 'delivery', outcome: 'processed', items: 10_000 }]);
      // And after.
      expect((await call(app, 'POST', PATH, { rawBody: body, headers: sign(body) })).status).toBe(200);
      expect(await jobs()).toBe(1);
      expect(await stored()).toEqual({ n: 10_000, distinct: 10_000 });

      // An older release stored a delivery as chunks of items, each naming the next, the first
      // with its job: after the upgrade the job works through both.
      const chunkKey = (i: number) => `batch:old${tag}:${id}:${i}`;
      const oldItems = (from: number) =>
        Array.from({ length: 150 }, (_, i) => ({
          phoneNumberId,
          dedupeKey: `status:wamid.OLD${tag}${from + i}:sent`,
          type: 'status',
          body: { id: `wamid.OLD${tag}${from + i}`, status: 'sent', timestamp: '1700000000' },
        }));
      const first = newId('che');
      for (const [i, eventId] of [first, newId('che')].entries()) {
        await queryText(
          database.db,
          `insert into chat_inbound_events (id, platform, dedupe_key, installation_id, org_id, type, outcome, body) values ($1, 'whatsapp', $2, $3, $4, 'batch', 'received', $5::jsonb)`,
          [eventId, chunkKey(i), id, org.id, JSON.stringify({ items: oldItems(i * 150), next: i === 0 ? chunkKey(1) : null })],
        );
      }
      await database.db.transaction((tx) =>
        enqueueJob(tx as never, whatsappBatchJob, { eventId: first, from: 0 }, { orgId: org.id, dedupeKey: first }),
      );
      await drainJobs(database.db, [whatsappBatchJob], { clock: () => Date.now() + 3_600_000 });
      const old = await queryText<{ n: number }>(
        database.db,
        `select count(*)::int as n from chat_inbound_events where org_id = $1 and type = 'status' and dedupe_key like $2`,
        [org.id, `status:wamid.OLD${tag}%`],
      );
      expect(old).toEqual([{ n: 300 }]);
      const chunks = await queryText<{ outcome: string }>(
        database.db,
        `select outcome from chat_inbound_events where org_id = $1 and type = 'batch'`,
        [org.id],
      );
      expect(chunks).toEqual([{ outcome: 'processed' }, { outcome: 'processed' }]);
      await database.close();
    });
  });
}

test('a text is cut into pieces of at most the size, never between the halves of a surrogate pair', () => {
  const text = `ab\u{1F600}cd\u{1F600}\u{1F600}e`;
  for (const size of [1, 2, 3, 4, 5, 100]) {
    const pieces = piecesOf(text, size);
    expect(pieces.join('')).toBe(text);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(Math.max(size, 2));
      expect(piece.isWellFormed()).toBe(true);
    }
  }
  expect(piecesOf('', 10)).toEqual([]);
});
