// Migrations at start-up: a database that is behind gets the rest applied; one that is current costs
// one query, takes no migration lock (a restart does not wait behind another instance's migration)
// and is reported migrated; one whose newest migration is missing is reported pending.
import { afterAll, describe, expect, test } from 'bun:test';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import postgres from 'postgres';
import { connectPostgres, type Database, type Db } from '../../src/db/client.ts';
import { isMigrated, knownMigrations, migrationsFolder, runMigrations } from '../../src/db/migrate.ts';
import { emptyPglite } from '../helpers/empty-pglite.ts';
import { BACKENDS, openTestDatabase, TEST_DATABASE_URL, tempDir } from '../helpers/harness.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** This build's migrations folder cut after its first `count` migrations. */
function firstMigrations(count: number): string {
  const dir = tempDir('revintel-migrations-');
  dirs.push(dir);
  const source = migrationsFolder();
  const journal = JSON.parse(readFileSync(join(source, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] };
  journal.entries = journal.entries.slice(0, count);
  mkdirSync(join(dir, 'meta'));
  for (const entry of journal.entries) cpSync(join(source, `${entry.tag}.sql`), join(dir, `${entry.tag}.sql`));
  writeFileSync(join(dir, 'meta/_journal.json'), JSON.stringify(journal));
  return dir;
}

/** An empty database of its own, migrated up to the first `count` migrations. */
async function behindDatabase(
  backend: string,
  count: number,
): Promise<{ database: Database; url: string | null; dispose(): Promise<void> }> {
  if (backend === 'embedded') {
    const { pglite, dispose } = await emptyPglite();
    await migratePglite(drizzlePglite(pglite), { migrationsFolder: firstMigrations(count) });
    const db = drizzlePglite(pglite) as unknown as Db;
    const database: Database = {
      kind: 'embedded',
      db,
      sql: null,
      pglite,
      ping: async () => {},
      failure: () => null,
      close: dispose,
    };
    return { database, url: null, dispose };
  }
  const name = `test_migrate_${process.pid}_${Date.now()}`;
  const admin = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  const database = connectPostgres(url.toString(), 2);
  const { migrate } = await import('drizzle-orm/postgres-js/migrator');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  await migrate(drizzle(database.sql!), { migrationsFolder: firstMigrations(count) });
  return {
    database,
    url: url.toString(),
    dispose: async () => {
      await database.close();
      await admin.unsafe(`drop database if exists ${name}`);
      await admin.end({ timeout: 5 });
    },
  };
}

for (const backend of BACKENDS) {
  describe(`migrations at start-up (${backend})`, () => {
    test('a database behind this build is reported pending, gets the rest applied, then is current', async () => {
      const behind = await behindDatabase(backend, 20);
      try {
        expect(await isMigrated(behind.database)).toBe(false);
        expect(await runMigrations(behind.database, behind.url)).toEqual({ applied: knownMigrations() - 20, total: knownMigrations() });
        expect(await isMigrated(behind.database)).toBe(true);
        expect(await runMigrations(behind.database, behind.url)).toEqual({ applied: 0, total: knownMigrations() });
      } finally {
        await behind.dispose();
      }
    });

    test('a current database is left alone, even while another process holds the migration lock', async () => {
      const database = await openTestDatabase(backend);
      // Another instance in the middle of migrating holds the lock until this test ends.
      const holder = backend === 'postgres' ? postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} }) : null;
      try {
        await holder?.unsafe('select pg_advisory_lock(7312004221)');
        expect(await runMigrations(database, backend === 'postgres' ? TEST_DATABASE_URL : null)).toEqual({
          applied: 0,
          total: knownMigrations(),
        });
        expect(await isMigrated(database)).toBe(true);
      } finally {
        await holder?.end({ timeout: 5 });
        await database.dispose();
      }
    });

    test('a database missing its newest migration is reported pending', async () => {
      const behind = await behindDatabase(backend, knownMigrations() - 1);
      try {
        expect(await isMigrated(behind.database)).toBe(false);
      } finally {
        await behind.dispose();
      }
    });
  });
}
