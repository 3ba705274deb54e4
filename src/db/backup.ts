// Backups of the embedded database (docs/operating.md "Backups"), online: PostgreSQL's own base-backup
// protocol, run through PGlite. `pg_backup_start` (a checkpoint: the one moment the database
// works for the backup) marks where recovery will begin; the data directory's files are then
// copied from disk by the backup command's own process while the server goes on writing; after
// `pg_backup_stop` the WAL written meanwhile is copied too, with the backup label it answers.
// Restoring replays that WAL: pages caught mid-write are repaired from the full-page images
// PostgreSQL logs during a backup, and the database comes back as it was at the stop, or later.
//
// The file: a header line, a gzipped tar of the data directory (streamed, never held in memory),
// then the manifest as JSON — the payload's size and SHA-256, the backup's WAL positions and
// DATA_DIR's generated SECRET_KEY, without which its sealed secrets could not be opened — and a
// fixed-length trailer giving the manifest's length. `revintel restore` checks the checksum, then
// unpacks into a side directory and opens it there (recovery runs; its migrations must be ones this
// build knows; every table is counted), and only then swaps it in; a database already in DATA_DIR
// is replaced only with --force.
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
  mkdirSync,
  fstatSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { PGlite } from '@electric-sql/pglite';
import { VERSION } from '../version.ts';
import { crashPoint } from '../lib/crash-point.ts';
import { openPgliteDirectory, pgdataDir } from './embedded.ts';
import { fsyncTree, restoringDir, restoringKeyPath, settleRestore, swapInRestored } from './restore-swap.ts';
import { knownMigrations } from './migrate.ts';

const MAGIC = 'revintel-backup 2\n';
/** `\nmanifest <12 digits> <sha256>\n`: the manifest's length in bytes and its checksum, at the very
 * end of the file. */
const TRAILER_LENGTH = '\nmanifest '.length + 12 + 1 + 64 + 1;

export interface BackupManifest {
  format: 'revintel-backup';
  version: 2;
  revintel: string;
  created_at: string;
  /** The gzipped tar between the header and the manifest. */
  pgdata: { bytes: number; sha256: string; files: number; data_bytes: number };
  /** Where recovery starts and the point it must replay past for the copy to be consistent. */
  wal: { start_lsn: string; stop_lsn: string };
  /** DATA_DIR/secret.key when the installation generated its SECRET_KEY (null: it is configured). */
  secret_key: string | null;
}

export class BackupError extends Error {
  override readonly name = 'BackupError';
}

/** The two calls a backup makes on the database, on the process that owns it (a unit each). */
export interface BackupProtocol {
  start(): Promise<{ start_lsn: string }>;
  stop(): Promise<{ stop_lsn: string; labelfile: string; spcmapfile: string }>;
}

/** The backup command whose backup this process's database session holds (one at a time). */
let runningBackup: { pid: number } | null = null;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The owner's side of a backup: its statements, and `attempt`, which runs one so that its failure
 * leaves the session usable (a savepoint inside a unit's transaction: after a plain failed statement
 * PostgreSQL refuses every other until the transaction ends). */
export interface BackupSession {
  query(text: string): Promise<Record<string, unknown>[]>;
  attempt<T>(work: () => Promise<T>): Promise<T>;
}

/** The SQLSTATE of a database error, however the driver's error was wrapped (drizzle puts it in
 * `cause`): the wrapper's message says "Failed query", not what PostgreSQL said. */
function sqlStateOf(error: unknown): string | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  }
  return undefined;
}

/** What `pg_backup_start` says when this session already has a backup open. */
const OBJECT_NOT_IN_PREREQUISITE_STATE = '55000';

/** `pg_backup_start` with an immediate checkpoint, for the backup command `pid`. PostgreSQL allows
 * one backup per session: a second command is refused while the first one lives; a backup left
 * open by a command that died is ended first. */
