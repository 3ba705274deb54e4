// An empty embedded cluster (initdb done, no migration applied), for the tests that migrate a
// database step by step. `PGlite.create()` runs initdb each time (seconds of CPU) and compiles the
// wasm again; here initdb runs once per machine and PGlite version, its cluster kept as a tarball in
// build/ beside the migrated snapshot, and each database is unpacked from it with the process's
// compiled wasm.
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { makeSnapshot, openPgliteDirectory, unpackDataDir } from '../../src/db/embedded.ts';
import { tempDir } from './harness.ts';

const EMPTY_SNAPSHOT_PATH = new URL('../../build/pgdata-empty.tar.gz', import.meta.url).pathname;

const pgliteVersion = async () =>
  (
    JSON.parse(await Bun.file(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url).pathname).text()) as {
      version: string;
    }
  ).version;

async function emptySnapshot(): Promise<Uint8Array<ArrayBuffer>> {
  const versionPath = `${EMPTY_SNAPSHOT_PATH}.version`;
  const version = await pgliteVersion();
  if (!existsSync(EMPTY_SNAPSHOT_PATH) || !existsSync(versionPath) || (await Bun.file(versionPath).text()) !== version) {
    mkdirSync(new URL('../../build/', import.meta.url).pathname, { recursive: true });
    // Written aside then renamed: another test worker may be making it at the same moment.
    const tmp = `${EMPTY_SNAPSHOT_PATH}.${process.pid}.tmp`;
    await Bun.write(tmp, await makeSnapshot(async () => {}));
    renameSync(tmp, EMPTY_SNAPSHOT_PATH);
    await Bun.write(versionPath, version);
  }
  return new Uint8Array(await Bun.file(EMPTY_SNAPSHOT_PATH).arrayBuffer());
}

/** A new, empty cluster in a directory of its own; `dispose` closes it and removes the directory. */
export async function emptyPglite(): Promise<{ pglite: PGlite; dispose(): Promise<void> }> {
  const dir = tempDir('revintel-empty-pglite-');
  unpackDataDir(await emptySnapshot(), dir);
  const pglite = await openPgliteDirectory(dir);
  return {
    pglite,
    dispose: async () => {
      try {
        await pglite.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
