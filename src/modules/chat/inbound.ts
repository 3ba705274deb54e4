// The once-only store of what chat platforms send us (`chat_inbound_events`): every event, click
// and message is stored by the platform's own ids in the transaction of its effects, so a
// redelivery — Slack retries for minutes, Meta for days — finds it and does nothing more.
import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../db/client.ts';
import type { ChatPlatform } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';

export type InboundOutcome = 'received' | 'processed' | 'denied' | 'ignored';

export interface InboundEvent {
  platform: ChatPlatform;
  /** The platform's ids of it: the same on every redelivery. */
  dedupeKey: string;
  /** The installation it came through; null when none of ours (stored without its body). */
  installation: { id: string; org_id: string } | null;
  type: string;
  outcome: InboundOutcome;
  detail?: string | null;
  body: unknown;
}

/** Stores the event once; null when it was stored before (a redelivery: nothing more happens),
 * else its row's id. */
export async function storeOnce(db: Db, event: InboundEvent): Promise<string | null> {
  const [row] = rowsOf<{ id: string }>(
    await db.execute(sql`
      insert into chat_inbound_events (id, platform, dedupe_key, installation_id, org_id, type, outcome, detail, body)
      values (${newId('che')}, ${event.platform}, ${event.dedupeKey.slice(0, 300)}, ${event.installation?.id ?? null}, ${event.installation?.org_id ?? null}, ${event.type.slice(0, 100)}, ${event.outcome}, ${event.detail ?? null}, ${JSON.stringify(event.body)}::jsonb)
      on conflict (platform, dedupe_key) do nothing returning id`),
  );
  return row?.id ?? null;
}

/** What came of a stored event. */
export const settle = (db: Db, id: string, outcome: Exclude<InboundOutcome, 'received'>, detail: string | null) =>
  db.execute(sql`update chat_inbound_events set outcome = ${outcome}, detail = ${detail} where id = ${id}`);
