// Migrations live in drizzle/ (drizzle-kit generate). In the binary they are embedded with
// `--asset ./drizzle`; from source they are read from the repository.
import postgres from 'postgres';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sql } from 'drizzle-orm';
import { rowsOf, type Database } from './client.ts';

/** Any fixed number: every revintel process takes the same advisory lock to migrate. */
const MIGRATION_LOCK_ID = 7_312_004_221;

export function migrationsFolder(): string {
  // In the binary, beside the entry in its embedded file system (`import.meta.dir` there is the
  // directory the binary was built from when it is compiled to bytecode).
  return Bun.isStandaloneExecutable ? join(dirname(Bun.main), 'drizzle') : join(import.meta.dir, '../../drizzle');
}

interface Journal {
  entries: { when: number }[];
}

let journal: Journal | null = null;
/** drizzle-kit's journal of this build's migrations, read once: it is part of the build. */
function journalOf(): Journal {
  return (journal ??= JSON.parse(readFileSync(join(migrationsFolder(), 'meta/_journal.json'), 'utf8')) as Journal);
}

/** How many migrations this build knows. */
export function knownMigrations(): number {
  return journalOf().entries.length;
}

interface MigrationResult {
  applied: number;
  total: number;
}

interface MigrationState {
  /** Migrations recorded as applied. */
  applied: number;
  /** Every migration of this build is applied. */
  current: boolean;
}

/**
 * Where the database stands, in one query of drizzle's own bookkeeping table. drizzle applies a
 * migration when the newest one recorded is older than it (its `created_at` is the journal's
 * `when`), so the database is current once that newest one is as new as this build's last.
 */
async function migrationState(database: Pick<Database, 'db'>): Promise<MigrationState> {
  const newest = Math.max(0, ...journalOf().entries.map((entry) => entry.when));
  try {
    const [row] = rowsOf<{ n: number; newest: string | null }>(
      await database.db.execute(sql`select count(*)::int as n, max(created_at)::text as newest from drizzle.__drizzle_migrations`),
    );
    return { applied: row?.n ?? 0, current: Number(row?.newest ?? 0) >= newest };
  } catch {
    // No bookkeeping table yet: nothing is applied.
    return { applied: 0, current: false };
  }
}

/**
 * Applies pending migrations. A database that is already current costs one query (a restart's
 * case); otherwise, on PostgreSQL, drizzle's migrator runs holding a session advisory lock on a
 * dedicated connection, so instances booting together on an empty database take turns and all come up.
 */
export async function runMigrations(database: Database, databaseUrl: string | null): Promise<MigrationResult> {
  const total = knownMigrations();
  const start = await migrationState(database);
  if (start.current) return { applied: 0, total };
  const folder = migrationsFolder();
  let before = start.applied;
  if (database.kind === 'postgres') {
    if (!databaseUrl) throw new Error('postgres migrations need DATABASE_URL');
    const [{ migrate: migratePostgres }, { drizzle: drizzlePostgres }] = await Promise.all([
      import('drizzle-orm/postgres-js/migrator'),
      import('drizzle-orm/postgres-js'),
    ]);
    const lockSql = postgres(databaseUrl, { max: 1, onnotice: () => {}, connection: { application_name: 'revintel-migrate' } });
    try {
      await lockSql`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
      // Counted under the lock: an instance that migrated while we waited is not "applied now".
      before = (await migrationState(database)).applied;
      await migratePostgres(drizzlePostgres(lockSql), { migrationsFolder: folder });
      await lockSql`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`;
    } finally {
      await lockSql.end({ timeout: 5 });
    }
  } else {
    // drizzle's migrators load only when a migration is pending (and PGlite's only on it).
    const [{ migrate: migratePglite }, { drizzle: drizzlePglite }] = await Promise.all([
      import('drizzle-orm/pglite/migrator'),
      import('drizzle-orm/pglite'),
    ]);
    await migratePglite(drizzlePglite(database.pglite!), { migrationsFolder: folder });
  }
  const after = await migrationState(database);
  return { applied: Math.max(0, after.applied - before), total };
}

/** True when every migration this build knows is applied. */
export async function isMigrated(database: Pick<Database, 'db'>): Promise<boolean> {
  return (await migrationState(database)).current;
}
