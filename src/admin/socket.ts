// The admin socket: a Unix socket in DATA_DIR (mode 0600, so only the operator's user can reach it)
// through which the CLI asks the running server to run admin units on the database it owns. Each
// request is one unit, run whole by the server: a CLI killed mid-command cannot leave a transaction
// open, and pglite-socket would wedge if one did (docs/development.md, units of work).
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { localRunner, RemoteUnitError, serializeError, type UnitRunner } from '../db/units-of-work.ts';
import type { Db } from '../db/client.ts';
import type { Settings } from '../settings.ts';
import { timedWork } from '../db/embedded-stalls.ts';
import type { BackgroundTurns } from '../db/turns.ts';
import { AppError } from '../lib/errors.ts';
import { adminUnits, CHANGES_ACCESS, QUEUES_EVENTS, QUEUES_JOBS, type AdminUnits } from './cli-units.ts';

/** In a directory of its own with mode 0700: the socket is never reachable by other users, not
 * even between bind() and chmod(), whatever the mode of DATA_DIR itself. */
const socketDir = (dataDir: string) => join(dataDir, 'run');
export const adminSocketPath = (dataDir: string) => join(socketDir(dataDir), 'revintel.sock');

/** Dates cross the socket as ISO strings; bring back the fields of a unit's result that are dates
 * (`createdAt`, …), and only those: a name that looks like a date stays a string. */
const reviveDates = (key: string, value: unknown) =>
  typeof value === 'string' && key.endsWith('At') && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(value) ? new Date(value) : value;

export function serveAdminSocket(options: {
  dataDir: string;
  db: Db;
  settings: Settings;
  onAccessChange: () => void;
  onJobsQueued: () => void;
  onEventsQueued: () => void;
  turns?: BackgroundTurns;
}) {
  const path = adminSocketPath(options.dataDir);
  mkdirSync(socketDir(options.dataDir), { recursive: true, mode: 0o700 });
  chmodSync(socketDir(options.dataDir), 0o700);
  rmSync(path, { force: true }); // left by a process that was killed; we hold DATA_DIR, so it is stale
  const local = localRunner(options.db, adminUnits, options.settings);
  // The CLI's units take turns with requests like the workers' (db/turns.ts).
  const runner = options.turns ? options.turns.inTurn(local) : local;
  const server = Bun.serve({
    unix: path,
    async fetch(request) {
      const name = new URL(request.url).pathname.replace(/^\/units\//, '') as keyof AdminUnits;
      if (request.method !== 'POST' || !Object.hasOwn(adminUnits, name)) {
        return Response.json({ ok: false, error: { name: 'Error', message: `unknown admin unit ${name}` } }, { status: 404 });
      }
      try {
        // Plain JSON: no unit takes a Date, and reviving would rewrite users' data in transit (an
        // import row's metadata.syncedAt "…T00:00:00Z" would come back as "…T00:00:00.000Z").
        const text = await request.text();
        const args = timedWork('admin-socket parse', () => JSON.parse(text));
        const result = await runner.run(name, args);
        if (CHANGES_ACCESS.has(name)) options.onAccessChange();
        if (QUEUES_JOBS.has(name)) options.onJobsQueued();
        if (QUEUES_EVENTS.has(name)) options.onEventsQueued();
        return timedWork('admin-socket encode', () => Response.json({ ok: true, result }));
      } catch (error) {
        return Response.json({ ok: false, error: serializeError(error) });
      }
    },
  });
  chmodSync(path, 0o600);
  return {
    path,
    stop: async () => {
      await server.stop(true);
      rmSync(path, { force: true });
    },
  };
}

/** The CLI's side of the socket. */
export function socketRunner(dataDir: string): UnitRunner<AdminUnits> {
  const path = adminSocketPath(dataDir);
  const send = (name: string, args: unknown) =>
    fetch(`http://revintel/units/${name}`, {
      method: 'POST',
      unix: path,
      body: JSON.stringify(args),
      signal: AbortSignal.timeout(30 * 60_000),
    } as RequestInit);
  return {
    async run(name, args) {
      // A server that has just taken DATA_DIR opens its socket a moment later: wait for it briefly.
      let response: Response | null = null;
      for (let attempt = 0; !response; attempt++) {
        try {
          response = await send(name, args);
        } catch (error) {
          // Only a connection that never opened is retried: a command that reached the server
          // must not run twice.
          const text = `${(error as { code?: string }).code ?? ''} ${(error as Error).message}`;
          const notListening = /ENOENT|ECONNREFUSED|FailedToOpenSocket|ConnectionRefused|no such file/i.test(text);
          if (!notListening || attempt >= 50)
            throw new Error(`the server holding ${dataDir} does not answer on ${path}: ${(error as Error).message}`);
          await Bun.sleep(100);
        }
      }
      const reply = JSON.parse(await response.text(), reviveDates) as {
        ok: boolean;
        result?: unknown;
        error?: ReturnType<typeof serializeError>;
      };
      if (reply.ok) return reply.result as never;
      const error = reply.error!;
      if (error.code && error.name === 'AppError') throw new AppError(error.code as never, error.message);
      throw new RemoteUnitError(name, error);
    },
  };
}
