// An import killed with SIGKILL part-way: every committed batch stays, nothing is half-written, the
// server it was talking to carries on, and running the file again completes it without duplicates.
// The compiled binary, on the embedded database (the CLI goes through the running server) and on
// PostgreSQL (the CLI has its own connection).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/db/client.ts';
import { ensureBinary, get, runCli, startServe, waitFor } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { openTestDatabase, TEST_DATABASE_URL, tempDir, type TestDatabase } from '../helpers/harness.ts';

const ROWS = 20_000;
const BATCH = '100';

const { servers, dirs } = e2eFile();

function customersCsv(dir: string): string {
  const path = join(dir, 'customers.csv');
  const lines = ['external_id,name,domain,currency,segment'];
  for (let i = 0; i < ROWS; i++) lines.push(`cus-${i},"Company ${i}, Ltd",c${i}.example.com,EUR,smb`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** Starts an import, waits until `committed()` says part of it is in, kills it with SIGKILL. */
async function importKilledMidway(args: string[], env: Record<string, string>, cwd: string, committed: () => Promise<boolean>) {
  const proc = Bun.spawn([ensureBinary(), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: '/tmp', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  try {
    await waitFor(async () => (await committed()) || proc.exitCode !== null, 60_000);
    expect(proc.exitCode).toBeNull(); // still importing: the kill is mid-way
  } finally {
    proc.kill('SIGKILL');
  }
  expect(await proc.exited).not.toBe(0);
}

describe('an import killed with SIGKILL, then run again (embedded, through the server)', () => {
  test('keeps committed batches, leaves the server working, and completes without duplicates', async () => {
    const cwd = tempDir('revintel-e2e-');
    dirs.push(cwd);
    const server = await startServe({}, { cwd });
    servers.push(server);
    const org = await runCli(
      ['orgs', 'create', '--name', 'Importer', '--plan', 'enterprise', '--limit-per-minute', '100000', '--json'],
      {},
      { cwd },
    );
    const key = await runCli(['keys', 'create', '--org', 'Importer', '--name', 'test', '--json'], {}, { cwd });
    expect(key.code).toBe(0);
    const file = customersCsv(cwd);
    const args = ['import', 'customers', file, '--org', org.json.id, '--batch-size', BATCH, '--json'];

    await importKilledMidway(
      args,
      {},
      cwd,
      async () => (await get(`${server.url}/api/customers/ext:cus-1000`, key.json.secret)).status === 200,
    );
    // The server is not wedged: it answers, and the CLI works through it.
    expect((await get(`${server.url}/readyz`)).status).toBe(200);
    const partial = await runCli(['import', 'customers', file, '--org', org.json.id, '--json'], {}, { cwd });
    expect(partial.code).toBe(0);
    expect(partial.json.rejected).toBe(0);
    expect(partial.json.updated).toBe(0);
    expect(partial.json.unchanged).toBeGreaterThanOrEqual(1001); // what the killed run committed
    expect(partial.json.created).toBeGreaterThan(0);
    expect(partial.json.created + partial.json.unchanged).toBe(ROWS);
    // Every row is there exactly once (external ids are unique, so a third run finds them all).
    const third = await runCli(['import', 'customers', file, '--org', org.json.id, '--json'], {}, { cwd });
    expect(third.json).toMatchObject({ created: 0, updated: 0, unchanged: ROWS, rejected: 0 });
    const last = await get(`${server.url}/api/customers/ext:cus-${ROWS - 1}`, key.json.secret);
    expect(((await last.json()) as any).data.name).toBe(`Company ${ROWS - 1}, Ltd`);
    // Rows cross the admin socket as they are: a metadata value that looks like a time stays as written.
    const ndjson = join(cwd, 'more.ndjson');
    writeFileSync(
      ndjson,
      `${JSON.stringify({ external_id: 'cus-meta', name: 'Meta', currency: 'EUR', metadata: { syncedAt: '2026-01-01T00:00:00Z' } })}\n`,
    );
    expect((await runCli(['import', 'customers', ndjson, '--org', org.json.id, '--json'], {}, { cwd })).json).toMatchObject({ created: 1 });
    const meta = await get(`${server.url}/api/customers/ext:cus-meta`, key.json.secret);
    expect(((await meta.json()) as any).data.metadata).toEqual({ syncedAt: '2026-01-01T00:00:00Z' });
  }, 120_000);
});

describe.skipIf(!TEST_DATABASE_URL)('an import killed with SIGKILL, then run again (postgres)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase('postgres');
  });
  afterAll(() => database?.dispose());

  test('keeps committed batches and completes without duplicates', async () => {
    const dir = tempDir('revintel-e2e-');
    dirs.push(dir);
    const env = { DATABASE_URL: TEST_DATABASE_URL! };
    const org = await runCli(['orgs', 'create', '--name', `Importer ${Date.now()}`, '--plan', 'enterprise', '--json'], env);
    const file = customersCsv(dir);
    const count = async () =>
      rowsOf<{ n: number }>(await database.db.execute(sql`select count(*)::int as n from customers where org_id = ${org.json.id}`))[0]!.n;
    await importKilledMidway(
      ['import', 'customers', file, '--org', org.json.id, '--batch-size', BATCH, '--json'],
      env,
      dir,
      async () => (await count()) >= 1000,
    );
    const committed = await count();
    expect(committed % Number(BATCH)).toBe(0); // whole batches only
    const rerun = await runCli(['import', 'customers', file, '--org', org.json.id, '--json'], env);
    expect(rerun.json).toMatchObject({ rejected: 0, updated: 0 });
    expect(rerun.json.unchanged).toBeGreaterThanOrEqual(committed);
    expect(rerun.json.created + rerun.json.unchanged).toBe(ROWS);
    expect(await count()).toBe(ROWS);
  }, 120_000);
});
