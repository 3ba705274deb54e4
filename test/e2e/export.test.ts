// Moving an embedded installation to PostgreSQL through the compiled binary (docs/operating.md "Growing past
// one machine"): `revintel export --to` copies every table into an empty database and verifies it;
// a second export into the same database is refused; a server on PostgreSQL with the same
// SECRET_KEY serves the copy — the demo's key works and a connector's sealed secret still checks a
// signature. Runs when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { ensureBinary, get, runCli, startServe, type ServeProcess } from '../helpers/binary.ts';
import { tempDir, TEST_DATABASE_URL } from '../helpers/harness.ts';
import { hubSignature } from '../helpers/tickets.ts';
import { randomBase62 } from '../../src/lib/ids.ts';

const suites = TEST_DATABASE_URL ? ['postgres'] : [];

for (const _ of suites) {
  describe('revintel export --to postgres://…', () => {
    const admin = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    const name = `revintel_export_${randomBase62(8).toLowerCase()}`;
    const cwd = tempDir('revintel-e2e-export-');
    const servers: ServeProcess[] = [];
    beforeAll(async () => {
      ensureBinary();
      await admin.unsafe(`create database ${name}`);
    }, 180_000);
    afterAll(async () => {
      servers.forEach((s) => s.kill('SIGKILL'));
      await Promise.all(servers.map((s) => s.exited));
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
      rmSync(cwd, { recursive: true, force: true });
    });

    test('copies every table and verifies it; refuses a target that is not empty; the copy serves with the same SECRET_KEY', async () => {
      const url = new URL(TEST_DATABASE_URL!);
      url.pathname = `/${name}`;
      url.password = 'a-password-never-printed'; // trust authentication ignores it; the output must not show it
      const env = { DATA_DIR: join(cwd, 'data') };
      const demo = await runCli(['demo', '--customers', '150', '--json'], env, { cwd });
      expect(demo.code).toBe(0);
      const connector = await runCli(
        [
          'connectors',
          'create',
          '--org',
          demo.json.org_id,
          '--platform',
          'generic',
          '--name',
          'Signed desk',
          '--secret',
          'export-webhook-secret',
          '--json',
        ],
        env,
        { cwd },
      );
      expect(connector.code).toBe(0);

      const exported = await runCli(['export', '--to', url.href, '--batch-size', '500', '--json'], env, { cwd });
      expect(exported.code).toBe(0);
      expect(exported.json.tables).toBeGreaterThan(30);
      expect(exported.json.verified).toBe(exported.json.tables);
      const customers = exported.json.copies.find((c: { table: string }) => c.table === 'customers');
      expect(customers.rows).toBe(150);
      expect(exported.stdout + exported.stderr).not.toContain('a-password-never-printed');

      const again = await runCli(['export', '--to', url.href], env, { cwd });
      expect(again.code).toBe(2);
      expect(again.stderr).toContain('not empty');

      const server = await startServe(
        { DATABASE_URL: url.href, SECRET_KEY: readFileSync(join(cwd, 'data', 'secret.key'), 'utf8').trim() },
        { cwd },
      );
      servers.push(server);
      expect((await get(`${server.url}/api/customers?limit=1`, demo.json.secret)).status).toBe(200);
      const body = JSON.stringify({ ticket: { id: 'MOVED-1', subject: 'After the move' } });
      const delivered = await fetch(`${server.url}/api/webhooks/tickets?connectorId=${connector.json.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': hubSignature('export-webhook-secret', body) },
        body,
      });
      expect(delivered.status).toBe(200);
      const forged = await fetch(`${server.url}/api/webhooks/tickets?connectorId=${connector.json.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': hubSignature('another-secret', body) },
        body,
      });
      expect(forged.status).toBe(401);
    }, 120_000);
  });
}
