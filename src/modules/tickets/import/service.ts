// POST /api/ticket-intelligence/import (docs/tickets.md "Importing tickets"): every item is checked at once
// — it must be an object in which the connector's adapter finds exactly one ticket — and the valid
// ones are stored as events in one transaction with the batch's record; the worker thread processes
// them like webhook events. An item already received for this connector (the same bytes of
// canonical JSON) counts as a duplicate and is not stored again.
import { transaction } from '../../../db/transaction.ts';
import { and, eq } from 'drizzle-orm';
import { queryText, type Db } from '../../../db/client.ts';
import { connectors, ticketImportBatches, type Connector } from '../../../db/schema/index.ts';
import { notFound } from '../../../lib/errors.ts';
import { newId } from '../../../lib/ids.ts';
import { ensureImportConnector } from '../connectors/service.ts';
import { extractTickets } from '../adapters/index.ts';
import { insertEvents, type InboundEvent } from '../queue/writer.ts';

/** JSON with keys sorted at every level: the same ticket sent twice gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Why an item cannot be imported, or null when it can. */
function rejectionOf(item: unknown, connector: Connector): string | null {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return 'must be a JSON object (a ticket)';
  const result = extractTickets(connector.platform, { body: item, headers: {} });
  if (!result.ok) return result.reason;
  if (result.tickets.length !== 1) return `must hold one ticket; found ${result.tickets.length}`;
  return null;
}

export interface ImportOutcome {
  batch_id: string;
  connector_id: string;
  received: number;
  accepted: number;
  duplicates: number;
  rejected: { index: number; error: string }[];
}

export async function importTickets(db: Db, orgId: string, body: { connector_id?: string; tickets: unknown[] }): Promise<ImportOutcome> {
  return transaction(db, async (txDb) => {
    let connector: Connector;
    if (body.connector_id) {
      const [row] = await txDb
        .select()
        .from(connectors)
        .where(and(eq(connectors.orgId, orgId), eq(connectors.id, body.connector_id)));
      if (!row) throw notFound(`Connector ${body.connector_id}`);
      connector = row;
    } else {
      connector = await ensureImportConnector(txDb, orgId);
    }
    const batchId = newId('tib');
    const rejected: { index: number; error: string }[] = [];
    const events: InboundEvent[] = [];
    body.tickets.forEach((item, index) => {
      const reason = rejectionOf(item, connector);
      if (reason) return rejected.push({ index, error: reason });
      const text = canonicalJson(item);
      events.push({
        id: newId('evt'),
        orgId,
        connectorId: connector.id,
        source: 'import',
        body: text,
        headers: {},
        dedupeKey: `import:${Bun.SHA256.hash(text, 'hex')}`,
        batchId,
        itemIndex: index,
      });
    });
    // The batch row first: its events point at it.
    await txDb
      .insert(ticketImportBatches)
      .values({ id: batchId, orgId, connectorId: connector.id, received: body.tickets.length, accepted: 0, duplicates: 0, rejected });
    const stored = events.length ? await insertEvents(txDb, events) : [];
    const duplicates = stored.filter((s) => s.duplicate).length;
    const accepted = stored.length - duplicates;
    await txDb.update(ticketImportBatches).set({ accepted, duplicates }).where(eq(ticketImportBatches.id, batchId));
    return { batch_id: batchId, connector_id: connector.id, received: body.tickets.length, accepted, duplicates, rejected };
  });
}

/** A batch and how far its tickets have got. */
export async function importProgress(db: Db, orgId: string, batchId: string) {
  const [batch] = await db
    .select()
    .from(ticketImportBatches)
    .where(and(eq(ticketImportBatches.orgId, orgId), eq(ticketImportBatches.id, batchId)));
  if (!batch) throw notFound(`Import batch ${batchId}`);
  const counts = await queryText<{ status: string; n: number }>(
    db,
    `select status, count(*)::int as n from ticket_events where batch_id = $1 and org_id = $2 group by status`,
    [batchId, orgId],
  );
  const by = Object.fromEntries(counts.map((c) => [c.status, c.n])) as Record<string, number>;
  const progress = { pending: by.pending ?? 0, processing: by.processing ?? 0, done: by.done ?? 0, dead: by.dead ?? 0 };
  const [errors] = await queryText<{ errors: { index: number; error: string }[] | null }>(
    db,
    `select json_agg(json_build_object('index', item_index, 'error', last_error) order by item_index) as errors
     from ticket_events where batch_id = $1 and org_id = $2 and status = 'dead'`,
    [batchId, orgId],
  );
  return {
    batch_id: batch.id,
    connector_id: batch.connectorId,
    status: progress.pending + progress.processing > 0 ? 'processing' : 'completed',
    received: batch.received,
    accepted: batch.accepted,
    duplicates: batch.duplicates,
    rejected: batch.rejected,
    progress,
    failed: errors?.errors ?? [],
    created_at: batch.createdAt.toISOString(),
  };
}
