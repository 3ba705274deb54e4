// Backups of the embedded database (README "Backups"): `revintel backup FILE` asks the process that
// owns DATA_DIR for a snapshot — PGlite's data directory as a tarball, taken while no transaction
// is open (it waits for the one in progress; requests queue while it copies: 40 s at 100,000 demo
// customers) — and writes it with a manifest: the row count of every table, a SHA-256 of the
// tarball and DATA_DIR's generated SECRET_KEY, without which the sealed secrets in it could not be
// opened. `revintel restore FILE` checks the file whole (checksum, then the snapshot opened in
// memory and every count compared) before it touches DATA_DIR, and never replaces a database
// without --force.
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { VERSION } from '../version.ts';
import { openPgliteFromTarball, pgdataDir, unpackDataDir } from './embedded.ts';
import type { WorkingTransaction } from './embedded-guard.ts';

const MAGIC = 'revintel-backup 1\n';

export interface BackupManifest {
  format: 'revintel-backup';
  version: 1;
  revintel: string;
  created_at: string;
  pgdata: { bytes: number; sha256: string };
  /** DATA_DIR/secret.key when the installation generated its SECRET_KEY (null: it is configured). */
  secret_key: string | null;
  /** Every table of the public and drizzle schemas, with its rows at the snapshot. */
  counts: Record<string, number>;
}

export class BackupError extends Error {
  override readonly name = 'BackupError';
}

/** Row counts of every table, in the caller's snapshot. */
async function countRows(query: (text: string) => Promise<{ rows: Record<string, unknown>[] }>): Promise<Record<string, number>> {
  const tables = await query(`select schemaname || '.' || tablename as name from pg_tables where schemaname in ('public', 'drizzle') order by 1`);
  const counts: Record<string, number> = {};
  for (const { name } of tables.rows as { name: string }[]) {
    const [schema, table] = name.split('.');
    const result = await query(`select count(*)::int as n from "${schema}"."${table}"`);
    counts[name] = Number(result.rows[0]!.n);
  }
  return counts;
}

/** A consistent snapshot of the owner's PGlite: a checkpoint (so little WAL is left to replay),
 * then, inside a transaction of its own — so no other is open, and none starts until it ends — the
 * row counts and the data directory's tarball. */
export async function snapshotPglite(pglite: PGlite): Promise<{ tarball: Uint8Array; counts: Record<string, number> }> {
  await pglite.exec('checkpoint');
  return pglite.transaction(async (tx) => {
    const counts = await countRows((text) => tx.query(text));
    const dump = pglite.dumpDataDir('gzip') as Promise<Blob>;
    // The copy issues no query for as long as it takes: not an abandoned transaction.
    const blob = await ((tx as unknown as Partial<WorkingTransaction>).working?.(dump) ?? dump);
    return { tarball: new Uint8Array(await blob.arrayBuffer()), counts };
  });
}

/** Writes the backup file next to its final name, then renames it: a crash leaves no half file
 * under the name. Readable by its owner only (it holds the data and maybe the key). */
export function writeBackupFile(path: string, snapshot: { tarball: Uint8Array; counts: Record<string, number> }, dataDir: string): BackupManifest {
  const keyPath = join(dataDir, 'secret.key');
  const manifest: BackupManifest = {
    format: 'revintel-backup',
    version: 1,
    revintel: VERSION,
    created_at: new Date().toISOString(),
    pgdata: { bytes: snapshot.tarball.byteLength, sha256: createHash('sha256').update(snapshot.tarball).digest('hex') },
    secret_key: existsSync(keyPath) ? readFileSync(keyPath, 'utf8').trim() : null,
    counts: snapshot.counts,
  };
  const partial = `${path}.partial`;
  const fd = openSync(partial, 'w', 0o600);
  try {
    writeSync(fd, `${MAGIC}${JSON.stringify(manifest)}\n`);
    writeSync(fd, snapshot.tarball);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(partial, 0o600);
  renameSync(partial, path);
  return manifest;
}

/** The file's manifest and tarball, its checksum checked. */
export function readBackupFile(path: string): { manifest: BackupManifest; tarball: Uint8Array<ArrayBuffer> } {
  if (!existsSync(path)) throw new BackupError(`${path} does not exist`);
  const bytes = readFileSync(path);
  if (bytes.subarray(0, MAGIC.length).toString('latin1') !== MAGIC) throw new BackupError(`${path} is not a revintel backup (no "revintel-backup 1" header)`);
  const end = bytes.indexOf(10, MAGIC.length);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(bytes.subarray(MAGIC.length, end).toString('utf8'));
  } catch {
    throw new BackupError(`${path}: the manifest is damaged`);
  }
  const tarball = new Uint8Array(bytes.subarray(end + 1));
  if (tarball.byteLength !== manifest.pgdata?.bytes) throw new BackupError(`${path} is truncated or padded: ${tarball.byteLength} bytes of database, the manifest says ${manifest.pgdata?.bytes}`);
  const sha256 = createHash('sha256').update(tarball).digest('hex');
  if (sha256 !== manifest.pgdata.sha256) throw new BackupError(`${path} is damaged: its database does not match its checksum`);
  return { manifest, tarball };
}

/** Reads the file, opens its database in memory and compares every table's rows with the
 * manifest's counts. */
export async function verifyBackup(path: string): Promise<{ manifest: BackupManifest; tarball: Uint8Array<ArrayBuffer> }> {
  const { manifest, tarball } = readBackupFile(path);
  let pglite: PGlite;
  try {
    pglite = await openPgliteFromTarball(tarball);
  } catch (error) {
    throw new BackupError(`${path}: its database does not open: ${(error as Error).message}`);
  }
  try {
    const counts = await countRows((text) => pglite.query(text));
    const differ = Object.keys({ ...counts, ...manifest.counts }).filter((table) => counts[table] !== manifest.counts[table]);
    if (differ.length > 0) throw new BackupError(`${path}: rows differ from its manifest in ${differ.slice(0, 5).map((t) => `${t} (${counts[t] ?? 'missing'} vs ${manifest.counts[t] ?? 'missing'})`).join(', ')}`);
  } finally {
    await pglite.close();
  }
  return { manifest, tarball };
}

/** Puts a verified backup in DATA_DIR (the caller holds its lock): the database replaced only with
 * `force`, the key written when the backup carries one (a different key already there is replaced
 * only with `force` too: the restored secrets were sealed under the backup's). */
export function installBackup(dataDir: string, backup: { manifest: BackupManifest; tarball: Uint8Array<ArrayBuffer> }, force: boolean): { replaced: boolean } {
  const target = pgdataDir(dataDir);
  const occupied = existsSync(target) && readdirSync(target).length > 0;
  if (occupied && !force) throw new BackupError(`${dataDir} already holds a database: restoring would replace it (--force replaces it)`);
  const keyPath = join(dataDir, 'secret.key');
  const key = backup.manifest.secret_key;
  if (key && existsSync(keyPath) && readFileSync(keyPath, 'utf8').trim() !== key && !force) {
    throw new BackupError(`${keyPath} holds another SECRET_KEY than the backup's (--force replaces it)`);
  }
  const staging = `${target}.restore`;
  rmSync(staging, { recursive: true, force: true });
  unpackDataDir(backup.tarball, staging);
  if (occupied) rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  if (key) {
    const fd = openSync(`${keyPath}.partial`, 'w', 0o600);
    writeSync(fd, `${key}\n`);
    closeSync(fd);
    renameSync(`${keyPath}.partial`, keyPath);
  }
  return { replaced: occupied };
}
