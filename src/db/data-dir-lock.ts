// Two PGlite processes on one directory corrupt it, so a DATA_DIR has one owner at a time.
//
// The owner holds an exclusive flock(2) on DATA_DIR/revintel.lock for as long as it lives. The
// kernel drops the lock when the process ends, however it ends (kill -9, OOM, power loss), so there
// is no stale lock to recognise — whatever pid or hostname the file last named. The file's content
// (pid, command, since) only serves the message a second process prints.
import { dlopen, FFIType } from 'bun:ffi';
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

interface LockHolder {
  pid: number;
  hostname: string;
  command: string;
  since: string;
}

/** What `command` can do about DATA_DIR being held by `holder`: only advice it can follow. The
 * commands that go through a running server never meet a server here (they use its socket). */
function busyAdvice(command: string, holder: LockHolder | null): string {
  if (holder?.command !== 'serve') return 'Wait for it to finish, or stop it.';
  switch (command) {
    case 'restore':
      return 'Stop the server first: a restore replaces the database it has open (take a backup first if its data matters).';
    case 'export':
      return 'Stop the server first: export copies a database nothing writes to meanwhile. To leave it serving, take "revintel backup FILE", restore FILE into another DATA_DIR and export from there.';
    case 'serve':
      return 'Stop it first: one server per DATA_DIR (several servers share a PostgreSQL database instead).';
    default:
      return 'Stop it, or run this command while it serves: the CLI then goes through the running server.';
  }
}

export class DataDirBusyError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | null,
    command = '',
  ) {
    const who = holder
      ? `process ${holder.pid} (revintel ${holder.command} on ${holder.hostname}, since ${holder.since})`
      : 'another process';
    super(`DATA_DIR ${dataDir} is in use by ${who}; only one process may open an embedded database. ${busyAdvice(command, holder)}`);
    this.name = 'DataDirBusyError';
  }
}

export const lockPath = (dataDir: string) => join(dataDir, 'revintel.lock');

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

let flock: ((fd: number, operation: number) => number) | null = null;
function kernelFlock(): (fd: number, operation: number) => number {
  if (!flock) {
    const libc = dlopen('libc.so.6', { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
    flock = libc.symbols.flock as (fd: number, operation: number) => number;
  }
  return flock;
}

function readHolder(path: string): LockHolder | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
  } catch {
    return null;
  }
}

/** Whether a process holds DATA_DIR now, and which (as far as the lock file says). */
export function readLockHolder(dataDir: string): LockHolder | null {
  const path = lockPath(dataDir);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null; // never locked
  }
  try {
    if (kernelFlock()(fd, LOCK_EX | LOCK_NB) === 0) {
      kernelFlock()(fd, LOCK_UN);
      return null; // nobody holds it
    }
    return readHolder(path) ?? { pid: 0, hostname: 'unknown', command: 'unknown', since: 'unknown' };
  } finally {
    closeSync(fd);
  }
}

/** Takes DATA_DIR for this process or throws DataDirBusyError. Returns the release function. */
export function lockDataDir(dataDir: string, command: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = lockPath(dataDir);
  const fd = openSync(path, 'a+', 0o600);
  if (kernelFlock()(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd);
    throw new DataDirBusyError(resolve(dataDir), readHolder(path), command);
  }
  const me: LockHolder = { pid: process.pid, hostname: hostname(), command, since: new Date().toISOString() };
  ftruncateSync(fd, 0);
  writeSync(fd, JSON.stringify(me), 0);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    // The file stays: removing it would let a newcomer lock a fresh inode while a waiter holds
    // the old one. Closing the descriptor drops the lock.
    closeSync(fd);
  };
}
