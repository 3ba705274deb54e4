// An import through the running server on the embedded database (the CLI → the admin socket →
// units): every row arrives exactly once, and the rows cross in batches sized to be short (each
// batch holds the database for every tenant), not in --batch-size blocks. The compiled binary.
import { describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { get, runCli, startServe } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { tempDir } from '../helpers/harness.ts';

const ROWS = 3_000;
const METRICS_TOKEN = 'import-server-metrics-token-0123456789';

const { servers, dirs } = e2eFile();

describe('an import through the running server (embedded)', () => {
  test('writes every row once, in batches that start small and grow at most twofold, whatever --batch-size says', async () => {
    const cwd = tempDir('revintel-e2e-');
    dirs.push(cwd);
    const server = await startServe({ METRICS_TOKEN }, { cwd });
    servers.push(server);
    const org = await runCli(['orgs', 'create', '--name', 'Importer', '--plan', 'enterprise', '--json'], {}, { cwd });
    const key = await runCli(['keys', 'create', '--org', 'Importer', '--name', 'test', '--json'], {}, { cwd });
    const file = join(cwd, 'customers.csv');
    writeFileSync(file, `external_id,name,currency\n${Array.from({ length: ROWS }, (_, i) => `cus-${i},"Company ${i}",EUR`).join('\n')}\n`);

    const first = await runCli(['import', 'customers', file, '--org', org.json.id, '--batch-size', '1000', '--json'], {}, { cwd });
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ rows: ROWS, created: ROWS, updated: 0, rejected: 0 });
    const again = await runCli(['import', 'customers', file, '--org', org.json.id, '--json'], {}, { cwd });
    expect(again.json).toMatchObject({ created: 0, updated: 0, unchanged: ROWS });
    const last = await get(`${server.url}/api/customers/ext:cus-${ROWS - 1}`, key.json.secret);
    expect(((await last.json()) as { data: { name: string } }).data.name).toBe(`Company ${ROWS - 1}`);

    // From 100 rows, at most doubling up to 1,000: 100 + 200 + 400 + 800 + 1,000 + 500 is the
    // fewest batches 3,000 rows can take (three, of 1,000, before).
    const metrics = await (await get(`${server.url}/metrics`, METRICS_TOKEN)).text();
    const batches = Number(/^revintel_unit_duration_seconds_count\{unit="import\.batch"\} (\d+)$/m.exec(metrics)?.[1]);
    expect(batches).toBeGreaterThanOrEqual(2 * 6);
  }, 180_000);
});
