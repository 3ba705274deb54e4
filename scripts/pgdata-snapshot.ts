// Writes build/pgdata.tar.gz: an empty PGlite cluster, so a new embedded database starts from it
// instead of running initdb. It depends only on the PGlite version, not on our migrations.
import { existsSync, mkdirSync } from 'node:fs';
import { makeSnapshot } from '../src/db/embedded.ts';

export const SNAPSHOT_PATH = new URL('../build/pgdata.tar.gz', import.meta.url).pathname;

export async function ensureSnapshot(force = false): Promise<void> {
  if (!force && existsSync(SNAPSHOT_PATH)) return;
  mkdirSync(new URL('../build/', import.meta.url).pathname, { recursive: true });
  const tmp = `${SNAPSHOT_PATH}.${process.pid}.tmp`;
  await Bun.write(tmp, await makeSnapshot());
  const { renameSync } = await import('node:fs');
  renameSync(tmp, SNAPSHOT_PATH);
}

if (import.meta.main) {
  const started = performance.now();
  await ensureSnapshot(process.argv.includes('--force'));
  console.log(`snapshot ready at ${SNAPSHOT_PATH} (${Math.round(performance.now() - started)} ms)`);
}
