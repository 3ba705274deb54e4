// Tickets as the API shows them (docs/tickets.md "Reading tickets"; beyond the customer's interface): what
// the worker made of the platforms' events, always scoped to one organisation.
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../../db/client.ts';
import { andAll, isoTime, limitTo, newestFirst } from '../../../db/keyset.ts';
import { rowShape, typed, type RowOf } from '../../../db/rows.ts';
import { tickets } from '../../../db/schema/index.ts';
import { notFound } from '../../../lib/errors.ts';
import { decodeCursor } from '../../../lib/pagination.ts';
import type { Platform } from '../platforms.ts';

/** What the reads select of a ticket: its columns (`org_id` and `last_event_id` aside) with the
 * normalised status and priority under the plain names and the platform's as `external_`, its
 * connector's name and platform, and its sort key at full database precision, for the cursor. */
export const TICKET_ROW = rowShape(
  tickets,
  [
    'org_id',
    'last_event_id',
    'status',
    'status_normalised',
    'priority',
    'priority_normalised',
    'first_sentiment',
    'first_urgency',
    'first_churn_signals',
  ],
  {
    connector_name: typed<string>(),
    platform: typed<Platform>(),
    status: typed<string | null>(),
    external_status: typed<string | null>(),
    priority: typed<string | null>(),
    external_priority: typed<string | null>(),
    sort_value: typed<string>(),
  },
);
export type TicketRow = RowOf<typeof TICKET_ROW>;

const keyset = newestFirst('t');

function selectTickets(orgId: string, where: SQL[]): SQL {
  return sql`
    select t.id, t.connector_id, c.name as connector_name, c.platform, t.external_id, t.customer_id, t.subject, t.description,
           t.status_normalised as status, t.status as external_status, t.priority_normalised as priority, t.priority as external_priority,
           t.requester_email, ${isoTime(sql`t.source_created_at`)} as source_created_at, ${isoTime(sql`t.source_updated_at`)} as source_updated_at,
           t.sentiment, t.urgency, t.topics, t.churn_signals, t.intelligence_method, t.intelligence_version,
           ${isoTime(sql`t.created_at`)} as created_at, ${isoTime(sql`t.updated_at`)} as updated_at, ${keyset.value} as sort_value
    from tickets t join connectors c on c.id = t.connector_id
    where t.org_id = ${orgId} ${andAll(where)}`;
}

export interface TicketFilters {
  customerId?: string;
  connectorId?: string;
  status?: string;
  sentimentBelow?: number;
  churnSignal?: string;
  updatedSince?: string;
}

export async function listTickets(
  db: Db,
  input: { orgId: string; filters: TicketFilters; limit: number; cursor?: string },
): Promise<TicketRow[]> {
  const { filters } = input;
  const where: SQL[] = [];
  if (filters.customerId) where.push(sql`t.customer_id = ${filters.customerId}`);
  if (filters.connectorId) where.push(sql`t.connector_id = ${filters.connectorId}`);
  if (filters.status) where.push(sql`t.status_normalised = ${filters.status}`);
  if (filters.sentimentBelow !== undefined) where.push(sql`t.sentiment < ${filters.sentimentBelow}`);
  if (filters.churnSignal) where.push(sql`t.churn_signals @> ${JSON.stringify([filters.churnSignal])}::jsonb`);
  if (filters.updatedSince) where.push(sql`t.updated_at >= ${filters.updatedSince}::timestamptz`);
  if (input.cursor) {
    const position = decodeCursor(input.cursor, 'created_at', 'timestamp');
    where.push(keyset.after(position.value, position.id));
  }
  return queryRows<TicketRow>(db, sql`${selectTickets(input.orgId, where)} order by ${keyset.order} ${limitTo(input.limit + 1)}`);
}

export async function getTicket(db: Db, orgId: string, id: string): Promise<TicketRow> {
  const [row] = await queryRows<TicketRow>(db, selectTickets(orgId, [sql`t.id = ${id}`]));
  if (!row) throw notFound(`Ticket ${id}`);
  return row;
}

export function presentTicket(row: TicketRow) {
  return {
    id: row.id,
    connector: { id: row.connector_id, name: row.connector_name, platform: row.platform },
    external_id: row.external_id,
    customer_id: row.customer_id,
    subject: row.subject,
    description: row.description,
    status: row.status,
    external_status: row.external_status,
    priority: row.priority,
    external_priority: row.external_priority,
    requester_email: row.requester_email,
    source_created_at: row.source_created_at,
    source_updated_at: row.source_updated_at,
    intelligence: {
      sentiment: row.sentiment === null ? null : Number(row.sentiment),
      urgency: row.urgency,
      topics: row.topics,
      churn_signals: row.churn_signals,
      method: row.intelligence_method,
      version: row.intelligence_version,
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
