// revintel backup FILE / revintel restore FILE (docs/operating.md "Backups"): the embedded database only — on
// PostgreSQL, back up with the server's own tools (pg_dump). A backup is online: the process that
// owns DATA_DIR (the running serve, or this command when none runs) marks its start and its end,
// and this command copies the files in between (db/backup.ts), so the server never waits on the
// copy. A restore never runs beside a server on the same DATA_DIR.
import { resolve } from 'node:path';
import { BackupError, refuseExistingBackup, restoreBackup, writeBackup, type BackupManifest } from '../db/backup.ts';
import { lockDataDir, readLockHolder } from '../db/data-dir-lock.ts';
import { armCrashPoint } from '../lib/crash-point.ts';
import { helpText, parseCommand, UsageError, type OptionSpecs } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const BACKUP_OPTIONS: OptionSpecs = {
  force: { type: 'boolean', description: 'replace FILE if it exists', default: 'an existing FILE is refused' },
};
const BACKUP_HELP = helpText({
  usage: 'revintel backup FILE [--force] [--data-dir DATA_DIR]',
  about: `Writes an online backup of the embedded database in DATA_DIR to FILE (mode 0600), while serve runs
(it pauses for one checkpoint at the start; this command copies the files) or not. FILE holds every
row and, when DATA_DIR generated it, the SECRET_KEY that opens the stored secrets: keep it as safe
as DATA_DIR. On PostgreSQL (DATABASE_URL) use pg_dump instead.`,
  options: BACKUP_OPTIONS,
  settings: ['DATA_DIR'],
});

const RESTORE_OPTIONS: OptionSpecs = {
  force: {
    type: 'boolean',
    description: 'replace the database DATA_DIR holds (or its other generated SECRET_KEY)',
    default: 'a DATA_DIR holding a database is refused',
  },
};
const RESTORE_HELP = helpText({
  usage: 'revintel restore FILE [--force] [--data-dir DATA_DIR]',
  about: `Checks FILE (its checksum), unpacks it beside DATA_DIR's database and opens it there (PostgreSQL's
recovery replays the WAL the backup holds; every table is counted), then puts it in DATA_DIR.
serve must not be running on DATA_DIR. A restore killed part-way is rolled back (or, once its
database is in place, finished) by the next command or serve that opens DATA_DIR.`,
  options: RESTORE_OPTIONS,
  settings: ['DATA_DIR'],
});

const summary = (manifest: BackupManifest) => ({
  created_at: manifest.created_at,
  revintel: manifest.revintel,
  bytes: manifest.pgdata.bytes,
  data_bytes: manifest.pgdata.data_bytes,
  files: manifest.pgdata.files,
  secret_key_included: manifest.secret_key !== null,
});

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

export async function backupCommand(argv: string[]) {
  const cmd = parseCommand(argv, BACKUP_OPTIONS, BACKUP_HELP);
  const [file] = cmd.positionals;
  if (!file) throw new UsageError(`backup needs FILE\n${BACKUP_HELP}`);
  const config = cmd.config();
  if (config.databaseUrl) throw new UsageError('backup is for the embedded database; on PostgreSQL use pg_dump (DATABASE_URL is set)');
  armCrashPoint(config.testCrashAt);
  const path = resolve(file);
  const replace = cmd.values.force === true;
  try {
    if (!replace) refuseExistingBackup(path); // before opening anything; checked again at the end
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const started = performance.now();
  const via = readLockHolder(config.dataDir)?.command === 'serve' ? 'server' : 'this command';
  let manifest: BackupManifest;
  try {
    manifest = await withAdminSession(config, 'backup', (session) =>
      writeBackup(
        path,
        config.dataDir,
        { start: () => session.runner.run('backup.start', { pid: process.pid }), stop: () => session.runner.run('backup.stop', {}) },
        { replace },
      ),
    );
  } catch (error) {
    if (error instanceof BackupError) throw new UsageError(error.message);
    throw error;
  }
  const result = { file: path, via, ms: Math.round(performance.now() - started), ...summary(manifest) };
  cmd.print(
    result,
    (r) =>
      `backed up ${r.files} files (${mib(r.data_bytes)}, ${mib(r.bytes)} compressed) to ${r.file} in ${(r.ms / 1000).toFixed(1)} s${r.secret_key_included ? '; it includes the SECRET_KEY' : ''}`,
  );
}

export async function restoreCommand(argv: string[]) {
  const cmd = parseCommand(argv, RESTORE_OPTIONS, RESTORE_HELP);
  const [file] = cmd.positionals;
  if (!file) throw new UsageError(`restore needs FILE\n${RESTORE_HELP}`);
  const config = cmd.config();
  if (config.databaseUrl) throw new UsageError('restore is for the embedded database; on PostgreSQL use pg_restore (DATABASE_URL is set)');
  armCrashPoint(config.testCrashAt);
  const started = performance.now();
  // DATA_DIR is held for the whole restore: no server starts on it meanwhile (and none runs now:
  // taking the lock fails while one does).
  const release = lockDataDir(config.dataDir, 'restore');
  try {
    const { manifest, counts, replaced, settled } = await restoreBackup(resolve(file), config.dataDir, cmd.values.force === true);
    if (settled) process.stderr.write(`revintel: ${settled}\n`);
    const rows = Object.values(counts).reduce((sum, n) => sum + n, 0);
    const result = {
      file: resolve(file),
      data_dir: config.dataDir,
      replaced,
      ms: Math.round(performance.now() - started),
      tables: Object.keys(counts).length,
      rows,
      counts,
      ...summary(manifest),
    };
    cmd.print(
      result,
      (r) =>
        `restored ${r.rows.toLocaleString('en-US')} rows in ${r.tables} tables (backup of ${r.created_at}) into ${r.data_dir}${r.replaced ? ', replacing its database' : ''} in ${(r.ms / 1000).toFixed(1)} s`,
    );
  } catch (error) {
    if (error instanceof BackupError) throw new UsageError(error.message);
    throw error;
  } finally {
    release();
  }
}
