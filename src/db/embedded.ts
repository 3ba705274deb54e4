// The embedded database: PGlite persisted in DATA_DIR/pgdata, owned by one process (data-dir-lock.ts).
//
// PGlite's wasm and data files are imported `with { type: 'file' }` so `bun build --compile` embeds
// them; from source they resolve to node_modules. A fresh directory is not initdb'd (about 7 s here)
// but unpacked from a snapshot of an empty cluster made at build time (scripts/pgdata-snapshot.ts),
// which takes about half a second.
import { PGlite } from '@electric-sql/pglite';
import pgliteWasmPath from '@electric-sql/pglite/pglite.wasm' with { type: 'file' };
import initdbWasmPath from '@electric-sql/pglite/initdb.wasm' with { type: 'file' };
import pgliteDataPath from '@electric-sql/pglite/pglite.data' with { type: 'file' };
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export const pgdataDir = (dataDir: string) => join(dataDir, 'pgdata');

async function pgliteAssets() {
  const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
    WebAssembly.compile(await Bun.file(pgliteWasmPath).arrayBuffer()),
    WebAssembly.compile(await Bun.file(initdbWasmPath).arrayBuffer()),
  ]);
  return { pgliteWasmModule, initdbWasmModule, fsBundle: Bun.file(pgliteDataPath) };
}

/** The snapshot is a build product: present in the binary and after `bun run snapshot` (the test
 * preload makes it); a source checkout without it falls back to initdb. */
async function loadSnapshot(): Promise<Blob | undefined> {
  try {
    const { snapshotPath } = await import('./snapshot-asset.ts');
    const file = Bun.file(snapshotPath);
    return (await file.exists()) ? file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Opens (creating on first use) the embedded cluster. A new cluster is prepared in a side directory
 * and renamed into place only once complete, so a crash during the first start leaves nothing
 * half-made behind.
 */
export async function openPglite(dataDir: string): Promise<PGlite> {
  const target = pgdataDir(dataDir);
  const assets = await pgliteAssets();
  if (!existsSync(join(target, 'PG_VERSION'))) {
    const staging = `${target}.new`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true, mode: 0o700 });
    const fresh = await PGlite.create(staging, { ...assets, loadDataDir: await loadSnapshot() });
    await fresh.close();
    rmSync(target, { recursive: true, force: true });
    renameSync(staging, target);
  }
  return PGlite.create(target, assets);
}

/** Used by the build and the test preload: an empty, initdb'd cluster as a gzipped tarball. */
export async function makeSnapshot(): Promise<Blob> {
  const pglite = await PGlite.create({ ...(await pgliteAssets()) });
  const tarball = await pglite.dumpDataDir('gzip');
  await pglite.close();
  return tarball;
}
