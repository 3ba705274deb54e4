// `revintel chat add google-chat` on both backends (README "Agent actions" → Google Chat): a space
// is added to an organisation without any token (the app's service account speaks everywhere), a
// malformed space name is a usage error, and a space installed already is refused.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { connectPostgres, openEmbedded, queryText, type Database } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { runSourceCli } from '../helpers/binary.ts';
import { createOrgWithKey, tempDir, TEST_DATABASE_URL } from '../helpers/harness.ts';

const dataDir = tempDir('revintel-gchat-');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const targets: { label: string; env: Record<string, string>; open: () => Promise<Database> }[] = [{ label: 'embedded', env: { DATA_DIR: dataDir }, open: () => openEmbedded(dataDir, 'test') }];
if (TEST_DATABASE_URL) {
  const url = TEST_DATABASE_URL;
  targets.push({ label: 'postgres', env: { DATABASE_URL: url }, open: async () => connectPostgres(url, 2) });
}

for (const target of targets) {
  describe(`Google Chat installations (${target.label})`, () => {
    const cli = (args: string[]) => runSourceCli([...args, '--json'], { LOG_LEVEL: 'silent', ...target.env });
    const space = `spaces/AAAA${Math.random().toString(36).slice(2, 12)}`;
    let orgName = '';
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

    test('add google-chat keeps the space without a token; a malformed or taken space is refused', async () => {
      const malformed = await cli(['chat', 'add', 'google-chat', '--org', orgName, '--space', 'rooms/x']);
      expect(malformed.code).toBe(2);
      expect(malformed.stderr).toContain('--space must be a Google Chat space name');
      const added = await cli(['chat', 'add', 'google-chat', '--org', orgName, '--space', space]);
      expect(added.code).toBe(0);
      expect(added.json).toMatchObject({ platform: 'google_chat', external_id: space });
      await withDb(async (database) => {
        const [row] = await queryText<{ credentials_sealed: string | null }>(database.db, 'select credentials_sealed from chat_installations where id = $1', [added.json.id]);
        expect(row!.credentials_sealed).toBeNull();
      });
      const again = await cli(['chat', 'add', 'google-chat', '--org', orgName, '--space', space]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('already installed');
    });
  });
}
