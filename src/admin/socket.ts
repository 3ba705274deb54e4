// The admin socket: a Unix socket in DATA_DIR (mode 0600, so only the operator's user can reach it)
// through which the CLI asks the running server to run admin units on the database it owns. Each
// request is one unit, run whole by the server: a CLI killed mid-command cannot leave a transaction
// open (SPEC §1).
import { chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { localRunner, RemoteUnitError, serializeError, type UnitRunner } from '../db/units.ts';
import type { Db } from '../db/client.ts';
import { AppError } from '../lib/errors.ts';
import { adminUnits, CHANGES_ACCESS, type AdminUnits } from './units.ts';

export const adminSocketPath = (dataDir: string) => join(dataDir, 'revintel.sock');

/** Dates cross the socket as ISO strings; bring back the fields that are dates. */
const reviveDates = (_key: string, value: unknown) =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(value) ? new Date(value) : value;

export function serveAdminSocket(options: { dataDir: string; db: Db; onAccessChange: () => void }) {
  const path = adminSocketPath(options.dataDir);
  rmSync(path, { force: true }); // left by a process that was killed; the data-dir lock says it is gone
  const runner = localRunner(options.db, adminUnits);
  const server = Bun.serve({
    unix: path,
    async fetch(request) {
      const name = new URL(request.url).pathname.replace(/^\/units\//, '') as keyof AdminUnits;
      if (request.method !== 'POST' || !(name in adminUnits)) {
        return Response.json({ ok: false, error: { name: 'Error', message: `unknown admin unit ${name}` } }, { status: 404 });
      }
      try {
        const args = JSON.parse(await request.text(), reviveDates);
        const result = await runner.run(name, args);
        if (CHANGES_ACCESS.has(name)) options.onAccessChange();
        return Response.json({ ok: true, result });
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
  return {
    async run(name, args) {
      const response = await fetch(`http://revintel/units/${name}`, {
        method: 'POST',
        unix: path,
        body: JSON.stringify(args),
      } as RequestInit);
      const reply = JSON.parse(await response.text(), reviveDates) as { ok: boolean; result?: unknown; error?: ReturnType<typeof serializeError> };
      if (reply.ok) return reply.result as never;
      const error = reply.error!;
      if (error.code && error.name === 'AppError') throw new AppError(error.code as never, error.message);
      throw new RemoteUnitError(name, error);
    },
  };
}
