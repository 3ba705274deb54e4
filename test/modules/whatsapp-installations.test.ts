// `revintel chat add whatsapp` on both backends (README "Agent actions" → WhatsApp): the access
// token is sealed under SECRET_KEY, bound to the installation (the database never holds the
// plaintext); a malformed phone number id or token is refused; a number already installed too.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { connectPostgres, openEmbedded, queryText, type Database } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { openSecret } from '../../src/lib/secret-box.ts';
import { ensureSecretKey } from '../../src/lib/secret-key.ts';
import { runSourceCli } from '../helpers/binary.ts';
import { createOrgWithKey, tempDir, TEST_DATABASE_URL } from '../helpers/harness.ts';

const SECRET_KEY = 'whatsapp-install-test-secret-key-0123456789';
const dataDir = tempDir('revintel-wa-chat-');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

interface Target {
  label: string;
  env: Record<string, string>;
  open: () => Promise<Database>;
  secretKey: () => string;
}
const targets: Target[] = [{ label: 'embedded', env: { DATA_DIR: dataDir }, open: () => openEmbedded(dataDir, 'test'), secretKey: () => ensureSecretKey(null, dataDir)! }];
if (TEST_DATABASE_URL) {
  const url = TEST_DATABASE_URL;
  targets.push({ label: 'postgres', env: { DATABASE_URL: url, SECRET_KEY }, open: async () => connectPostgres(url, 2), secretKey: () => SECRET_KEY });
}

for (const target of targets) {
  describe(`WhatsApp installations (${target.label})`, () => {
    const cli = (args: string[]) => runSourceCli([...args, '--json'], { LOG_LEVEL: 'silent', ...target.env });
    let orgName = '';
    const phoneNumberId = `8${Date.now()}${Math.floor(Math.random() * 1000)}`;
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

    test('add whatsapp seals the access token; a bad phone number id or token, or a number already installed, is refused', async () => {
      const token = 'EAAGtestTOKENabcdefghijklmnop0123456789';
      expect((await cli(['chat', 'add', 'whatsapp', '--org', orgName, '--phone-number-id', '+1 555', '--access-token', token])).code).toBe(2);
      expect((await cli(['chat', 'add', 'whatsapp', '--org', orgName, '--phone-number-id', phoneNumberId, '--access-token', 'short'])).code).toBe(2);
      const added = await cli(['chat', 'add', 'whatsapp', '--org', orgName, '--phone-number-id', phoneNumberId, '--access-token', token]);
      expect(added.code).toBe(0);
      expect(added.json).toMatchObject({ platform: 'whatsapp', external_id: phoneNumberId });
      const id: string = added.json.id;
      await withDb(async (database) => {
        const [row] = await queryText<{ credentials_sealed: string }>(database.db, 'select credentials_sealed from chat_installations where id = $1', [id]);
        expect(row!.credentials_sealed).not.toContain('EAAG');
        expect(openSecret(row!.credentials_sealed, target.secretKey(), id)).toBe(token);
      });
      const again = await cli(['chat', 'add', 'whatsapp', '--org', orgName, '--phone-number-id', phoneNumberId, '--access-token', token]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('already installed');
      expect((await cli(['chat', 'list', '--org', orgName])).stdout).not.toContain(token);
      expect((await cli(['chat', 'remove', id])).code).toBe(0);
    });
  });
}
