// revintel backup FILE / revintel restore FILE (README "Backups"): the embedded database only — on
// PostgreSQL, back up with the server's own tools (pg_dump). A backup is taken by the `serve` that
// holds DATA_DIR, without stopping it; with none running, by this command, which holds DATA_DIR
// meanwhile. A restore never runs beside a server on the same DATA_DIR.
import { resolve } from 'node:path';
import { requestBackup } from '../admin/socket.ts';
import { BackupError, installBackup, snapshotPglite, verifyBackup, writeBackupFile, type BackupManifest } from '../db/backup.ts';
import { openEmbedded } from '../db/client.ts';
import { lockDataDir, readLockHolder } from '../db/data-dir-lock.ts';
import { runMigrations } from '../db/migrate.ts';
import { parseCommand, UsageError } from './args.ts';

const BACKUP_HELP = `
Usage: revintel backup FILE [--data-dir DIR] [--json]

Writes a consistent snapshot of the embedded database in DATA_DIR to FILE (mode 0600), while serve
runs (it pauses writes for the moment the snapshot takes) or not. FILE holds every row and, when
DATA_DIR generated it, the SECRET_KEY that opens the stored secrets: keep it as safe as DATA_DIR.
On PostgreSQL (DATABASE_URL) use pg_dump instead.
`;

const RESTORE_HELP = `
Usage: revintel restore FILE [--data-dir DIR] [--force] [--json]

Checks FILE whole (its checksum; its database opened and every table's rows counted against the
backup's manifest), then puts it in DATA_DIR. A DATA_DIR that already holds a database (or another
generated SECRET_KEY) is replaced only with --force. serve must not be running on DATA_DIR.
`;

const summary = (manifest: BackupManifest) => {
  const rows = Object.values(manifest.counts).reduce((sum, n) => sum + n, 0);
  return { created_at: manifest.created_at, revintel: manifest.revintel, bytes: manifest.pgdata.bytes, tables: Object.keys(manifest.counts).length, rows, secret_key_included: manifest.secret_key !== null };
};

export async function backupCommand(argv: string[]) {
  const cmd = parseCommand(argv, {}, BACKUP_HELP);
  const [file] = cmd.positionals;
  if (!file) throw new UsageError(`backup needs FILE\n${BACKUP_HELP}`);
  const config = cmd.config();
  if (config.databaseUrl) throw new UsageError('backup is for the embedded database; on PostgreSQL use pg_dump (DATABASE_URL is set)');
  const path = resolve(file);
  const started = performance.now();
  let manifest: BackupManifest;
  let via: 'server' | 'this command';
  if (readLockHolder(config.dataDir)?.command === 'serve') {
    manifest = await requestBackup(config.dataDir, path);
    via = 'server';
  } else {
    const database = await openEmbedded(config.dataDir, 'backup', { timeoutMs: 3_600_000 });
    try {
      await runMigrations(database, null);
      manifest = writeBackupFile(path, await snapshotPglite(database.pglite!), config.dataDir);
    } finally {
      await database.close();
    }
    via = 'this command';
  }
  const result = { file: path, via, ms: Math.round(performance.now() - started), ...summary(manifest) };
  cmd.print(result, (r) => `backed up ${r.tables} tables, ${r.rows.toLocaleString('en-US')} rows (${(r.bytes / 1048576).toFixed(1)} MiB) to ${r.file} in ${(r.ms / 1000).toFixed(1)} s${r.secret_key_included ? '; it includes the SECRET_KEY' : ''}`);
}

export async function restoreCommand(argv: string[]) {
  const cmd = parseCommand(argv, { force: { type: 'boolean' } }, RESTORE_HELP);
  const [file] = cmd.positionals;
  if (!file) throw new UsageError(`restore needs FILE\n${RESTORE_HELP}`);
  const config = cmd.config();
  if (config.databaseUrl) throw new UsageError('restore is for the embedded database; on PostgreSQL use pg_restore (DATABASE_URL is set)');
  const started = performance.now();
  // DATA_DIR is held for the whole restore: no server starts on it meanwhile (and none runs now:
  // taking the lock fails while one does).
  const release = lockDataDir(config.dataDir, 'restore');
  try {
    const backup = await verifyBackup(resolve(file));
    const { replaced } = installBackup(config.dataDir, backup, cmd.values.force === true);
    const result = { file: resolve(file), data_dir: config.dataDir, replaced, ms: Math.round(performance.now() - started), ...summary(backup.manifest) };
    cmd.print(result, (r) => `restored ${r.rows.toLocaleString('en-US')} rows in ${r.tables} tables (backup of ${r.created_at}) into ${r.data_dir}${r.replaced ? ', replacing its database' : ''} in ${(r.ms / 1000).toFixed(1)} s`);
  } catch (error) {
    if (error instanceof BackupError) throw new UsageError(error.message);
    throw error;
  } finally {
    release();
  }
}
