// Backup and restore killed with SIGKILL part-way (docs/operating.md "Backups"), through the compiled binary on
// the embedded database. TEST_CRASH_AT has the command kill itself at a named step, so each step is
// hit exactly. A backup killed mid-copy leaves no obstacle and no data behind once the next backup
// has run, with serve running or not; a restore killed at any step of its swap leaves DATA_DIR with
// the old database or the new one, complete, at the next start — never an empty one.
import { beforeAll, describe, expect, test } from 'bun:test';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBinary, runCli, startServe, type CliResult } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { tempDir } from '../helpers/harness.ts';

const { servers, dirs } = e2eFile();

/** What a command killed by its own SIGKILL exits with. */
const KILLED = 128 + 9;

/** A DATA_DIR with these organisations, the first with a connector (so DATA_DIR generates its key;
 * one is enough, and each command here starts the embedded database afresh). */
async function installation(root: string, orgs: string[]): Promise<string> {
  mkdirSync(root);
  const dataDir = join(root, 'data');
  for (const name of orgs) {
    expect((await runCli(['orgs', 'create', '--name', name, '--plan', 'enterprise'], { DATA_DIR: dataDir }, { cwd: root })).code).toBe(0);
  }
  expect(
    (
      await runCli(
        ['connectors', 'create', '--org', orgs[0]!, '--platform', 'generic', '--name', 'Desk', '--generate-secret'],
        { DATA_DIR: dataDir },
        { cwd: root },
      )
    ).code,
  ).toBe(0);
  return dataDir;
}

const orgNames = (listed: CliResult) => (listed.json as { name: string }[]).map((org) => org.name).sort();

/** A copy of `template` to crash a command on. */
function copyOf(template: string, name: string): { cwd: string; dataDir: string } {
  const cwd = tempDir(`revintel-e2e-${name}-`);
  dirs.push(cwd);
  const dataDir = join(cwd, 'data');
  cpSync(template, dataDir, { recursive: true });
  return { cwd, dataDir };
}

const OLD_ORGS = ['Old Co'];
const NEW_ORGS = ['New Co', 'Newer Co'];
let oldTemplate: string;
let oldKey: string;
let newBackup: string;
let newKey: string;

beforeAll(async () => {
  ensureBinary();
  const root = tempDir('revintel-e2e-backup-crash-');
  dirs.push(root);
  oldTemplate = await installation(join(root, 'old'), OLD_ORGS);
  oldKey = readFileSync(join(oldTemplate, 'secret.key'), 'utf8');
  const newData = await installation(join(root, 'new'), NEW_ORGS);
  newKey = readFileSync(join(newData, 'secret.key'), 'utf8');
  newBackup = join(root, 'new.rvb');
  expect((await runCli(['backup', newBackup], { DATA_DIR: newData }, { cwd: root })).code).toBe(0);
}, 180_000);

describe('a backup killed mid-copy', () => {
  test('while serve runs: the next backup succeeds and removes the dead one’s .partial', async () => {
    const { cwd, dataDir } = copyOf(oldTemplate, 'backup-serve');
    const env = { DATA_DIR: dataDir };
    const server = await startServe(env, { cwd });
    servers.push(server);
    const killed = await runCli(['backup', join(cwd, 'first.rvb')], { ...env, TEST_CRASH_AT: 'backup.copying' }, { cwd });
    expect(killed.code).toBe(KILLED);
    expect(statSync(join(cwd, 'first.rvb.partial')).size).toBeGreaterThan(1024); // it holds data

    const next = await runCli(['backup', join(cwd, 'second.rvb'), '--json'], env, { cwd });
    expect(next.stderr).toBe('');
    expect(next.json).toMatchObject({ via: 'server' });
    expect(readdirSync(cwd).filter((name) => name.endsWith('.partial'))).toEqual([]);
    server.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    const restored = await runCli(['restore', join(cwd, 'second.rvb'), '--json'], { DATA_DIR: join(cwd, 'restored') }, { cwd });
    expect(restored.json.counts['public.organisations']).toBe(OLD_ORGS.length);
  }, 120_000);

  test('with no server: the next backup succeeds and removes the dead one’s .partial', async () => {
    const { cwd, dataDir } = copyOf(oldTemplate, 'backup-offline');
    const env = { DATA_DIR: dataDir };
    const killed = await runCli(['backup', join(cwd, 'first.rvb')], { ...env, TEST_CRASH_AT: 'backup.copying' }, { cwd });
    expect(killed.code).toBe(KILLED);
    expect(statSync(join(cwd, 'first.rvb.partial')).size).toBeGreaterThan(1024);

    const next = await runCli(['backup', join(cwd, 'second.rvb'), '--json'], env, { cwd });
    expect(next.stderr).toBe('');
    expect(next.json).toMatchObject({ via: 'this command' });
    expect(readdirSync(cwd).filter((name) => name.endsWith('.partial'))).toEqual([]);
  }, 120_000);
});

