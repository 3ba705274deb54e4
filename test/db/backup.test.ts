// Backups in-process (the binary's round trip is test/e2e/backup.test.ts): rows written between
// the backup's start and stop are restored (the WAL replayed), the backup's own session is ended
// when the copy fails, and a backup from a newer build (more migrations than this one knows) is
// refused before DATA_DIR is touched.
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openEmbedded, type Database } from '../../src/db/client.ts';
import { BackupError, restoreBackup, startBackup, stopBackup, writeBackup, type BackupProtocol } from '../../src/db/backup.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { pgdataDir } from '../../src/db/embedded.ts';
import { tempDir } from '../helpers/harness.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { adminUnits } from '../../src/admin/cli-units.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function installation(): Promise<{ dir: string; database: Database; protocol: BackupProtocol }> {
  const dir = tempDir('revintel-backup-');
  dirs.push(dir);
  const database = await openEmbedded(join(dir, 'data'), 'test');
  await runMigrations(database, null);
  // Statements on their own, outside a transaction: a failed one leaves nothing to roll back.
  const session = {
    query: async (text: string) => (await database.pglite!.query<Record<string, unknown>>(text)).rows,
    attempt: <T>(work: () => Promise<T>) => work(),
  };
  return { dir, database, protocol: { start: () => startBackup(session, process.pid), stop: () => stopBackup(session) } };
}

describe('backups of the embedded database', () => {
  test('rows committed while the files are copied are in the restored database', async () => {
    const { dir, database, protocol } = await installation();
    await database.pglite!.exec(`create table public.probe (id int primary key); insert into public.probe select generate_series(1, 1000)`);
    const file = join(dir, 'a.rvb');
    await writeBackup(file, join(dir, 'data'), {
      start: protocol.start,
      // Written after the start, before the stop: only the WAL carries them.
      stop: async () => {
        await database.pglite!.exec(`insert into public.probe select generate_series(1001, 1500)`);
        return protocol.stop();
      },
    });
    await database.close();
    const restored = await restoreBackup(file, join(dir, 'restored'), false);
    expect(restored.counts['public.probe']).toBe(1500);
    expect(restored.replaced).toBe(false);
  }, 60_000);

  test('a failed copy ends the backup, so the next one can start', async () => {
    const { dir, database, protocol } = await installation();
    const failing: BackupProtocol = { start: protocol.start, stop: async () => Promise.reject(new Error('the copy broke')) };
    await expect(writeBackup(join(dir, 'b.rvb'), join(dir, 'data'), failing)).rejects.toThrow('the copy broke');
    expect(existsSync(join(dir, 'b.rvb.partial'))).toBe(false);
    // pg_backup_stop was not reached by the failing protocol: the next start ends what is left.
    await writeBackup(join(dir, 'c.rvb'), join(dir, 'data'), protocol);
    expect(existsSync(join(dir, 'c.rvb'))).toBe(true);
    await database.close();
  }, 60_000);

  test('a backup interrupted by SIGTERM removes its .partial and ends the backup on the database', async () => {
    const { dir, database, protocol } = await installation();
    const file = join(dir, 'd.rvb');
    let signalled = false;
    const interrupted: BackupProtocol = {
      start: protocol.start,
      // The signal comes while the files are copied; the copy then waits for nothing more.
      stop: () => {
        if (signalled) return protocol.stop();
        signalled = true;
        return new Promise((_, reject) => {
          process.once('SIGTERM', () => reject(new Error('the copy was abandoned')));
          process.kill(process.pid, 'SIGTERM');
        });
      },
    };
    await expect(writeBackup(file, join(dir, 'data'), interrupted)).rejects.toThrow('interrupted by SIGTERM: no backup was written');
    expect(existsSync(`${file}.partial`)).toBe(false);
    expect(existsSync(file)).toBe(false);
    await expect(database.pglite!.query('select pg_backup_stop(false)')).rejects.toThrow('backup is not in progress');
    await database.close();
  }, 60_000);

  test('a backup left open in the server session by a command that died is ended by the next command', async () => {
    const { database } = await installation();
    // The units as the server runs them over its admin socket: each in a transaction, through
    // drizzle, which wraps the database's errors in its own.
    const units = localRunner(database.db, adminUnits, DEFAULT_SETTINGS);
    const dead = Bun.spawn(['true']);
    await dead.exited;
    await units.run('backup.start', { pid: dead.pid });
    const started = await units.run('backup.start', { pid: process.pid });
    expect(started.start_lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const stopped = await units.run('backup.stop', {});
    expect(stopped.labelfile).toContain(started.start_lsn);
    await database.close();
  }, 60_000);

  test('a backup made by a newer build is refused, and DATA_DIR is left as it was', async () => {
    const { dir, database, protocol } = await installation();
    await database.pglite!.exec(`insert into drizzle.__drizzle_migrations (hash, created_at) values ('from-the-future', 4102444800000)`);
    const file = join(dir, 'newer.rvb');
    await writeBackup(file, join(dir, 'data'), protocol);
    await database.close();
    const target = join(dir, 'elsewhere');
    const refused = restoreBackup(file, target, false);
    await expect(refused).rejects.toBeInstanceOf(BackupError);
    await expect(restoreBackup(file, target, false)).rejects.toThrow('newer revintel');
    expect(existsSync(pgdataDir(target))).toBe(false);
    expect(existsSync(`${pgdataDir(target)}.restoring`)).toBe(false);
  }, 60_000);
});
