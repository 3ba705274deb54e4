// The CLI a first-time operator meets: every command's --help names each option with what it does
// and its default; backup keeps an existing file unless told; a command that cannot run beside the
// server says what to do instead; usage errors quote cleanly; the demo prints commands that paste
// into any shell; the demo from a Stripe account arrives through the billing sync, with its history.
import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { settingHelp, flagName, SETTING_NAMES } from '../../src/config.ts';
import { lockDataDir } from '../../src/db/data-dir-lock.ts';
import { runCli } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { tempDir } from '../helpers/harness.ts';
import { openEmbedded, queryText } from '../../src/db/client.ts';

// Every command the dispatcher knows (its `case 'name':` lines), so a new command is covered too.
const COMMANDS = [...readFileSync(new URL('../../src/index.ts', import.meta.url), 'utf8').matchAll(/case '([a-z][a-z-]*)':/g)]
  .map((m) => m[1]!)
  .filter((name) => name !== 'help');

const { dirs } = e2eFile();
const scratch = () => {
  const dir = tempDir('revintel-cli-');
  dirs.push(dir);
  return dir;
};

/** The Options section of a help: each option with the text that follows its flag. */
function optionsOf(help: string): Map<string, string> {
  const lines = help.slice(help.indexOf('\nOptions:\n') + 10).split('\n');
  const options = new Map<string, string>();
  let current: string | null = null;
  for (const line of lines) {
    const flag = /^ {2}(?:-\w, )?(--[a-z0-9-]+)(?: \S+)?(.*)$/.exec(line);
    if (flag) options.set((current = flag[1]!), flag[2]!.trim());
    else if (current && /^ {10,}\S/.test(line)) options.set(current, `${options.get(current)} ${line.trim()}`.trim());
    else current = null;
  }
  return options;
}

describe('revintel --help', () => {
  test('every command describes each of its options', async () => {
    const helps = await Promise.all(COMMANDS.map(async (command) => [command, await runCli([command, '--help'], {})] as const));
    for (const [command, result] of helps) {
      expect({ command, code: result.code }).toEqual({ command, code: 0 });
      expect(result.stdout).toStartWith(`Usage: revintel ${command === 'serve' ? '[serve]' : command}`);
      const options = optionsOf(result.stdout);
      expect(options.get('--help')).toBe('this help');
      expect(options.get('--json')).toBeTruthy();
      for (const [flag, description] of options)
        expect({ command, flag, described: description.length > 3 }).toEqual({ command, flag, described: true });
    }
  });

  test('serve lists every setting as its flag, with the variable, the description and the default', async () => {
    const options = optionsOf((await runCli(['serve', '--help'], {})).stdout);
    for (const name of SETTING_NAMES) {
      const { description, default: fallback } = settingHelp(name);
      const shown = options.get(`--${flagName(name)}`);
      expect({ name, shown: shown?.startsWith(description.replace(/\.$/, '').split(' ').slice(0, 3).join(' ')) }).toEqual({
        name,
        shown: true,
      });
      if (fallback !== undefined) expect(shown).toEndWith(`(default: ${fallback})`);
    }
    expect(options.get('--port')).toContain('(default: 3000)');
    const help = (await runCli(['serve', '--help'], {})).stdout;
    expect(help).toContain('  --port PORT ');
    expect(help).toContain('  --data-dir DATA_DIR ');
  });

  test("a command's own options show their defaults; database commands show where the database is", async () => {
    const connectors = optionsOf((await runCli(['connectors', '--help'], {})).stdout);
    expect(connectors.get('--grace')).toContain('(default: 86400, one day)');
    expect(connectors.get('--data-dir')).toContain('(default: ./data)');
    const demo = optionsOf((await runCli(['demo', '--help'], {})).stdout);
    expect(demo.get('--customers')).toContain('(default: 600)');
    expect(demo.get('--seed')).toContain('(default: 42)');
    const backup = optionsOf((await runCli(['backup', '--help'], {})).stdout);
    expect(backup.get('--force')).toContain('replace FILE');
  });
});

describe('usage errors', () => {
  test('an unknown option or a missing value is named once, in balanced quotes', async () => {
    for (const [args, message] of [
      [['keys', 'list', '--frob'], 'unknown option "--frob"'],
      [['keys', 'list', '--org'], 'option "--org" needs a value'],
      [['version', '--json=yes'], 'option "--json" takes no value'],
    ] as const) {
      const result = await runCli([...args], {});
      expect(result.code).toBe(2);
      const first = result.stderr.split('\n')[0]!;
      expect(first).toStartWith(`revintel: ${message}`);
      expect(first.split('"').length % 2).toBe(1);
      expect(first).not.toContain("'");
    }
  });
});

