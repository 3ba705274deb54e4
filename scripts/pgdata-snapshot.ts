// Writes build/pgdata.tar.gz: an empty PGlite cluster, so a new embedded database starts from it
// instead of running initdb. It depends only on the PGlite version, not on our migrations.
import { existsSync, mkdirSync } from 'node:fs';
import { makeSnapshot } from '../src/db/embedded.ts';

export const SNAPSHOT_PATH = new URL('../build/pgdata.tar.gz', import.meta.url).pathname;

const pgliteVersion = async () =>
  (JSON.parse(await Bun.file(new URL('../node_modules/@electric-sql/pglite/package.json', import.meta.url).pathname).text()) as { version: string }).version;

/** Makes the snapshot unless one made by this PGlite version exists (a cluster from another
 * version would not open). */
export async function ensureSnapshot(force = false): Promise<void> {
  const versionPath = `${SNAPSHOT_PATH}.version`;
  const version = await pgliteVersion();
  if (!force && existsSync(SNAPSHOT_PATH) && existsSync(versionPath) && (await Bun.file(versionPath).text()) === version) return;
  mkdirSync(new URL('../build/', import.meta.url).pathname, { recursive: true });
  const tmp = `${SNAPSHOT_PATH}.${process.pid}.tmp`;
  await Bun.write(tmp, await makeSnapshot());
  const { renameSync } = await import('node:fs');
  renameSync(tmp, SNAPSHOT_PATH);
  await Bun.write(versionPath, version);
}

if (import.meta.main) {
  const started = performance.now();
  await ensureSnapshot(process.argv.includes('--force'));
  console.log(`snapshot ready at ${SNAPSHOT_PATH} (${Math.round(performance.now() - started)} ms)`);
}
