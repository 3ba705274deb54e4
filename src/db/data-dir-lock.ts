// Two PGlite processes on one directory corrupt it, so a DATA_DIR has one owner at a time. The lock is
// a file created with O_EXCL holding the owner's pid and its kernel start time: a lock left by a
// process that died (kill -9, power loss) is recognised as stale even if its pid was reused since.
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

export interface LockHolder {
  pid: number;
  startTime: string | null;
  hostname: string;
  command: string;
  since: string;
}

export class DataDirBusyError extends Error {
  constructor(readonly dataDir: string, readonly holder: LockHolder) {
    super(
      `DATA_DIR ${dataDir} is in use by process ${holder.pid} (revintel ${holder.command}, since ${holder.since}); ` +
        'only one process may open an embedded database. Stop it, or run this command while it serves: ' +
        'the CLI then goes through the running server.',
    );
    this.name = 'DataDirBusyError';
  }
}

export const lockPath = (dataDir: string) => join(dataDir, 'revintel.lock');

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(holder: LockHolder): boolean {
  if (holder.hostname !== hostname()) return true; // a shared volume: we cannot tell, so be safe
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const startTime = processStartTime(holder.pid);
  return holder.startTime === null || startTime === null || startTime === holder.startTime;
}

export function readLockHolder(dataDir: string): LockHolder | null {
  try {
    const holder = JSON.parse(readFileSync(lockPath(dataDir), 'utf8')) as LockHolder;
    return isAlive(holder) ? holder : null;
  } catch {
    return null;
  }
}

/** Takes the directory or throws DataDirBusyError. Returns the release function. */
export function lockDataDir(dataDir: string, command: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = lockPath(dataDir);
  const me: LockHolder = {
    pid: process.pid,
    startTime: processStartTime(process.pid),
    hostname: hostname(),
    command,
    since: new Date().toISOString(),
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let holder: LockHolder | null = null;
      try {
        holder = JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
      } catch {
        // half-written by a process that died while creating it: stale
      }
      if (holder && isAlive(holder)) throw new DataDirBusyError(resolve(dataDir), holder);
      // Stale: move it aside (rename is atomic, so two contenders cannot both remove a fresh lock).
      try {
        renameSync(path, `${path}.stale-${process.pid}`);
        unlinkSync(`${path}.stale-${process.pid}`);
      } catch {
        // someone else cleared it first; try again
      }
      continue;
    }
    writeSync(fd, JSON.stringify(me));
    closeSync(fd);
    return () => {
      try {
        const holder = JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
        if (holder.pid === process.pid) unlinkSync(path);
      } catch {
        // already gone
      }
    };
  }
  throw new Error(`could not lock DATA_DIR ${resolve(dataDir)}: its lock file keeps changing`);
}
