// `revintel connectors` and `revintel events` through the compiled binary, on the embedded database (the CLI takes
// DATA_DIR) and on PostgreSQL: secrets sealed by the CLI open in the server with the same key, are
// never printed unless generated, rotation keeps the old secret for the grace period, and dead
// events are listed, shown and replayed.
import { describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { runCli } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { buildApp, call, tempDir, testConfig, TEST_DATABASE_URL, uniqueName } from '../helpers/harness.ts';
import { openEmbedded, connectPostgres, type Database } from '../../src/db/client.ts';
import { ensureSecretKey } from '../../src/lib/secret-key.ts';
import { drainQueue } from '../helpers/tickets.ts';

const { dirs } = e2eFile();

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const SECRET_KEY = 'cli-test-secret-key-0123456789abcdefghij';

interface Target {
  label: string;
  env: Record<string, string>;
  open: () => Promise<Database>;
  secretKey: () => string;
}

const dataDir = tempDir('revintel-cli-');
dirs.push(dataDir);
const targets: Target[] = [
  {
    label: 'embedded',
    env: { DATA_DIR: dataDir },
    open: () => openEmbedded(dataDir, 'test'),
    secretKey: () => ensureSecretKey(null, dataDir)!,
  },
];
if (TEST_DATABASE_URL) {
  const url = TEST_DATABASE_URL;
  targets.push({
    label: 'postgres',
    env: { DATABASE_URL: url, SECRET_KEY },
    open: async () => connectPostgres(url, 2),
    secretKey: () => SECRET_KEY,
  });
}

for (const target of targets) {
  describe(`connectors and events CLI (${target.label})`, () => {
    const cli = (args: string[]) => runCli([...args, '--json'], { LOG_LEVEL: 'silent', ...target.env });
    /** The app on the target's database, as a server would run it, for the time of `fn`. */
    async function withApp<T>(fn: (app: ReturnType<typeof buildApp>['app'], database: Database) => Promise<T>): Promise<T> {
      const database = await target.open();
      try {
        const app = buildApp(database, {
          config: testConfig({ databaseUrl: target.label === 'postgres' ? TEST_DATABASE_URL : null, secretKey: target.secretKey() }),
        }).app;
        return await fn(app, database);
      } finally {
        await database.close();
      }
    }

    test('create, list, rotate with a grace period, update; secrets work in the server and are never shown again', async () => {
      if (target.label === 'postgres') expect((await runCli(['migrate'], { LOG_LEVEL: 'silent', ...target.env })).code).toBe(0);
      const org = uniqueName('cli');
      expect((await cli(['orgs', 'create', '--name', org, '--plan', 'enterprise'])).code).toBe(0);
      const created = await cli([
        'connectors',
        'create',
        '--org',
        org,
        '--platform',
        'zendesk',
        '--name',
        'Zendesk EU',
        '--secret',
        'first-secret-123',
      ]);
      expect(created.code).toBe(0);
      expect(created.json).toMatchObject({
        name: 'Zendesk EU',
        platform: 'zendesk',
        signed: true,
        token: false,
        webhook_url: `/api/webhooks/tickets?connectorId=${created.json.id}`,
      });
      expect(created.json.id).toMatch(/^con_[0-9A-Za-z]{26}$/);
      expect(created.stdout).not.toContain('first-secret-123');

      const badPlatform = await cli(['connectors', 'create', '--org', org, '--platform', 'myspace', '--name', 'X']);
      expect(badPlatform.code).toBe(1);
      expect(JSON.parse(badPlatform.stderr)).toMatchObject({
        code: 'validation_failed',
        error: expect.stringContaining('platform must be one of'),
      });
      const taken = await cli(['connectors', 'create', '--org', org, '--platform', 'generic', '--name', 'Zendesk EU']);
      expect(taken.code).toBe(1);
      expect(JSON.parse(taken.stderr)).toEqual({
        success: false,
        code: 'conflict',
        error: 'a connector named "Zendesk EU" already exists in this organisation',
      });

      const reserved = await cli(['connectors', 'create', '--org', org, '--platform', 'generic', '--name', 'api import']);
      expect(JSON.parse(reserved.stderr).error).toBe('"API import" is the name of the built-in import connector');

      const listed = await cli(['connectors', 'list', '--org', org]);
      expect(listed.json).toHaveLength(1);
      expect(listed.stdout).not.toMatch(/first-secret|v1\.|secret_sealed|token_hash/);

      const rotated = await cli([
        'connectors',
        'rotate-secret',
        'Zendesk EU',
        '--org',
        org,
        '--secret',
        'second-secret-456',
        '--grace',
        '3600',
      ]);
      expect(rotated.code).toBe(0);
      expect(Date.parse(rotated.json.previous_secret_valid_until) - Date.now()).toBeGreaterThan(3500_000);
      expect(rotated.stdout).not.toContain('second-secret-456');

      // The server opens what the CLI sealed: during the grace period both secrets sign. (The
      // database is opened by the test between CLI commands: on the embedded one the CLI needs
      // DATA_DIR to itself.)
      const body = JSON.stringify({ ticket: { id: 'CLI-1', subject: 'Signed' } });
      const statuses = (headers: Record<string, string>[]) =>
        withApp(async (app) => {
          const answers: number[] = [];
          for (const h of headers) {
            const res = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${created.json.id}`, {
              rawBody: body,
              headers: { 'content-type': 'application/json', ...h },
            });
            answers.push(res.status);
          }
          return answers;
        });
      const signed = (secret: string) => ({ 'x-hub-signature-256': sign(secret, body) });
      expect(await statuses([signed('first-secret-123'), signed('second-secret-456'), signed('another-secret')])).toEqual([200, 200, 401]);

      // A rotation without grace: the old secret stops at once.
      const generated = await cli(['connectors', 'rotate-secret', created.json.id, '--grace', '0']);
      expect(generated.code).toBe(0);
      expect(generated.json.secret).toMatch(/^whsec_/);
      expect(generated.json.previous_secret_valid_until).toBeNull();
      expect(await statuses([signed('second-secret-456'), signed(generated.json.secret)])).toEqual([401, 200]);

      // Without a secret the connector takes unsigned deliveries; a token then guards it.
      const open = await cli(['connectors', 'update', created.json.id, '--no-secret', '--token', 'static-token-0123456789']);
      expect(open.json).toMatchObject({ signed: false, token: true });
      expect(await statuses([{}, { authorization: 'Bearer static-token-0123456789' }])).toEqual([401, 200]);
    });

    test('events: list the dead, show one with its reason, replay it', async () => {
      const org = uniqueName('events');
      expect((await cli(['orgs', 'create', '--name', org, '--plan', 'enterprise'])).code).toBe(0);
      const connector = (await cli(['connectors', 'create', '--org', org, '--platform', 'generic', '--name', 'Desk'])).json.id as string;
      const eventId = await withApp(async (app, database) => {
        const res = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector}`, {
          rawBody: '{"unexpected":"shape"}',
          headers: { 'content-type': 'application/json' },
        });
        expect(res.status).toBe(200);
        await drainQueue(database);
        return res.body.event_id as string;
      });
      const dead = await cli(['events', 'list', '--org', org, '--status', 'dead']);
      expect(dead.code).toBe(0);
      expect(dead.json.map((e: { id: string }) => e.id)).toEqual([eventId]);
      const shown = await cli(['events', 'show', eventId]);
      expect(shown.json).toMatchObject({
        id: eventId,
        status: 'dead',
        attempts: 1,
        body: '{"unexpected":"shape"}',
        connector_name: 'Desk',
      });
      expect(shown.json.last_error).toContain('no ticket found');
      const replayed = await cli(['events', 'replay', eventId, 'evt_unknown']);
      expect(replayed.json).toEqual({ replayed: [eventId], refused: [{ id: 'evt_unknown', status: 'not found' }] });
      const pending = await cli(['events', 'list', '--org', org]);
      expect(pending.json[0]).toMatchObject({ id: eventId, status: 'pending', attempts: 0, last_error: null });
      const again = await cli(['events', 'replay', eventId]);
      expect(again.json.refused).toEqual([]); // a waiting event may be replayed (made due now)
      const usage = await cli(['events', 'list', '--status', 'lost']);
      expect(usage.code).toBe(2);
    });
  });
}
