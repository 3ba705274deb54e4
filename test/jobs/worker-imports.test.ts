// The worker thread's module graph holds no Elysia: the HTTP framework is the main thread's, and in a
// Worker its code and heap cost ~5 MB of the idle process's RSS (measured with an empty Worker beside
// one importing only `t`). Job payloads and the models the worker reads build their schemas with
// TypeBox's own `Type` (imported as `t`), which Elysia's routes accept as they are.
import { expect, test } from 'bun:test';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '../..');

test('nothing the worker thread imports loads Elysia', async () => {
  const built = await Bun.build({ entrypoints: [join(ROOT, 'src/jobs/worker.ts')], target: 'bun', metafile: true });
  expect(built.success).toBe(true);
  const inputs = built.metafile?.inputs ?? {};
  expect(Object.keys(inputs).length).toBeGreaterThan(50); // the graph was read, not an empty build
  const importers = Object.entries(inputs)
    .filter(([path, input]) => path.startsWith('src/') && input.imports.some((i) => i.path.includes('node_modules/elysia/')))
    .map(([path]) => path)
    .sort();
  expect(importers).toEqual([]);
});
