// The units of work the worker thread asks for (see db/units.ts for why they are units).
import { eq, sql } from 'drizzle-orm';
import { instances } from '../db/schema/index.ts';
import type { Db } from '../db/client.ts';
import type { UnitRegistry } from '../db/units.ts';
import {
  applyOutcomes,
  claimEvents,
  oldestDueWaitMs,
  recentContacts,
  releaseAllLeases,
  type EventOutcome,
} from '../modules/ticket-queue/service.ts';
import { newId } from '../lib/ids.ts';
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
  /** Takes due ticket events (and those of dead workers) for this worker. */
  'tickets.claim': (db: Db, args: { owner: string; limit: number; leaseSeconds: number }) => claimEvents(db, args),
  /** How long the oldest due ticket event has waited (ms): how long a burst may still defer them. */
  'tickets.oldest-due-wait': (db: Db, _args: Record<string, never>) => oldestDueWaitMs(db),
  /** How many tickets each (org, requester) opened lately: an input of urgency. */
  'tickets.recent-contacts': (db: Db, args: { pairs: { orgId: string; email: string }[] }) => recentContacts(db, args.pairs),
  /** Tickets, customer links, risk inputs and the events' new states, in one transaction; `ms`,
   * how long the writes took on the database's side (the ticket loop sizes its batches by it). */
  'tickets.apply': async (db: Db, args: { owner: string; outcomes: EventOutcome[] }) => {
    const started = performance.now();
    const result = await applyOutcomes(db, { ...args, newTicketId: () => newId('tkt') });
    return { ...result, ms: performance.now() - started };
  },
  /** Embedded database only: leases held at start-up belong to a run that is gone. */
  'tickets.release-leases': (db: Db, _args: Record<string, never>) => releaseAllLeases(db),
  'instances.stop': async (db: Db, args: { id: string }) => {
    await db.update(instances).set({ stoppedAt: new Date() }).where(eq(instances.id, args.id));
    return true;
  },
  ...jobUnits(JOB_KINDS),
} satisfies UnitRegistry;

export type WorkerUnits = typeof workerUnits;