// Before the new database is in place the restore is rolled back; once it is, it is finished.
const STEPS = [
  { step: 'restore.unpacked', holds: 'the old database', orgs: OLD_ORGS, key: () => oldKey, notice: 'rolled back' },
  { step: 'restore.aside', holds: 'the old database', orgs: OLD_ORGS, key: () => oldKey, notice: 'rolled back' },
  { step: 'restore.swapped', holds: 'the new database and its key', orgs: NEW_ORGS, key: () => newKey, notice: 'finished' },
  { step: 'restore.deleting', holds: 'the new database and its key', orgs: NEW_ORGS, key: () => newKey, notice: 'finished' },
] as const;

describe('a restore --force killed during its swap', () => {
  for (const { step, holds, orgs, key, notice } of STEPS) {
    test(`at ${step}: the next start holds ${holds}, complete, and nothing of the swap is left`, async () => {
      const { cwd, dataDir } = copyOf(oldTemplate, step);
      const env = { DATA_DIR: dataDir };
      const killed = await runCli(['restore', newBackup, '--force'], { ...env, TEST_CRASH_AT: step }, { cwd });
      expect(killed.code).toBe(KILLED);

      const listed = await runCli(['orgs', 'list', '--json'], env, { cwd });
      expect(listed.stderr).toContain(
        `was interrupted ${notice === 'finished' ? 'after' : 'before'} its database was put in place: ${notice}`,
      );
      expect(orgNames(listed)).toEqual([...orgs]);
      expect(readFileSync(join(dataDir, 'secret.key'), 'utf8')).toBe(key());
      expect(
        readdirSync(dataDir)
          .filter((name) => name.startsWith('pgdata'))
          .sort(),
      ).toEqual(['pgdata']);
    }, 120_000);
  }

  test('with the old database set aside and the new not yet in, serve starts on the old one', async () => {
    const { cwd, dataDir } = copyOf(oldTemplate, 'aside-serve');
    const env = { DATA_DIR: dataDir };
    expect((await runCli(['restore', newBackup, '--force'], { ...env, TEST_CRASH_AT: 'restore.aside' }, { cwd })).code).toBe(KILLED);
    expect(existsSync(join(dataDir, 'pgdata'))).toBe(false);

    const server = await startServe(env, { cwd });
    servers.push(server);
    const listed = await runCli(['orgs', 'list', '--json'], env, { cwd }); // through the server
    expect(orgNames(listed)).toEqual([...OLD_ORGS]);
    server.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  }, 120_000);

  test('with the old database set aside and the new not yet in, restore run again completes', async () => {
    const { cwd, dataDir } = copyOf(oldTemplate, 'aside-again');
    const env = { DATA_DIR: dataDir };
    expect((await runCli(['restore', newBackup, '--force'], { ...env, TEST_CRASH_AT: 'restore.aside' }, { cwd })).code).toBe(KILLED);

    const again = await runCli(['restore', newBackup, '--force', '--json'], env, { cwd });
    expect(again.stderr).toContain('rolled back');
    expect(again.json).toMatchObject({ replaced: true });
    const listed = await runCli(['orgs', 'list', '--json'], env, { cwd });
    expect(orgNames(listed)).toEqual([...NEW_ORGS]);
    expect(
      readdirSync(dataDir)
        .filter((name) => name.startsWith('pgdata'))
        .sort(),
    ).toEqual(['pgdata']);
  }, 120_000);
});
