// Migrations live in drizzle/ (drizzle-kit generate). In the binary they are embedded with
// `--asset ./drizzle`; from source they are read from the repository.
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import postgres from 'postgres';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { rowsOf, type Database } from './client.ts';

/** Any fixed number: every revintel process takes the same advisory lock to migrate. */
const MIGRATION_LOCK_ID = 7_312_004_221;

export function migrationsFolder(): string {
  return Bun.isStandaloneExecutable ? join(import.meta.dir, 'drizzle') : join(import.meta.dir, '../../drizzle');
}

/** How many migrations this build knows. */
export function knownMigrations(): number {
  const journal = JSON.parse(readFileSync(join(migrationsFolder(), 'meta/_journal.json'), 'utf8')) as { entries: unknown[] };
  return journal.entries.length;
}

export interface MigrationResult {
  applied: number;
  total: number;
}

async function appliedMigrations(database: Pick<Database, 'db'>): Promise<number> {
  try {
    // drizzle's own bookkeeping table
    const [row] = rowsOf<{ n: number }>(await database.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`));
    return row?.n ?? 0;
  } catch {
    return 0;
  }
}

/**
 * Applies pending migrations. On PostgreSQL it holds a session advisory lock on a dedicated
 * connection, so instances booting together on an empty database take turns and all come up.
 */
export async function runMigrations(database: Database, databaseUrl: string | null): Promise<MigrationResult> {
  const folder = migrationsFolder();
  let before: number;
  if (database.kind === 'postgres') {
    if (!databaseUrl) throw new Error('postgres migrations need DATABASE_URL');
    const lockSql = postgres(databaseUrl, { max: 1, onnotice: () => {}, connection: { application_name: 'revintel-migrate' } });
    try {
      await lockSql`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
      // Counted under the lock: an instance that migrated while we waited is not "applied now".
      before = await appliedMigrations(database);
      await migratePostgres(drizzlePostgres(lockSql), { migrationsFolder: folder });
      await lockSql`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`;
    } finally {
      await lockSql.end({ timeout: 5 });
    }
  } else {
    before = await appliedMigrations(database);
    await migratePglite(drizzlePglite(database.pglite!), { migrationsFolder: folder });
  }
  const after = await appliedMigrations(database);
  return { applied: Math.max(0, after - before), total: knownMigrations() };
}

/** True when every migration this build knows is applied. */
export async function isMigrated(database: Pick<Database, 'db'>): Promise<boolean> {
  return (await appliedMigrations(database)) >= knownMigrations();
}
