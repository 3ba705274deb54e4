// scripts/import-cycles.ts on a folder made here: which imports close a cycle, what --runtime leaves
// out, and --max's exit code.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const SCRIPT = join(import.meta.dir, '../../scripts/import-cycles.ts');
const dir = mkdtempSync(join(tmpdir(), 'import-cycles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const files: Record<string, string> = {
  // a → b → a, at run time.
  'a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
  'b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
  // c → d/e → c, the way back only through types.
  'c.ts': "export { e } from './d/e.ts';\nexport type C = number;\n",
  'd/e.ts': "import type { C } from '../c.ts';\nexport const e = (x: C) => x;\n",
  // Comments and packages close nothing.
  'f.ts': "// import { g } from './g.ts';\nimport { t } from 'elysia';\nexport const f = t;\n",
  'g.ts': "import { f } from './f.ts';\nexport const g = f;\n",
};
for (const [name, text] of Object.entries(files)) {
  mkdirSync(dirname(join(dir, name)), { recursive: true });
  writeFileSync(join(dir, name), text);
}

function run(...args: string[]) {
  const result = Bun.spawnSync(['bun', SCRIPT, '--dir', dir, ...args]);
  return { code: result.exitCode, lines: result.stdout.toString().trim().split('\n') };
}

describe('import-cycles', () => {
  test('every cycle is printed once, type-only imports included', () => {
    const { code, lines } = run();
    expect(code).toBe(0);
    expect(lines.slice(0, -1).sort()).toEqual(['a.ts → b.ts → a.ts', 'c.ts → d/e.ts → c.ts']);
    expect(lines.at(-1)).toStartWith('2 import cycles between files in');
  });

  test('--runtime leaves out the cycle closed only by a type', () => {
    const { lines } = run('--runtime');
    expect(lines.slice(0, -1)).toEqual(['a.ts → b.ts → a.ts']);
    expect(lines.at(-1)).toStartWith('1 import cycles');
  });

  test('--max N exits 1 above N and 0 at N', () => {
    expect(run('--max', '1').code).toBe(1);
    expect(run('--max', '2').code).toBe(0);
  });
});
