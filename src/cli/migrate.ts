import { readLockHolder } from '../db/data-dir-lock.ts';
import { runMigrations } from '../db/migrate.ts';
import { socketRunner } from '../admin/socket.ts';
import { openDatabase } from '../server.ts';
import { DATABASE_SETTINGS, helpText, parseCommand } from './args.ts';

const HELP = helpText({
  usage: 'revintel migrate [options]',
  about: `Applies the database migrations embedded in this binary (serve does it at start too). On
PostgreSQL it takes an advisory lock, so it is safe while other instances run or boot. On the
embedded database while serve runs, it reports what the server applied.`,
  settings: DATABASE_SETTINGS,
});

export async function migrateCommand(argv: string[]) {
  const cmd = parseCommand(argv, {}, HELP);
  const config = cmd.config();
  if (!config.databaseUrl && readLockHolder(config.dataDir)?.command === 'serve') {
    const status = await socketRunner(config.dataDir).run('migrations.status', {});
    return cmd.print(
      { applied: 0, total: status.known, via: 'server' },
      () =>
        `the running server owns ${config.dataDir} and applied its migrations at start (${status.applied} applied, ${status.known} in this build)`,
    );
  }
  const database = await openDatabase(config, 'migrate');
  try {
    const result = await runMigrations(database, config.databaseUrl);
    cmd.print(
      { ...result, via: database.kind },
      (r) => `migrations: ${r.applied} applied now, ${r.total} in this build (${database.kind})`,
    );
  } finally {
    await database.close();
  }
}
