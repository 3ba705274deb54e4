// The logger's own output: JSON lines with secrets redacted; info lines leave in one write per turn
// of the event loop and are all out when the process exits, even by process.exit() in the middle
// of a turn; a warning is written before the info lines that follow it are.
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { tempDir } from '../helpers/harness.ts';

const LOG_MODULE = join(import.meta.dir, '../../src/lib/log.ts');

async function runScript(source: string) {
  const file = join(tempDir(), 'script.ts');
  await Bun.write(file, source);
  const proc = Bun.spawn([process.execPath, file], { stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const lines = (text: string) =>
    text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  return { out: lines(stdout), err: lines(stderr), code };
}

describe('logger', () => {
  test('every info line is written, in order, though the process exits in the middle of a turn', async () => {
    const { out, code } = await runScript(`
      import { createLogger } from ${JSON.stringify(LOG_MODULE)};
      const log = createLogger('info');
      for (let i = 0; i < 1000; i++) log.info('line', { n: i });
      await new Promise((resolve) => setImmediate(resolve));
      for (let i = 1000; i < 1500; i++) log.info('line', { n: i });
      process.exit(0);
    `);
    expect(code).toBe(0);
    expect(out.map((line) => line.n)).toEqual(Array.from({ length: 1500 }, (_, i) => i));
  });

  test('warnings go to stderr at once; secrets never reach a line', async () => {
    const { out, err } = await runScript(`
      import { createLogger } from ${JSON.stringify(LOG_MODULE)};
      const log = createLogger('info', { thread: 'main' });
      log.info('before');
      log.warn('careful', { authorization: 'Bearer rvk_abc', note: 'key rvk_abcdef was used' });
      log.debug('not at info');
    `);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ level: 'info', msg: 'before', thread: 'main' });
    expect(err).toHaveLength(1);
    expect(err[0]).toMatchObject({ level: 'warn', msg: 'careful', authorization: '[REDACTED]', note: 'key rvk_[REDACTED] was used' });
  });
});
