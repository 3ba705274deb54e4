// Retraining through the compiled binary, where it runs in its own worker thread: a server killed by
// SIGKILL mid-training leaves no model behind and the retrain runs again after the restart, once;
// (PostgreSQL) two servers on one database run the nightly retrain once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import postgres from 'postgres';
import { ensureBinary, runCli, startServe, waitFor, type ServeProcess } from '../helpers/binary.ts';
import { TEST_DATABASE_URL, tempDir, uniqueName } from '../helpers/harness.ts';

const dirs: string[] = [];
const servers: ServeProcess[] = [];
const databases: string[] = [];
afterAll(async () => {
  servers.forEach((s) => s.kill('SIGKILL'));
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  if (TEST_DATABASE_URL && databases.length) {
    const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    for (const name of databases) await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
});
beforeAll(() => {
  ensureBinary();
}, 180_000);

interface Setup {
  env: Record<string, string>;
  cwd: string;
}

const SECRET_KEY = 'e2e-secret-key-0123456789abcdefghijkl';

async function demo(setup: Setup, customers: number): Promise<{ orgId: string; key: string; name: string }> {
  const name = uniqueName('training');
  const made = await runCli(['demo', '--customers', String(customers), '--org', name, '--json'], setup.env, { cwd: setup.cwd });
  if (made.code !== 0) throw new Error(made.stderr);
  return { orgId: made.json.org_id, key: made.json.secret, name };
}

const api = (server: ServeProcess, key: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));

const job = async (setup: Setup, id: string) => {
  const shown = await runCli(['jobs', 'show', id, '--json'], setup.env, { cwd: setup.cwd });
  if (shown.code !== 0) throw new Error(shown.stderr);
  return shown.json as { state: string; attempts: number };
};

async function killMidTraining(setup: Setup) {
  let server = await startServe(setup.env, { cwd: setup.cwd });
  servers.push(server);
  const { key, name } = await demo(setup, 300);
  const asked = await api(server, key, '/api/cfo/predictions/recompute', { retrain: true });
  expect(asked.status).toBe(202);
  const jobId = asked.body.data.job_id as string;
  await waitFor(async () => (await job(setup, jobId)).state === 'running', 60_000, 100);
  server.kill('SIGKILL');
  await server.exited;
  // Nothing of the killed run was kept: the job is still someone's, no model names it.
  expect((await job(setup, jobId)).state).toBe('running');

  server = await startServe(setup.env, { cwd: setup.cwd });
  servers.push(server);
  // The retrain's model is watched through the API (a request), not the CLI: every `jobs show` is a
  // new process, taking CPU from the server it waits for; the job's state is read once it is there.
  const jobModels = async () =>
    ((await api(server, key, '/api/cfo/models?limit=100')).body.data as { status: string; metrics: { job_id?: string } }[]).filter(
      (m) => m.metrics.job_id === jobId,
    );
  await waitFor(async () => (await jobModels()).length > 0, 120_000, 250);
  const done = await waitFor(
    async () => {
      const shown = await job(setup, jobId);
      return shown.state === 'done' && shown;
    },
    120_000,
    500,
  );
  expect(done.attempts).toBe(2);
  expect((await jobModels()).map((m) => m.status)).toEqual(['active']);
  // A backtest from the command line while the server runs (embedded: its fitting thread runs it;
  // one snapshot day is enough to see it go through).
  const report = await runCli(['backtest', '--org', name, '--method', 'cross_validation', '--json'], setup.env, { cwd: setup.cwd });
  expect(report.code).toBe(0);
  expect(report.json).toMatchObject({ status: 'succeeded', method: 'cross_validation', requested_by: 'cli' });
  server.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

describe('retraining in the fitting thread of the binary', () => {
  test('embedded: killed mid-training, no model is left behind; after the restart the retrain runs again and makes one', async () => {
    const cwd = tempDir('revintel-e2e-');
    dirs.push(cwd);
    await killMidTraining({ env: {}, cwd });
  }, 240_000);

  const databaseUrl = TEST_DATABASE_URL;
  if (databaseUrl) {
    /** A database of its own: the nightly run retrains every organisation it holds. */
    async function ownDatabase(): Promise<string> {
      const name = `revintel_e2e_${uniqueName('t')
        .replace(/[^a-z0-9]/gi, '')
        .toLowerCase()}`;
      const admin = postgres(databaseUrl!, { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database ${name}`);
      await admin.end();
      databases.push(name);
      const url = new URL(databaseUrl!);
      url.pathname = `/${name}`;
      return url.toString();
    }

    test('PostgreSQL: killed mid-training, no model is left behind; after the restart the retrain runs again and makes one', async () => {
      const cwd = tempDir('revintel-e2e-');
      dirs.push(cwd);
      const url = await ownDatabase();
      expect((await runCli(['migrate'], { DATABASE_URL: url }, { cwd })).code).toBe(0);
      await killMidTraining({ env: { DATABASE_URL: url, SECRET_KEY }, cwd });
    }, 240_000);

    test('PostgreSQL: two servers on one database run the nightly retrain once', async () => {
      const cwd = tempDir('revintel-e2e-');
      dirs.push(cwd);
      const url = await ownDatabase();
      const setup = { env: { DATABASE_URL: url, SECRET_KEY }, cwd };
      expect((await runCli(['migrate'], setup.env, { cwd })).code).toBe(0);
      const first = await startServe(setup.env, { cwd });
      servers.push(first);
      const orgs = [await demo(setup, 400), await demo(setup, 400)];
      first.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      // The night has come: the schedule the first server registered is due.
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      // The retrains each demo asked for are not the night's: they are put aside.
      await sql`delete from jobs where kind = 'predictions.train'`;
      await sql`delete from prediction_backtests`;
      await sql`update job_schedules set next_run_at = now() where kind = 'predictions.nightly'`;
      const a = await startServe(setup.env, { cwd });
      const b = await startServe(setup.env, { cwd });
      servers.push(a, b);
      const trained = await waitFor(
        async () => {
          const rows = await sql<{ org_id: string; state: string }[]>`select org_id, state from jobs where kind = 'predictions.train'`;
          return rows.length === 2 && rows.every((r) => r.state === 'done') && rows;
        },
        120_000,
        250,
      );
      expect(trained.map((r) => r.org_id).sort()).toEqual(orgs.map((o) => o.orgId).sort());
      const nightly = await sql<{ n: number }[]>`select count(*)::int as n from jobs where kind = 'predictions.nightly'`;
      expect(nightly[0]!.n).toBe(1);
      // One evaluation per organisation, recorded as its latest backtest.
      const backtests = await sql<{ org_id: string }[]>`select org_id from prediction_backtests where requested_by = 'nightly'`;
      expect(backtests.map((r) => r.org_id).sort()).toEqual(orgs.map((o) => o.orgId).sort());
      await sql.end();
      a.kill('SIGTERM');
      b.kill('SIGTERM');
      expect(await a.exited).toBe(0);
      expect(await b.exited).toBe(0);
    }, 240_000);
  }
});
