// How a restore puts its database in DATA_DIR/pgdata: renames, each atomic, in an order that leaves
// every moment of the swap recognisable, so a crash at any step is settled by whoever next takes
// DATA_DIR (serve, any command opening the embedded database, restore itself):
//   1. the new database is unpacked, recovered and counted in pgdata.restoring, its generated
//      SECRET_KEY written to secret.key.restoring, both flushed to disk;
//   2. pgdata is renamed pgdata.old;
//   3. pgdata.restoring is renamed pgdata — the commit: before it the restore is rolled back (the
//      old database renamed back), after it the restore is finished;
//   4. secret.key.restoring is renamed secret.key;
//   5. pgdata.old is deleted.
// Nothing is deleted that is still the only copy of a database.
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { crashPoint } from '../lib/crash-point.ts';

export const pgdataDir = (dataDir: string) => join(dataDir, 'pgdata');
export const restoringDir = (dataDir: string) => `${pgdataDir(dataDir)}.restoring`;
const asideDir = (dataDir: string) => `${pgdataDir(dataDir)}.old`;
const keyPath = (dataDir: string) => join(dataDir, 'secret.key');
export const restoringKeyPath = (dataDir: string) => `${keyPath(dataDir)}.restoring`;

/** Flushes a file or a directory's entries (the names renames wrote) to disk. */
function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Every file and directory under `dir`, flushed: what PGlite wrote there is on disk before the
 * rename that makes it the database. */
export function fsyncTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) fsyncTree(path);
    else if (entry.isFile()) fsyncPath(path);
  }
  fsyncPath(dir);
}

/** Steps 2 to 5, once pgdata.restoring (and secret.key.restoring, when the backup has a key) is
 * complete and on disk. */
export function swapInRestored(dataDir: string): void {
  const target = pgdataDir(dataDir);
  const aside = asideDir(dataDir);
  if (existsSync(target)) renameSync(target, aside);
  fsyncPath(dataDir);
  crashPoint('restore.aside');
  renameSync(restoringDir(dataDir), target);
  fsyncPath(dataDir);
  crashPoint('restore.swapped');
  finishSwap(dataDir);
}

/** After the commit: the key in place, the old database deleted. */
function finishSwap(dataDir: string): void {
  if (existsSync(restoringKeyPath(dataDir))) {
    renameSync(restoringKeyPath(dataDir), keyPath(dataDir));
    fsyncPath(dataDir);
  }
  const aside = asideDir(dataDir);
  if (!existsSync(aside)) return;
  for (const [i, entry] of readdirSync(aside).entries()) {
    rmSync(join(aside, entry), { recursive: true, force: true });
    if (i === 0) crashPoint('restore.deleting');
  }
  rmSync(aside, { recursive: true, force: true });
}

/**
 * Settles a restore a crash interrupted, for the process that has just taken DATA_DIR's lock (no
 * restore can be running then): rolled back if it had not put its database in place, finished if
 * it had. Says what it did, or null when there was nothing to settle.
 */
export function settleRestore(dataDir: string): string | null {
  const target = pgdataDir(dataDir);
  const aside = asideDir(dataDir);
  const restoring = restoringDir(dataDir);
  if (existsSync(restoring)) {
    // Before the commit: the old database, set aside or not, is the one to keep. The staging
    // directory goes last, so a crash while rolling back is still recognised as before the commit.
    if (!existsSync(target) && existsSync(aside)) renameSync(aside, target);
    rmSync(restoringKeyPath(dataDir), { force: true });
    fsyncPath(dataDir);
    rmSync(restoring, { recursive: true, force: true });
    return `a restore into ${dataDir} was interrupted before its database was put in place: rolled back, the database it held before (if any) is kept`;
  }
  if (!existsSync(aside) && !existsSync(restoringKeyPath(dataDir))) return null;
  if (!existsSync(target)) {
    // Not a state the swap leaves (pgdata is only ever renamed, never deleted): whatever removed
    // pgdata, the database set aside is the only one there is.
    renameSync(aside, target);
    rmSync(restoringKeyPath(dataDir), { force: true });
    fsyncPath(dataDir);
    return `${aside} was the only database in ${dataDir}: renamed back to ${target}`;
  }
  finishSwap(dataDir);
  return `a restore into ${dataDir} was interrupted after its database was put in place: finished`;
}