export async function startBackup(session: BackupSession, pid: number): Promise<{ start_lsn: string }> {
  if (runningBackup && runningBackup.pid !== pid && alive(runningBackup.pid)) {
    throw new BackupError(`another backup is being written (revintel backup, pid ${runningBackup.pid}): wait for it to finish`);
  }
  const start = async () =>
    (await session.query(`select pg_backup_start('revintel ${new Date().toISOString()}', true)::text as start_lsn`))[0] as {
      start_lsn: string;
    };
  let started: { start_lsn: string };
  try {
    started = await session.attempt(start);
  } catch (error) {
    if (sqlStateOf(error) !== OBJECT_NOT_IN_PREREQUISITE_STATE) throw error;
    // The session holds a backup no living command writes (checked above): one whose command died.
    // Should the stop fail too, the start's own error is the one that explains.
    await session.query('select pg_backup_stop(false)').catch(() => Promise.reject(error));
    started = await start();
  }
  runningBackup = { pid };
  return started;
}

/** `pg_backup_stop` without waiting for WAL archiving (there is none): the label and tablespace
 * map recovery needs, and the WAL position a restore must reach. */
export async function stopBackup(session: BackupSession) {
  const [row] = await session.query('select lsn::text as stop_lsn, labelfile, spcmapfile from pg_backup_stop(false)');
  runningBackup = null;
  return row as { stop_lsn: string; labelfile: string; spcmapfile: string };
}

/** Not copied (as pg_basebackup leaves them out): what a running server keeps for itself, and
 * the WAL, which is copied after the stop. Their directories are kept, empty. */
const EMPTIED_DIRS = new Set([
  'pg_wal',
  'pg_stat_tmp',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_subtrans',
]);
const SKIPPED_FILES = new Set([
  'postmaster.pid',
  'postmaster.opts',
  'backup_label',
  'backup_label.old',
  'tablespace_map',
  'pg_internal.init',
]);

