// The ticket queue's units of work (db/units-of-work.ts): what the ticket loop, in the worker
// thread, asks the database's owner to do. The worker's registry (jobs/worker-units.ts) holds them.
import type { Db } from '../../../db/client.ts';
import type { UnitRegistry } from '../../../db/units-of-work.ts';
import { newId } from '../../../lib/ids.ts';
import type { Settings } from '../../../settings.ts';
import {
  applyOutcomes,
  claimEvents,
  nextEventDueMs,
  oldestDueWaitMs,
  recentContacts,
  releaseAllLeases,
  type EventOutcome,
} from './service.ts';

export const ticketUnits = {
  /** Takes due ticket events (and those of dead workers) for this worker; finding none, says in how
   * many ms the next pending one comes due (null: none is pending), in the same transaction. */
  'tickets.claim': async (db: Db, args: { owner: string; limit: number; leaseSeconds: number }) => {
    const events = await claimEvents(db, args);
    return { events, nextDueMs: events.length > 0 ? null : await nextEventDueMs(db) };
  },
  /** How long the oldest due ticket event has waited (ms): how long a burst may still defer them. */
  'tickets.oldest-due-wait': (db: Db, _args: Record<string, never>) => oldestDueWaitMs(db),
  /** How many tickets each (org, requester) opened lately: an input of urgency. */
  'tickets.recent-contacts': (db: Db, args: { pairs: { orgId: string; email: string }[] }) => recentContacts(db, args.pairs),
  /** Tickets, customer links, risk inputs and the events' new states, in one transaction; `ms`,
   * how long the writes took on the database's side (the ticket loop sizes its batches by it). */
  'tickets.apply': async (db: Db, args: { owner: string; outcomes: EventOutcome[] }, settings: Settings) => {
    const started = performance.now();
    const result = await applyOutcomes(db, { ...args, newTicketId: () => newId('tkt') }, settings);
    return { ...result, ms: performance.now() - started };
  },
  /** Embedded database only: leases held at start-up belong to a run that is gone. */
  'tickets.release-leases': (db: Db, _args: Record<string, never>) => releaseAllLeases(db),
} satisfies UnitRegistry;

export type TicketUnits = typeof ticketUnits;
