// An action's history (action_events) and the events the organisation's own endpoints receive
// (outbound_events, docs/agent-actions.md "Outbound events"): both written in the transaction of the change they describe.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import type { OutboundEventType } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { fanOutEvent } from './outbox.ts';

export type ActionEventKind =
  | 'proposed'
  | 'routed'
  | 'triggered_again'
  | 'approved'
  | 'rejected'
  | 'snoozed'
  | 'woke'
  | 'expired'
  | 'cancelled'
  | 'executed'
  | 'failed';

export async function recordActionEvent(
  db: Db,
  entry: {
    orgId: string;
    actionId: string;
    kind: ActionEventKind;
    actor?: Record<string, unknown> | null;
    details?: Record<string, unknown>;
  },
): Promise<void> {
  await db.execute(sql`
    insert into action_events (org_id, action_id, kind, actor, details)
    values (${entry.orgId}, ${entry.actionId}, ${entry.kind}, ${entry.actor ? JSON.stringify(entry.actor) : null}::jsonb, ${JSON.stringify(entry.details ?? {})}::jsonb)`);
}

/** Records an event for the organisation's endpoints and queues its deliveries. Returns its id. */
export async function emitOutboundEvent(db: Db, orgId: string, type: OutboundEventType, data: Record<string, unknown>): Promise<string> {
  const id = newId('msg');
  await db.execute(
    sql`insert into outbound_events (id, org_id, type, data) values (${id}, ${orgId}, ${type}, ${JSON.stringify(data)}::jsonb)`,
  );
  await fanOutEvent(db, { id, orgId, type });
  return id;
}
