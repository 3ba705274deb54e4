// The embedded database: PGlite persisted in DATA_DIR/pgdata, owned by one process (data-dir-lock.ts).
//
// PGlite's wasm and data files are imported `with { type: 'file' }` so `bun build --compile` embeds
// them; from source they resolve to node_modules. A fresh directory is not initdb'd (about 7 s here)
// but unpacked from a snapshot of a migrated cluster made at build time (scripts/pgdata-snapshot.ts).
import { PGlite } from '@electric-sql/pglite';
import pgliteWasmPath from '@electric-sql/pglite/pglite.wasm' with { type: 'file' };
import initdbWasmPath from '@electric-sql/pglite/initdb.wasm' with { type: 'file' };
import pgliteDataPath from '@electric-sql/pglite/pglite.data' with { type: 'file' };
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pgdataDir, settleRestore } from './restore-swap.ts';

export { pgdataDir };

let compiled: Promise<WebAssembly.Module> | null = null;
/** Compiles PGlite's wasm (about 0.3 s), once per process: `serve` starts it before it loads the
 * rest of its code, so the two overlap. */
export function compilePglite(): Promise<WebAssembly.Module> {
  compiled ??= Bun.file(pgliteWasmPath)
    .arrayBuffer()
    .then((bytes) => WebAssembly.compile(bytes));
  return compiled;
}

/** PGlite's code and data; initdb's only when a cluster has to be made from nothing. */
async function pgliteAssets(withInitdb: boolean) {
  const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
    compilePglite(),
    withInitdb ? WebAssembly.compile(await Bun.file(initdbWasmPath).arrayBuffer()) : undefined,
  ]);
  return { pgliteWasmModule, initdbWasmModule, fsBundle: Bun.file(pgliteDataPath) };
}

/**
 * Unpacks a gzipped tarball of a data directory (ustar, as PGlite's dumpDataDir writes it: regular
 * files and directories, short names) into `dir`. Doing it ourselves, rather than through PGlite's
 * loadDataDir, lets a new cluster be started once instead of started, stopped and started again.
 */
export function unpackDataDir(tarball: Uint8Array<ArrayBuffer>, dir: string): void {
  const tar = Bun.gunzipSync(tarball);
  const text = (offset: number, length: number) => {
    const bytes = tar.subarray(offset, offset + length);
    const end = bytes.indexOf(0);
    return new TextDecoder().decode(end < 0 ? bytes : bytes.subarray(0, end));
  };
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const name = text(offset, 100);
    if (!name) break; // the two zero blocks that end the archive
    const size = parseInt(text(offset + 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(tar[offset + 156] ?? 48);
    const prefix = text(offset + 345, 155);
    const relative = `${prefix ? `${prefix}/` : ''}${name}`.replace(/^\/+/, '');
    const target = join(dir, relative);
    if (!target.startsWith(dir) || relative.split('/').includes('..')) throw new Error(`unsafe path in data-dir snapshot: ${relative}`);
    if (type === '5') {
      mkdirSync(target, { recursive: true, mode: 0o700 });
    } else if (type === '0' || type === '\0') {
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      writeFileSync(target, tar.subarray(offset + 512, offset + 512 + size), { mode: 0o600 });
    } else {
      throw new Error(`unexpected entry type "${type}" in data-dir snapshot: ${relative}`);
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
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
 * Opens (creating on first use) the embedded cluster, for the process holding DATA_DIR's lock. A
 * restore a crash interrupted is settled first (restore-swap.ts). A new cluster is prepared in a
 * side directory and renamed into place only once complete, so a crash during the first start
 * leaves nothing half-made behind.
 */
export async function openPglite(dataDir: string, notice: (message: string) => void = () => {}): Promise<PGlite> {
  const target = pgdataDir(dataDir);
  // Compiling PGlite's wasm runs in the background while a new cluster is unpacked.
  const assets = pgliteAssets(false);
  assets.catch(() => {}); // awaited below; an early failure must not go unhandled meanwhile
  const settled = settleRestore(dataDir);
  if (settled) notice(settled);
  if (!existsSync(join(target, 'PG_VERSION'))) {
    // An earlier revintel's restore unpacked into pgdata.restore and deleted pgdata before renaming
    // it in: a crash between the two left the checked database there, and nothing in pgdata.
    const earlierRestore = `${target}.restore`;
    const leftover = existsSync(join(earlierRestore, 'PG_VERSION'))
      ? ` ${earlierRestore} holds the database of a restore that was interrupted: to use it, ${existsSync(target) ? `move ${target} out of DATA_DIR, then ` : ''}rename ${earlierRestore} to ${target}.`
      : '';
    if (existsSync(target) && readdirSync(target).length > 0) {
      // Not ours to delete: someone's files, or a cluster damaged by hand. Moving it away is not
      // the answer: the next start would make a new, empty database in its place.
      throw new Error(
        `${target} exists but holds no PostgreSQL cluster (no PG_VERSION), so revintel will not open it nor make a new one over it.${leftover || ` Restore your latest backup over it (revintel restore FILE --force), or point DATA_DIR elsewhere.`}`,
      );
    }
    if (leftover) throw new Error(`${target} holds no database, and revintel will not make a new, empty one:${leftover}`);
    const staging = `${target}.new`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true, mode: 0o700 });
    const snapshot = await loadSnapshot();
    if (snapshot) {
      unpackDataDir(new Uint8Array(await snapshot.arrayBuffer()), staging);
    } else {
      const fresh = await PGlite.create(staging, await pgliteAssets(true));
      await fresh.close();
    }
    rmSync(target, { recursive: true, force: true });
    renameSync(staging, target);
  }
  return PGlite.create(target, { ...(await assets), postgresqlconf: EMBEDDED_POSTGRESQL_CONF });
}

/** PGlite's default shared_buffers is 128 MB, and all of it is resident from the start (PostgreSQL
 * initialises the whole pool): PGlite alone took 270 MB at 128 MB, 170 at 32 MB, 145 at 16 MB.
 * 16 MB keeps an idle embedded server under 200 MB; the data files are read through the OS's page
 * cache, and 2,000 index lookups plus a scan of a 25 MB table took as long at 16 MB as at 32 MB. */
const EMBEDDED_POSTGRESQL_CONF = ['shared_buffers = 16MB'];

/** Used by the build and the test preload: a new cluster with the migrations of this build
 * applied, as a gzipped tarball. (A snapshot older than the migrations is still correct: serve
 * applies the rest at start.) */
/** An existing cluster in `dir` (a backup being restored, opened where it was unpacked). */
export async function openPgliteDirectory(dir: string): Promise<PGlite> {
  return PGlite.create(dir, { ...(await pgliteAssets(false)), postgresqlconf: EMBEDDED_POSTGRESQL_CONF });
}

export async function makeSnapshot(migrate: (pglite: PGlite) => Promise<void>): Promise<Blob> {
  const pglite = await PGlite.create({ ...(await pgliteAssets(true)) });
  await migrate(pglite);
  const tarball = await pglite.dumpDataDir('gzip');
  await pglite.close();
  return tarball;
}
