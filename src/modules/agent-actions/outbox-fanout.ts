// Where an outbound event goes: nowhere yet — endpoints and their deliveries arrive with the outbox.
import type { Db } from '../../db/client.ts';
import type { OutboundEventType } from '../../db/schema/index.ts';

export async function fanOutEvent(_db: Db, _event: { id: string; orgId: string; type: OutboundEventType }): Promise<number> {
  return 0;
}
