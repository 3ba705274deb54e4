// Backups of the embedded database through the compiled binary (docs/operating.md "Backups"): `revintel
// backup` while serve takes a burst of ticket webhooks — the server goes on answering — then the
// server is killed; `revintel restore` into a new directory replays the backup's WAL, holds every
// event acknowledged before the backup began, and serves them; a damaged file is refused before
// DATA_DIR is touched, and an occupied DATA_DIR is replaced only with --force. A backup taken with
// no server running is made by the command itself.
import { describe, expect, test } from 'bun:test';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { get, runCli, startServe } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { burst } from '../helpers/burst.ts';
import { tempDir } from '../helpers/harness.ts';

const { servers, dirs } = e2eFile();

describe('backup and restore of the embedded database', () => {
  test('a backup during a webhook burst holds every event acknowledged before it began; restored elsewhere, they are all there', async () => {
    const cwd = tempDir('revintel-e2e-backup-');
    dirs.push(cwd);
    const env = { DATA_DIR: join(cwd, 'data') };
    const server = await startServe(env, { cwd });
    servers.push(server);
    expect((await runCli(['orgs', 'create', '--name', 'Backed Up', '--plan', 'enterprise'], env, { cwd })).code).toBe(0);
    const key = (await runCli(['keys', 'create', '--org', 'Backed Up', '--name', 'k', '--json'], env, { cwd })).json.secret as string;
    const connector = (
      await runCli(['connectors', 'create', '--org', 'Backed Up', '--platform', 'generic', '--name', 'Desk', '--json'], env, { cwd })
    ).json.id as string;

    // The backup starts when the 300th delivery is acknowledged: those 300 came before it.
    const file = join(cwd, 'nightly.rvb');
    let backup: Promise<Awaited<ReturnType<typeof runCli>>> | null = null;
    const acked = await burst([server.url], connector, 0, 1200, 16, (count) => {
      if (count === 300) backup = runCli(['backup', file, '--json'], env, { cwd });
    });
    const result = await backup!;
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ file, via: 'server' });
    expect(acked.size).toBe(1200); // the server answered every delivery while it backed up
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const firstAcked = [...acked.keys()].slice(0, 300); // the map keeps the order of the answers
    server.kill('SIGKILL');
    await server.exited;

    // Restored into a new directory, while nothing runs there.
    const restoredEnv = { DATA_DIR: join(cwd, 'restored') };
    const restored = await runCli(['restore', file, '--json'], restoredEnv, { cwd });
    expect(restored.code).toBe(0);
    expect(restored.json).toMatchObject({ replaced: false, files: result.json.files, bytes: result.json.bytes });
    expect(restored.json.counts['public.ticket_events']).toBeGreaterThanOrEqual(300);
    expect(restored.json.counts['public.organisations']).toBe(1);
    const listed = await runCli(['events', 'list', '--connector', connector, '--limit', '10000', '--json'], restoredEnv, { cwd });
    expect(listed.code).toBe(0);
    const stored = new Set((listed.json as { id: string }[]).map((e) => e.id));
    const missing = firstAcked.filter((ticket) => !stored.has(acked.get(ticket)!));
    expect(missing).toEqual([]);
    expect(stored.size).toBeGreaterThanOrEqual(300);
    expect(stored.size).toBeLessThanOrEqual(1200);
    // The restored installation serves: the key works, the events are processed.
    const again = await startServe(restoredEnv, { cwd });
    servers.push(again);
    expect((await get(`${again.url}/api/me`, key)).status).toBe(200);
    again.kill('SIGTERM');
    expect(await again.exited).toBe(0);

    // An occupied DATA_DIR is replaced only with --force; a damaged file never reaches it.
    const occupied = await runCli(['restore', file], restoredEnv, { cwd });
    expect(occupied.code).toBe(2);
    expect(occupied.stderr).toContain('--force');
    const bytes = readFileSync(file);
    for (const [name, at] of [
      ['payload', Math.floor(bytes.length / 2)],
      ['manifest', bytes.length - 200],
    ] as const) {
      const damaged = join(cwd, `damaged-${name}.rvb`);
      const copy = Buffer.from(bytes);
      copy[at] = copy[at]! ^ 0xff;
      writeFileSync(damaged, copy);
      const refused = await runCli(['restore', damaged, '--force'], restoredEnv, { cwd });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`damaged: its ${name === 'payload' ? 'database' : 'manifest'} does not match its checksum`);
    }
    const truncated = join(cwd, 'truncated.rvb');
    writeFileSync(truncated, bytes.subarray(0, bytes.length - 1000));
    expect((await runCli(['restore', truncated, '--force'], restoredEnv, { cwd })).stderr).toContain('truncated');
    const forced = await runCli(['restore', file, '--force', '--json'], restoredEnv, { cwd });
    expect(forced.json).toMatchObject({ replaced: true });

    // With no server on it, the command backs DATA_DIR up itself; that copy restores too.
    const offline = join(cwd, 'offline.rvb');
    const quiet = await runCli(['backup', offline, '--json'], restoredEnv, { cwd });
    expect(quiet.code).toBe(0);
    expect(quiet.json).toMatchObject({ via: 'this command' });
    const third = await runCli(['restore', offline, '--json'], { DATA_DIR: join(cwd, 'third') }, { cwd });
    expect(third.code).toBe(0);
    expect(third.json.counts).toEqual(forced.json.counts);
  }, 120_000);
});
