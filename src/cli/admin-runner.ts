// Where an admin command runs. PostgreSQL: on the CLI's own connection. Embedded database: if a
// `serve` process owns DATA_DIR, through its admin socket (the server runs each unit whole);
// otherwise the CLI takes DATA_DIR itself for the duration of the command.
import type { Config } from '../config.ts';
import { connectPostgres, openEmbedded, type Database } from '../db/client.ts';
import { readLockHolder } from '../db/data-dir-lock.ts';
import { isMigrated, runMigrations } from '../db/migrate.ts';
import { localRunner, type UnitRunner } from '../db/units-of-work.ts';
import { socketRunner } from '../admin/socket.ts';
import { adminUnits, type AdminUnits } from '../admin/cli-units.ts';
import { type Settings, settingsOf } from '../settings.ts';

export interface AdminSession {
  runner: UnitRunner<AdminUnits>;
  /** How the command reached the database, for messages. */
  via: 'postgres' | 'embedded' | 'server';
  /** The command's settings, from its configuration (a running server's units use the server's). */
  settings: Settings;
  close(): Promise<void>;
}

const OPERATOR_TIMEOUT_MS = 3_600_000;

export async function openAdminSession(config: Config, command: string): Promise<AdminSession> {
  const settings = settingsOf(config);
  // Another CLI command holding DATA_DIR has no socket: openEmbedded below reports it as busy.
  if (!config.databaseUrl && readLockHolder(config.dataDir)?.command === 'serve') {
    return { runner: socketRunner(config.dataDir), via: 'server', settings, close: async () => {} };
  }
  // An operator's command (a demo load, an import) may rightly run for minutes.
  const bounds = { timeoutMs: OPERATOR_TIMEOUT_MS };
  const database: Database = config.databaseUrl
    ? connectPostgres(config.databaseUrl, 2, bounds)
    : await openEmbedded(config.dataDir, command, bounds);
  try {
    if (database.kind === 'embedded') {
      // Nobody else can be using this database: bring it up to date, as serve would.
      await runMigrations(database, null);
    } else if (!(await isMigrated(database))) {
      // Servers may be running on it: changing the schema is `revintel migrate`'s job alone.
      throw new Error(`the database at DATABASE_URL is not migrated to this version of revintel: run "revintel migrate" first`);
    }
  } catch (error) {
    await database.close();
    throw error;
  }
  return { runner: localRunner(database.db, adminUnits, settings), via: database.kind, settings, close: () => database.close() };
}

export async function withAdminSession<T>(config: Config, command: string, fn: (session: AdminSession) => Promise<T>): Promise<T> {
  const session = await openAdminSession(config, command);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}