describe('backup, restore and export on a DATA_DIR', () => {
  test('backup refuses an existing FILE without --force, and replaces it with --force', async () => {
    const dir = scratch();
    const file = join(dir, 'nightly.rvb');
    writeFileSync(file, 'the only good backup');
    const refused = await runCli(['backup', file, '--data-dir', join(dir, 'data')], {});
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${file} exists: name another file, or add --force to replace it`);
    expect(readFileSync(file, 'utf8')).toBe('the only good backup');
    expect(existsSync(join(dir, 'data'))).toBe(false); // refused before opening anything

    const replaced = await runCli(['backup', file, '--force', '--data-dir', join(dir, 'data'), '--json'], {});
    expect(replaced.code).toBe(0);
    expect(replaced.json).toMatchObject({ file });
    expect(readFileSync(file).subarray(0, 20).toString()).not.toBe('the only good backup');
  }, 120_000);

  test('restore and export beside a running server advise what they can do: stop it first', async () => {
    const dataDir = join(scratch(), 'data');
    // This process holds DATA_DIR as a server does (the lock is what a second process meets).
    const release = lockDataDir(dataDir, 'serve');
    try {
      const restore = await runCli(['restore', join(dataDir, '..', 'any.rvb'), '--data-dir', dataDir], {});
      expect(restore.code).not.toBe(0);
      expect(restore.stderr).toContain('revintel serve');
      expect(restore.stderr).toContain('Stop the server first: a restore replaces the database it has open');
      expect(restore.stderr).not.toContain('while it serves');

      const exported = await runCli(['export', '--to', 'postgres://postgres@127.0.0.1:1/none', '--data-dir', dataDir], {});
      expect(exported.code).not.toBe(0);
      expect(exported.stderr).toContain('Stop the server first: export copies a database nothing writes to meanwhile');
      expect(exported.stderr).toContain('revintel backup FILE');
      expect(exported.stderr).not.toContain('while it serves');
    } finally {
      release();
    }
  });
});

describe('revintel demo', () => {
  test('prints each URL quoted, so a command pastes into zsh as into bash', async () => {
    const dir = scratch();
    const result = await runCli(['demo', '--customers', '3', '--data-dir', join(dir, 'data')], {
      PUBLIC_URL: 'https://revenue.example.org',
    });
    if (result.code !== 0) throw new Error(result.stderr);
    const commands = result.stdout.split('\n').filter((line) => line.includes('curl '));
    expect(commands.length).toBe(3);
    for (const line of commands) {
      const urls = [...line.matchAll(/(['"]?)(https?:\/\/[^\s'"]+)(['"]?)/g)];
      expect(urls.length).toBe(1);
      const [, open, url, close] = urls[0]!;
      expect({ url, quoted: open === "'" && close === "'" }).toEqual({ url, quoted: true });
      expect(url).toStartWith('https://revenue.example.org/api/');
    }
  }, 180_000);

  test("--billing stripe: customers, contracts and invoices arrive through the backfill, with revisions at Stripe's dates; billing status says what the sync did", async () => {
    const dataDir = join(scratch(), 'data');
    const demo = await runCli(['demo', '--billing', 'stripe', '--customers', '25', '--seed', '3', '--data-dir', dataDir, '--json'], {});
    if (demo.code !== 0) throw new Error(demo.stderr);
    const loaded = JSON.parse(demo.stdout) as { org_id: string; billing_connector_id: string; customers: number; contracts: number };
    expect(loaded).toMatchObject({ customers: 25, contracts: 25 });
    expect(loaded.billing_connector_id).toStartWith('bcn_');

    const shown = await runCli(['billing', 'status', loaded.billing_connector_id, '--data-dir', dataDir, '--json'], {});
    if (shown.code !== 0) throw new Error(shown.stderr);
    const status = JSON.parse(shown.stdout);
    expect(status.events).toMatchObject({ pending: 0, ignored: 0, dead: 0 });
    expect(status.last_sync).toMatchObject({ state: 'done', error: null });
    expect(status.last_sync_outcome.objects.customer).toEqual({ read: 25, created: 25, updated: 0, unchanged: 0 });
    expect(status.last_sync_outcome.objects.subscription).toEqual({ read: 25, created: 25, updated: 0, unchanged: 0 });
    expect(status.last_sync_outcome.skipped).toEqual([]);

    const database = await openEmbedded(dataDir, 'test');
    try {
      const [history] = await queryText<{ contracts: number; from_start: number; ended_with_history: number; invoices: number }>(
        database.db,
        `select count(*)::int as contracts,
                count(*) filter (where exists (select 1 from contract_revisions r where r.contract_id = k.id and r.valid_from = k.start_date))::int as from_start,
                count(*) filter (where k.status = 'ended'
                  and (select count(distinct r.valid_from) from contract_revisions r where r.contract_id = k.id) >= 2)::int as ended_with_history,
                (select count(*)::int from invoices i where i.org_id = $1 and i.contract_id is not null) as invoices
         from contracts k where k.org_id = $1`,
        [loaded.org_id],
      );
      // Every contract holds from the subscription's start; an ended one also reads its end (and notice) on their days.
      expect(history!.contracts).toBe(25);
      expect(history!.from_start).toBe(25);
      expect(history!.ended_with_history).toBeGreaterThan(0);
      expect(history!.invoices).toBeGreaterThan(25);
    } finally {
      await database.close();
    }
  }, 600_000);
});
