// The embedded database: one owner per DATA_DIR, data that survives a restart, a stale lock left by
// a killed process taken over.
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEmbedded } from '../../src/db/client.ts';
import { DataDirBusyError, lockPath, readLockHolder } from '../../src/db/data-dir-lock.ts';
import { isMigrated, runMigrations } from '../../src/db/migrate.ts';
import { createOrg, listOrgs } from '../../src/modules/orgs/service.ts';
import { tempDir } from '../helpers/harness.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const newDir = () => {
  const dir = tempDir();
  dirs.push(dir);
  return dir;
};

describe('embedded database', () => {
  test('a second opener of the same DATA_DIR is refused, naming the directory and the holder', async () => {
    const dir = newDir();
    const first = await openEmbedded(dir, 'serve');
    try {
      const error = await openEmbedded(dir, 'orgs list').then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DataDirBusyError);
      expect((error as Error).message).toContain(dir);
      expect((error as Error).message).toContain(`process ${process.pid}`);
      expect((error as Error).message).toContain('revintel serve');
    } finally {
      await first.close();
    }
    expect(readLockHolder(dir)).toBeNull();
    const again = await openEmbedded(dir, 'serve');
    await again.close();
  });

  test('another process holding DATA_DIR is named; when it dies, however it dies, the directory is free', async () => {
    const dir = newDir();
    const holder = Bun.spawn(
      [
        'bun',
        '-e',
        `const { lockDataDir } = await import(${JSON.stringify(new URL('../../src/db/data-dir-lock.ts', import.meta.url).pathname)}); lockDataDir(${JSON.stringify(dir)}, 'serve'); console.log('locked'); await Bun.sleep(60000);`,
      ],
      { stdout: 'pipe', stderr: 'inherit' },
    );
    const reader = holder.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('locked');
    const error = await openEmbedded(dir, 'serve').then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DataDirBusyError);
    expect((error as Error).message).toContain(`process ${holder.pid}`);
    expect(readLockHolder(dir)?.pid).toBe(holder.pid);
    holder.kill('SIGKILL');
    await holder.exited;
    expect(readLockHolder(dir)).toBeNull();
    const database = await openEmbedded(dir, 'serve');
    await database.close();
  });

  test('data survives a restart', async () => {
    const dir = newDir();
    const first = await openEmbedded(dir, 'serve');
    await runMigrations(first, null);
    await first.db.transaction((tx) => createOrg(tx as never, { name: 'Persisted Ltd', plan: 'enterprise', actor: 'test' }));
    await first.close();
    const second = await openEmbedded(dir, 'serve');
    try {
      expect((await runMigrations(second, null)).applied).toBe(0);
      expect((await listOrgs(second.db)).map((o) => o.name)).toEqual(['Persisted Ltd']);
    } finally {
      await second.close();
    }
  });

  test('a lock file left behind (naming a dead process, or another host) does not block', async () => {
    const dir = newDir();
    const first = await openEmbedded(dir, 'serve');
    await first.close();
    // what a container killed on another host leaves on a shared volume: a file, no lock held
    writeFileSync(
      lockPath(dir),
      JSON.stringify({ pid: 1, hostname: 'some-old-container', command: 'serve', since: '2026-01-01T00:00:00Z' }),
    );
    const second = await openEmbedded(dir, 'serve');
    expect(JSON.parse(readFileSync(lockPath(dir), 'utf8')).pid).toBe(process.pid);
    await second.close();
  });

  test('a new directory is prepared aside, renamed into place, and starts migrated', async () => {
    const dir = newDir();
    const database = await openEmbedded(dir, 'serve');
    try {
      expect(existsSync(join(dir, 'pgdata', 'PG_VERSION'))).toBe(true);
      expect(existsSync(join(dir, 'pgdata.new'))).toBe(false);
      expect(await isMigrated(database)).toBe(true); // the snapshot carries this build's migrations
    } finally {
      await database.close();
    }
  });

  test('a pgdata directory with something else in it is refused, never deleted', async () => {
    const dir = newDir();
    mkdirSync(join(dir, 'pgdata'), { recursive: true });
    writeFileSync(join(dir, 'pgdata', 'precious.txt'), 'not a cluster');
    const error = await openEmbedded(dir, 'serve').then(
      () => null,
      (e: unknown) => e,
    );
    expect(String((error as Error)?.message)).toContain('holds no PostgreSQL cluster');
    expect(readFileSync(join(dir, 'pgdata', 'precious.txt'), 'utf8')).toBe('not a cluster');
    expect(readLockHolder(dir)).toBeNull();
  });

  test('the refusal of a pgdata that is no cluster advises what keeps the data, not moving it away (a new, empty database would follow)', async () => {
    const dir = newDir();
    mkdirSync(join(dir, 'pgdata'), { recursive: true });
    writeFileSync(join(dir, 'pgdata', 'global'), 'half of a cluster');
    const error = await openEmbedded(dir, 'serve').then(
      () => null,
      (e: unknown) => e,
    );
    expect(String((error as Error)?.message)).toContain('revintel restore FILE --force');
    expect(String((error as Error)?.message)).not.toContain('move it away');
  });

  test('no pgdata, but the database an earlier restore left in pgdata.restore: refused, no empty database made over it', async () => {
    const dir = newDir();
    mkdirSync(join(dir, 'pgdata.restore'), { recursive: true });
    writeFileSync(join(dir, 'pgdata.restore', 'PG_VERSION'), '17\n');
    const error = await openEmbedded(dir, 'serve').then(
      () => null,
      (e: unknown) => e,
    );
    expect(String((error as Error)?.message)).toContain(`rename ${join(dir, 'pgdata.restore')} to ${join(dir, 'pgdata')}`);
    expect(existsSync(join(dir, 'pgdata'))).toBe(false);
  });
});
