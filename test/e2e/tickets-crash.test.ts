// The ticket webhook through the compiled binary: a burst of deliveries with the server killed by
// SIGKILL part-way, then restarted — every acknowledged event is processed, each ticket once; and
// (PostgreSQL) two servers on one database sharing a burst without processing anything twice.
import { describe, expect, test } from 'bun:test';
import { runCli, startServe, waitFor } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { TEST_DATABASE_URL, tempDir, uniqueName } from '../helpers/harness.ts';
import { burst } from '../helpers/burst.ts';

const { servers, dirs } = e2eFile();

interface Setup {
  env: Record<string, string>;
  cwd: string;
}

async function makeConnector({ env, cwd }: Setup): Promise<{ org: string; connector: string }> {
  const org = uniqueName('tickets');
  const made = await runCli(['orgs', 'create', '--name', org, '--plan', 'enterprise', '--json'], env, { cwd });
  expect(made.code).toBe(0);
  const connector = await runCli(['connectors', 'create', '--org', org, '--platform', 'generic', '--name', 'Burst desk', '--json'], env, {
    cwd,
  });
  expect(connector.code).toBe(0);
  return { org, connector: connector.json.id };
}

interface EventRow {
  id: string;
  status: string;
  attempts: number;
  ticket_ids: string[] | null;
}

const events = async ({ env, cwd }: Setup, connector: string): Promise<EventRow[]> => {
  const listed = await runCli(['events', 'list', '--connector', connector, '--limit', '10000', '--json'], env, { cwd });
  if (listed.code !== 0) throw new Error(listed.stderr);
  return listed.json;
};

async function crashAndRecover(setup: Setup) {
  let server = await startServe(setup.env, { cwd: setup.cwd });
  servers.push(server);
  const { connector } = await makeConnector(setup);
  let killed = false;
  const acked = await burst([server.url], connector, 0, 1500, 32, (count) => {
    if (count >= 300 && !killed) {
      killed = true;
      server.kill('SIGKILL');
    }
  });
  await server.exited;
  expect(killed).toBe(true);
  expect(acked.size).toBeGreaterThanOrEqual(300);
  expect(acked.size).toBeLessThan(1500);

  server = await startServe(setup.env, { cwd: setup.cwd });
  servers.push(server);
  // Every acknowledged event is done after the restart. (Polled every half second: each look is a
  // CLI process, and back to back they took the CPU the server under test needed to get there.)
  const done = await waitFor(
    async () => {
      const rows = await events(setup, connector);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return [...acked.values()].every((id) => byId.get(id)?.status === 'done') ? rows : null;
    },
    60_000,
    500,
  );
  const byId = new Map(done.map((r) => [r.id, r]));
  for (const [ticketId, eventId] of acked) {
    const event = byId.get(eventId)!;
    expect({ ticketId, status: event.status, tickets: event.ticket_ids?.length }).toEqual({ ticketId, status: 'done', tickets: 1 });
  }
  // Each ticket exists once: as many tickets as distinct events stored, and every acknowledged one among them.
  const ticketIds = done.flatMap((r) => r.ticket_ids ?? []);
  expect(new Set(ticketIds).size).toBe(ticketIds.length);
  expect(done.length).toBeGreaterThanOrEqual(acked.size);
  server.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

describe('a burst of ticket webhooks with the server killed by SIGKILL', () => {
  test('embedded: every acknowledged event is processed after the restart, each ticket once', async () => {
    const cwd = tempDir('revintel-e2e-');
    dirs.push(cwd);
    await crashAndRecover({ env: {}, cwd });
  }, 120_000);

  const databaseUrl = TEST_DATABASE_URL;
  if (databaseUrl) {
    test('PostgreSQL: every acknowledged event is processed after the restart, each ticket once', async () => {
      const cwd = tempDir('revintel-e2e-');
      dirs.push(cwd);
      await crashAndRecover({ env: { DATABASE_URL: databaseUrl, SECRET_KEY: 'e2e-secret-key-0123456789abcdefghijkl' }, cwd });
    }, 120_000);

    test('PostgreSQL: two servers on one database share a burst and process every event once', async () => {
      const cwd = tempDir('revintel-e2e-');
      dirs.push(cwd);
      const setup = { env: { DATABASE_URL: databaseUrl, SECRET_KEY: 'e2e-secret-key-0123456789abcdefghijkl' }, cwd };
      const a = await startServe(setup.env, { cwd });
      const b = await startServe(setup.env, { cwd });
      servers.push(a, b);
      const { connector } = await makeConnector(setup);
      const acked = await burst([a.url, b.url], connector, 0, 1000, 32);
      expect(acked.size).toBe(1000);
      const rows = await waitFor(
        async () => {
          const listed = await events(setup, connector);
          return listed.length === 1000 && listed.every((r) => r.status === 'done') ? listed : null;
        },
        60_000,
        500,
      );
      // Claimed once each: no event was processed by both servers.
      expect(rows.filter((r) => r.attempts !== 1)).toEqual([]);
      const ticketIds = rows.flatMap((r) => r.ticket_ids ?? []);
      expect(ticketIds).toHaveLength(1000);
      expect(new Set(ticketIds).size).toBe(1000);
      a.kill('SIGTERM');
      b.kill('SIGTERM');
      expect(await a.exited).toBe(0);
      expect(await b.exited).toBe(0);
    }, 120_000);
  }
});