/** Every file and directory under `root` (relative paths, directories first), minus the above. */
function listTree(root: string, at = ''): { path: string; dir: boolean }[] {
  const entries: { path: string; dir: boolean }[] = [];
  for (const entry of readdirSync(join(root, at), { withFileTypes: true })) {
    const path = at ? `${at}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      entries.push({ path, dir: true });
      if (!(at === '' && EMPTIED_DIRS.has(entry.name))) entries.push(...listTree(root, path));
    } else if (entry.isFile() && !SKIPPED_FILES.has(entry.name)) {
      entries.push({ path, dir: false });
    }
  }
  return entries;
}

// --- ustar, written and read as streams -----------------------------------------------------------

function tarHeader(path: string, size: number, dir: boolean): Buffer {
  const header = Buffer.alloc(512);
  let name = path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = path.lastIndexOf('/', 155);
    if (cut < 0 || Buffer.byteLength(path.slice(cut + 1)) > 100) throw new BackupError(`path too long for the archive: ${path}`);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
  }
  header.write(name, 0, 100, 'utf8');
  header.write(dir ? '0000700\0' : '0000600\0', 100, 'latin1');
  header.write('0000000\0', 108, 'latin1');
  header.write('0000000\0', 116, 'latin1');
  header.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  header.write(
    `${Math.floor(Date.now() / 1000)
      .toString(8)
      .padStart(11, '0')}\0`,
    136,
    'latin1',
  );
  header.write('        ', 148, 'latin1');
  header.write(dir ? '5' : '0', 156, 'latin1');
  header.write('ustar\0' + '00', 257, 'latin1');
  header.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return header;
}

const CHUNK = 1 << 20;

/** A file's bytes as they are now, `size` of them: one that shrank since it was measured (a table
 * truncated meanwhile) is padded with zeros, one that grew is cut — WAL replay puts both right. */
async function* fileChunks(path: string, size: number): AsyncGenerator<Buffer> {
  const handle = await open(path, 'r').catch(() => null);
  let sent = 0;
  try {
    while (handle && sent < size) {
      const buffer = Buffer.alloc(Math.min(CHUNK, size - sent));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, sent);
      if (bytesRead === 0) break;
      sent += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle?.close();
  }
  if (sent < size) yield Buffer.alloc(size - sent);
  if (size % 512) yield Buffer.alloc(512 - (size % 512));
}

/** Hashes and counts what passes through. */
function measured() {
  const hash = createHash('sha256');
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, result: () => ({ bytes, sha256: hash.digest('hex') }) };
}

/**
 * Writes an online backup of `dataDir`'s database to `path`. `protocol` reaches the process that
 * owns the database (the server, or this command when none runs); the copying is done here. The
 * file is written next to its name and renamed when complete, readable by its owner only.
 */
/** An existing file may be the only good backup: it is replaced only when asked (`--force`). */
export function refuseExistingBackup(path: string): void {
  if (existsSync(path)) throw new BackupError(`${path} exists: name another file, or add --force to replace it`);
}

export async function writeBackup(
  path: string,
  dataDir: string,
  protocol: BackupProtocol,
  options: { replace?: boolean } = {},
): Promise<BackupManifest> {
  if (!options.replace) refuseExistingBackup(path);
  const root = pgdataDir(dataDir);
  const keyPath = join(dataDir, 'secret.key');
  const partial = `${path}.partial`;
  removeAbandonedPartials(dataDir);
  const marker = notePartial(dataDir, partial);
  let fd: number;
  try {
    fd = openSync(partial, 'w', 0o600);
  } catch (error) {
    rmSync(marker, { force: true });
    throw error;
  }
  // Ctrl-C or a polite kill ends the copy through the failure path below, which removes the file
  // and ends the backup on the database.
  const interrupted = new AbortController();
  const interrupt = (signal: NodeJS.Signals) => interrupted.abort(new BackupError(`interrupted by ${signal}: no backup was written`));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  let started = false;
  let stopped: Awaited<ReturnType<BackupProtocol['stop']>> | null = null;
  let files = 0;
  let dataBytes = 0;
  try {
    chmodSync(partial, 0o600);
    writeSync(fd, MAGIC);
    const { start_lsn } = await protocol.start();
    started = true;
    async function* archive() {
      for (const entry of listTree(root)) {
        const full = join(root, entry.path);
        if (entry.dir) {
          yield tarHeader(entry.path, 0, true);
          continue;
        }
        let size: number;
        try {
          size = statSync(full).size;
        } catch {
          continue; // dropped since it was listed: the WAL says so
        }
        files++;
        dataBytes += size;
        yield tarHeader(entry.path, size, false);
        yield* fileChunks(full, size);
      }
      crashPoint('backup.copying');
      stopped = await protocol.stop();
      // The WAL from the start to the stop (and whatever followed: replayed too), then the label
      // that tells recovery where to begin.
      const wal = join(root, 'pg_wal');
      const segments = readdirSync(wal)
        .filter((name) => /^[0-9A-F]{24}$/.test(name))
        .sort();
      const first = /file ([0-9A-F]{24})/.exec(stopped.labelfile)?.[1];
      if (!first || !segments.includes(first)) {
        throw new BackupError(
          `the WAL segment the backup starts in (${first ?? 'unknown'}) was recycled while the files were copied; run the backup again`,
        );
      }
      for (const name of segments.filter((segment) => segment >= first)) {
        const size = statSync(join(wal, name)).size;
        files++;
        dataBytes += size;
        yield tarHeader(`pg_wal/${name}`, size, false);
        yield* fileChunks(join(wal, name), size);
      }
      for (const [name, text] of [
        ['backup_label', stopped.labelfile],
        ['tablespace_map', stopped.spcmapfile],
      ] as const) {
        const bytes = Buffer.from(text, 'utf8');
        yield tarHeader(name, bytes.length, false);
        yield bytes;
        if (bytes.length % 512) yield Buffer.alloc(512 - (bytes.length % 512));
      }
      yield Buffer.alloc(1024); // the two empty blocks that end a tar
    }
    const payload = measured();
    await pipeline(
      archive(),
      createGzip({ level: 1 }),
      payload.stream,
      createWriteStream('', { fd, start: MAGIC.length, autoClose: false }),
      { signal: interrupted.signal },
    );
    const manifest: BackupManifest = {
      format: 'revintel-backup',
      version: 2,
      revintel: VERSION,
      created_at: new Date().toISOString(),
      pgdata: { ...payload.result(), files, data_bytes: dataBytes },
      wal: { start_lsn, stop_lsn: stopped!.stop_lsn },
      secret_key: existsSync(keyPath) ? readFileSync(keyPath, 'utf8').trim() : null,
    };
    const json = Buffer.from(JSON.stringify(manifest), 'utf8');
    const trailer = `\nmanifest ${String(json.length).padStart(12, '0')} ${createHash('sha256').update(json).digest('hex')}\n`;
    const tail = Buffer.concat([json, Buffer.from(trailer, 'latin1')]);
    writeSync(fd, tail, 0, tail.length, MAGIC.length + manifest.pgdata.bytes);
    fsyncSync(fd);
    closeSync(fd);
    if (options.replace) renameSync(partial, path);
    else {
      // A link fails when the name was taken meanwhile, where a rename would replace it.
      try {
        linkSync(partial, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') refuseExistingBackup(path);
        throw error;
      }
      rmSync(partial, { force: true });
    }
    return manifest;
  } catch (error) {
    // The failed pipeline may already have closed it (Bun's write stream does on destroy).
    try {
      closeSync(fd);
    } catch {}
    rmSync(partial, { force: true });
    // A backup that failed halfway is ended, so the next one can start.
    if (started && !stopped) await protocol.stop().catch(() => {});
    throw interrupted.signal.aborted ? interrupted.signal.reason : error;
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    rmSync(marker, { force: true });
  }
}

// A command killed outright (SIGKILL, the OOM killer, a power cut) cannot remove its `.partial`,
// which holds as much of the database as it had copied; nothing else names it. So each backup notes
// its file in DATA_DIR/run while it writes it, and the next backup removes the files of the notes
// whose command is dead.
const partialNotes = (dataDir: string) => join(dataDir, 'run');
const NOTE = /^backup-(\d+)\.json$/;

function notePartial(dataDir: string, partial: string): string {
  mkdirSync(partialNotes(dataDir), { recursive: true, mode: 0o700 });
  const note = join(partialNotes(dataDir), `backup-${process.pid}.json`);
  writeFileSync(note, JSON.stringify({ pid: process.pid, partial }), { mode: 0o600 });
  return note;
}

function removeAbandonedPartials(dataDir: string): void {
  let names: string[];
  try {
    names = readdirSync(partialNotes(dataDir));
  } catch {
    return; // no note was ever written
  }
  for (const name of names) {
    const pid = Number(NOTE.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    const note = join(partialNotes(dataDir), name);
    try {
      const { partial } = JSON.parse(readFileSync(note, 'utf8')) as { partial?: unknown };
      // Only ever a backup's own temporary file, whatever the note says.
      if (typeof partial === 'string' && partial.endsWith('.partial')) rmSync(partial, { force: true });
    } catch {}
    rmSync(note, { force: true });
  }
}

/** The file's manifest, its payload's place in the file checked against the file's size. */
function readManifest(path: string): { manifest: BackupManifest; payloadStart: number } {
  if (!existsSync(path)) throw new BackupError(`${path} does not exist`);
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const head = Buffer.alloc(MAGIC.length);
    readSync(fd, head, 0, head.length, 0);
    if (head.toString('latin1') === 'revintel-backup 1\n')
      throw new BackupError(`${path} was written by an earlier revintel (format 1): restore it with that version`);
    if (head.toString('latin1') !== MAGIC) throw new BackupError(`${path} is not a revintel backup (no "revintel-backup 2" header)`);
    const trailer = Buffer.alloc(TRAILER_LENGTH);
    if (size < MAGIC.length + TRAILER_LENGTH) throw new BackupError(`${path} is truncated`);
    readSync(fd, trailer, 0, TRAILER_LENGTH, size - TRAILER_LENGTH);
    const found = /^\nmanifest (\d{12}) ([0-9a-f]{64})\n$/.exec(trailer.toString('latin1'));
    if (!found) throw new BackupError(`${path} is truncated or damaged: it does not end with its manifest`);
    const length = Number(found[1]);
    const json = Buffer.alloc(length);
    if (length > size - TRAILER_LENGTH - MAGIC.length) throw new BackupError(`${path} is truncated or damaged: its manifest does not fit`);
    readSync(fd, json, 0, length, size - TRAILER_LENGTH - length);
    if (createHash('sha256').update(json).digest('hex') !== found[2])
      throw new BackupError(`${path} is damaged: its manifest does not match its checksum`);
    let manifest: BackupManifest;
    try {
      manifest = JSON.parse(json.toString('utf8'));
    } catch {
      throw new BackupError(`${path}: the manifest is damaged`);
    }
    const payload = size - TRAILER_LENGTH - length - MAGIC.length;
    if (payload !== manifest.pgdata?.bytes)
      throw new BackupError(`${path} is truncated or padded: ${payload} bytes of database, the manifest says ${manifest.pgdata?.bytes}`);
    return { manifest, payloadStart: MAGIC.length };
  } finally {
    closeSync(fd);
  }
}

/** Unpacks a tar stream into `dir`: regular files and directories only, nothing outside `dir`. */
function untar(dir: string) {
  let pending: Buffer = Buffer.alloc(0);
  let file: { fd: number; left: number; pad: number } | null = null;
  let ended = false;
  const text = (block: Buffer, offset: number, length: number) => {
    const bytes = block.subarray(offset, offset + length);
    const end = bytes.indexOf(0);
    return (end < 0 ? bytes : bytes.subarray(0, end)).toString('utf8');
  };
  const take = (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    for (;;) {
      if (file) {
        const n = Math.min(file.left, pending.length);
        if (n > 0) writeSync(file.fd, pending, 0, n);
        file.left -= n;
        pending = pending.subarray(n);
        if (file.left > 0) return;
        if (pending.length < file.pad) return;
        pending = pending.subarray(file.pad);
        closeSync(file.fd);
        file = null;
      }
      if (ended || pending.length < 512) return;
      const block = pending.subarray(0, 512);
      pending = pending.subarray(512);
      const name = text(block, 0, 100);
      if (!name) {
        ended = true;
        return;
      }
      const prefix = text(block, 345, 155);
      const path = `${prefix ? `${prefix}/` : ''}${name}`.replace(/^\/+/, '');
      const target = join(dir, path);
      if (relative(dir, target).startsWith('..') || path.split('/').includes('..'))
        throw new BackupError(`unsafe path in the backup: ${path}`);
      const size = parseInt(text(block, 124, 12).trim() || '0', 8);
      const type = String.fromCharCode(block[156] ?? 48);
      if (type === '5') {
        mkdirSync(target, { recursive: true, mode: 0o700 });
      } else if (type === '0' || type === '\0') {
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        file = { fd: openSync(target, 'w', 0o600), left: size, pad: (512 - (size % 512)) % 512 };
      } else {
        throw new BackupError(`unexpected entry type "${type}" in the backup: ${path}`);
      }
    }
  };
  return {
    stream: new Transform({
      transform(chunk: Buffer, _encoding, done) {
        try {
          take(chunk);
          done();
        } catch (error) {
          done(error as Error);
        }
      },
      flush(done) {
        done(file || !ended ? new BackupError('the backup ends in the middle of its archive') : null);
      },
    }),
    abort: () => {
      if (file) closeSync(file.fd);
    },
  };
}

/** Row counts of every table of the public and drizzle schemas. */
async function countRows(pglite: PGlite): Promise<Record<string, number>> {
  const tables = await pglite.query<{ name: string }>(
    `select schemaname || '.' || tablename as name from pg_tables where schemaname in ('public', 'drizzle') order by 1`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables.rows) {
    const [schema, table] = name.split('.');
    counts[name] = Number((await pglite.query<{ n: number }>(`select count(*)::int as n from "${schema}"."${table}"`)).rows[0]!.n);
  }
  return counts;
}

/**
 * Restores a backup into DATA_DIR (the caller holds its lock): the checksum first, then the archive
 * unpacked into a side directory and opened there — recovery replays the WAL to a consistent state
 * and every table is counted — and only then swapped in by renames (restore-swap.ts: a crash at any
 * step leaves the old database or the new one). The database is replaced only with `force`; so is
 * another generated SECRET_KEY (the restored secrets were sealed under the backup's). `settled`
 * says what became of an earlier restore a crash had interrupted.
 */
export async function restoreBackup(
  path: string,
  dataDir: string,
  force: boolean,
): Promise<{ manifest: BackupManifest; counts: Record<string, number>; replaced: boolean; settled: string | null }> {
  const { manifest, payloadStart } = readManifest(path);
  const end = payloadStart + manifest.pgdata.bytes - 1;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { start: payloadStart, end, highWaterMark: CHUNK })) hash.update(chunk as Buffer);
  if (hash.digest('hex') !== manifest.pgdata.sha256) throw new BackupError(`${path} is damaged: its database does not match its checksum`);

  const settled = existsSync(dataDir) ? settleRestore(dataDir) : null;
  const target = pgdataDir(dataDir);
  const occupied = existsSync(target) && readdirSync(target).length > 0;
  if (occupied && !force) throw new BackupError(`${dataDir} already holds a database: restoring would replace it (--force replaces it)`);
  const keyPath = join(dataDir, 'secret.key');
  const key = manifest.secret_key;
  if (key && existsSync(keyPath) && readFileSync(keyPath, 'utf8').trim() !== key && !force) {
    throw new BackupError(`${keyPath} holds another SECRET_KEY than the backup's (--force replaces it)`);
  }

  const staging = restoringDir(dataDir);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  let counts: Record<string, number>;
  try {
    const unpack = untar(staging);
    try {
      await pipeline(createReadStream(path, { start: payloadStart, end, highWaterMark: CHUNK }), createGunzip(), unpack.stream);
    } catch (error) {
      unpack.abort();
      throw error instanceof BackupError ? error : new BackupError(`${path}: its archive does not unpack: ${(error as Error).message}`);
    }
    let pglite: PGlite;
    try {
      pglite = await openPgliteDirectory(staging);
    } catch (error) {
      throw new BackupError(`${path}: its database does not open: ${(error as Error).message}`);
    }
    try {
      // A database migrated further than this build knows would be served with a schema this
      // build does not: refused here, before it replaces anything.
      const [applied] = (await pglite.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations')).rows;
      if ((applied?.n ?? 0) > knownMigrations()) {
        throw new BackupError(
          `${path} was made by a newer revintel (its database has ${applied!.n} migrations, this build knows ${knownMigrations()}): restore it with that version or a later one`,
        );
      }
      counts = await countRows(pglite);
    } finally {
      await pglite.close();
    }
    // On disk before the renames that make it the database: a power cut after them must not find
    // files the kernel had not written yet.
    fsyncTree(staging);
    if (key) {
      const fd = openSync(restoringKeyPath(dataDir), 'w', 0o600);
      writeSync(fd, `${key}\n`);
      fsyncSync(fd);
      closeSync(fd);
    }
  } catch (error) {
    rmSync(restoringKeyPath(dataDir), { force: true });
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  crashPoint('restore.unpacked');
  swapInRestored(dataDir);
  return { manifest, counts, replaced: occupied, settled };
}
