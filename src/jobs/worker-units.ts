// The units of work the worker thread asks for (see db/units-of-work.ts for why they are units).
import { eq, sql } from 'drizzle-orm';
import { instances } from '../db/schema/index.ts';
import type { Db } from '../db/client.ts';
import type { UnitRegistry } from '../db/units-of-work.ts';
import { ticketUnits } from '../modules/tickets/queue/ticket-units.ts';
import { jobUnits } from '../queue/job-units.ts';
import { JOB_KINDS } from './kind-registry.ts';

export interface InstanceInfo {
  id: string;
  hostname: string;
  pid: number;
  version: string;
  startedAt: Date;
}

export const workerUnits = {
  /** Announces this `serve` process (idempotent: a restarted worker re-announces the same row). */
  'instances.register': async (db: Db, info: InstanceInfo) => {
    const now = new Date();
    const [row] = await db
      .insert(instances)
      .values({ ...info, workerHeartbeatAt: now })
      .onConflictDoUpdate({ target: instances.id, set: { workerHeartbeatAt: now, stoppedAt: null } })
      .returning();
    return row!;
  },
  /** Proves the worker can reach the database: writes the beat and reads back the instance's row. */
  'instances.heartbeat': async (db: Db, args: { id: string }) => {
    const [row] = await db.update(instances).set({ workerHeartbeatAt: sql`now()` }).where(eq(instances.id, args.id)).returning();
    if (!row) throw new Error(`instance ${args.id} is not registered`);
    return row;
  },
  'instances.stop': async (db: Db, args: { id: string }) => {
    await db.update(instances).set({ stoppedAt: new Date() }).where(eq(instances.id, args.id));
    return true;
  },
  ...ticketUnits,
  ...jobUnits(JOB_KINDS),
} satisfies UnitRegistry;

export type WorkerUnits = typeof workerUnits;
