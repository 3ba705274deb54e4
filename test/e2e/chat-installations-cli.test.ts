// Chat installations on both backends (docs/chat-platforms.md): `revintel chat add slack|whatsapp`
// seals the bot or access token under SECRET_KEY, bound to the installation (the database never
// holds the plaintext), refuses a malformed id or token, a workspace or number already installed
// and a second Slack workspace; `chat add google-chat` keeps a space without a token; `chat list`
// shows no token; `chat remove` erases it.
import { beforeAll, describe, expect, test } from 'bun:test';
import { connectPostgres, openEmbedded, queryText, type Database } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { openSecret } from '../../src/lib/secret-box.ts';
import { ensureSecretKey } from '../../src/lib/secret-key.ts';
import { runCli } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { createOrgWithKey, tempDir, TEST_DATABASE_URL } from '../helpers/harness.ts';

const SECRET_KEY = 'slack-install-test-secret-key-0123456789ab';
const { dirs } = e2eFile();
const dataDir = tempDir('revintel-chat-');
dirs.push(dataDir);

interface Target {
  label: string;
  env: Record<string, string>;
  open: () => Promise<Database>;
  secretKey: () => string;
}
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
  describe(`chat installations (${target.label})`, () => {
    const cli = (args: string[]) => runCli([...args, '--json'], { LOG_LEVEL: 'silent', ...target.env });
    let orgName = '';
    const teamId = `T${Math.random().toString(36).slice(2, 12).toUpperCase()}`;
    const phoneNumberId = `8${Date.now()}${Math.floor(Math.random() * 1000)}`;
    const space = `spaces/AAAA${Math.random().toString(36).slice(2, 12)}`;
    async function withDb<T>(fn: (database: Database) => Promise<T>): Promise<T> {
      const database = await target.open();
      try {
        await runMigrations(database, target.label === 'postgres' ? TEST_DATABASE_URL : null);
        return await fn(database);
      } finally {
        await database.close();
      }
    }
    beforeAll(async () => {
      orgName = await withDb(async (database) => (await createOrgWithKey(database)).org.name);
    });

    test('add seals the token, list hides it, a second install of the workspace (or a second workspace) is refused, remove erases it', async () => {
      const token = 'xoxb-1111-2222-abcdefABCDEF';
      expect((await cli(['chat', 'add', 'slack', '--org', orgName, '--team-id', 'nope', '--bot-token', token])).code).toBe(2);
      expect((await cli(['chat', 'add', 'slack', '--org', orgName, '--team-id', teamId, '--bot-token', 'xoxp-user-token'])).code).toBe(2);
      const added = await cli(['chat', 'add', 'slack', '--org', orgName, '--team-id', teamId, '--bot-token', token]);
      expect(added.code).toBe(0);
      expect(added.json).toMatchObject({ platform: 'slack', external_id: teamId });
      const id: string = added.json.id;
      expect(id).toMatch(/^chi_/);
      await withDb(async (database) => {
        const [row] = await queryText<{ credentials_sealed: string }>(
          database.db,
          'select credentials_sealed from chat_installations where id = $1',
          [id],
        );
        expect(row!.credentials_sealed).not.toContain('xoxb');
        expect(openSecret(row!.credentials_sealed, target.secretKey(), id)).toBe(token);
      });
      const again = await cli(['chat', 'add', 'slack', '--org', orgName, '--team-id', teamId, '--bot-token', token]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('already installed');
      const secondWorkspace = await cli(['chat', 'add', 'slack', '--org', orgName, '--team-id', `${teamId}X`, '--bot-token', token]);
      expect(secondWorkspace.code).not.toBe(0);
      expect(secondWorkspace.stderr).toContain('sends through one workspace');
      const listed = await cli(['chat', 'list', '--org', orgName]);
      expect(listed.json.map((r: any) => r.id)).toEqual([id]);
      expect(listed.stdout).not.toContain('xoxb');
      expect((await cli(['chat', 'remove', id])).code).toBe(0);
      expect((await cli(['chat', 'list', '--org', orgName])).json).toEqual([]);
      await withDb(async (database) => {
        const [row] = await queryText<{ credentials_sealed: string | null }>(
          database.db,
          'select credentials_sealed from chat_installations where id = $1',
          [id],
        );
        expect(row!.credentials_sealed).toBeNull();
      });
    });

    test('add whatsapp seals the access token; a bad phone number id or token, or a number already installed, is refused', async () => {
      const token = 'EAAGtestTOKENabcdefghijklmnop0123456789';
      expect((await cli(['chat', 'add', 'whatsapp', '--org', orgName, '--phone-number-id', '+1 555', '--access-token', token])).code).toBe(
        2,
      );
      expect(
        (await cli(['chat', 'add', 'whatsapp', '--org', orgName, '--phone-number-id', phoneNumberId, '--access-token', 'short'])).code,
      ).toBe(2);
      const added = await cli(['chat', 'add', 'whatsapp', '--org', orgName, '--phone-number-id', phoneNumberId, '--access-token', token]);
      expect(added.code).toBe(0);
      expect(added.json).toMatchObject({ platform: 'whatsapp', external_id: phoneNumberId });
      const id: string = added.json.id;
      await withDb(async (database) => {
        const [row] = await queryText<{ credentials_sealed: string }>(
          database.db,
          'select credentials_sealed from chat_installations where id = $1',
          [id],
        );
        expect(row!.credentials_sealed).not.toContain('EAAG');
        expect(openSecret(row!.credentials_sealed, target.secretKey(), id)).toBe(token);
      });
      const again = await cli(['chat', 'add', 'whatsapp', '--org', orgName, '--phone-number-id', phoneNumberId, '--access-token', token]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('already installed');
      expect((await cli(['chat', 'list', '--org', orgName])).stdout).not.toContain(token);
      expect((await cli(['chat', 'remove', id])).code).toBe(0);
    });

    test('add google-chat keeps the space without a token; a malformed or taken space is refused', async () => {
      const malformed = await cli(['chat', 'add', 'google-chat', '--org', orgName, '--space', 'rooms/x']);
      expect(malformed.code).toBe(2);
      expect(malformed.stderr).toContain('--space must be a Google Chat space name');
      const added = await cli(['chat', 'add', 'google-chat', '--org', orgName, '--space', space]);
      expect(added.code).toBe(0);
      expect(added.json).toMatchObject({ platform: 'google_chat', external_id: space });
      await withDb(async (database) => {
        const [row] = await queryText<{ credentials_sealed: string | null }>(
          database.db,
          'select credentials_sealed from chat_installations where id = $1',
          [added.json.id],
        );
        expect(row!.credentials_sealed).toBeNull();
      });
      const again = await cli(['chat', 'add', 'google-chat', '--org', orgName, '--space', space]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('already installed');
    });
  });
}
