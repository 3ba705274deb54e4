// GET /api/tickets and GET /api/tickets/:id: the caller's organisation's tickets with their
// intelligence and customer link.
import { Elysia, t } from 'elysia';
import type { Database } from '../../../db/client.ts';
import { ok } from '../../../lib/envelope.ts';
import { AppError } from '../../../lib/errors.ts';
import { listResponse } from '../../../lib/list-response.ts';
import { principalAccessor } from '../../../plugins/auth.ts';
import type { RequestStates } from '../../../plugins/request-state.ts';
import type { RouteDeclaration } from '../../../lib/routes.ts';
import { ListTicketsQuery, SENTIMENT_RANGE, Ticket, TicketParams } from './model.ts';
import { getTicket, listTickets, presentTicket } from './service.ts';

export const TICKET_ROUTES = {
  list: {
    method: 'GET',
    path: '/api/tickets',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: t.Array(Ticket),
    summary: "The organisation's tickets with their intelligence",
  },
  get: {
    method: 'GET',
    path: '/api/tickets/:id',
    auth: 'key',
    counted: 'organisation',
    body: 'none',
    response: Ticket,
    summary: 'A ticket',
  },
} as const satisfies Record<string, RouteDeclaration>;

/** `sentiment_below`: a number within SENTIMENT_RANGE. */
function sentimentBound(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN;
  const { min, max } = SENTIMENT_RANGE;
  if (!(value >= min && value <= max))
    throw new AppError(
      'validation_failed',
      `Invalid query parameter "sentiment_below": must be a number from ${min} to ${max}, got "${raw}"`,
    );
  return value;
}

export function ticketsModule(deps: { database: Database; states: RequestStates }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  return new Elysia({ name: 'revintel/tickets' })
    .get(
      TICKET_ROUTES.list.path,
      ({ query, request, set }) =>
        listResponse({
          request,
          set,
          known: Object.keys(ListTicketsQuery.properties),
          limit: query.limit,
          sort: 'created_at',
          fetch: (limit) =>
            listTickets(db, {
              orgId: principalOf(request).org.id,
              limit,
              cursor: query.cursor,
              filters: {
                customerId: query.customer_id,
                connectorId: query.connector_id,
                status: query.status,
                sentimentBelow: sentimentBound(query.sentiment_below),
                churnSignal: query.churn_signal,
                updatedSince: query.updated_since,
              },
            }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentTicket,
        }),
      { query: ListTicketsQuery },
    )
    .get(
      TICKET_ROUTES.get.path,
      async ({ request, params }) => ok(presentTicket(await getTicket(db, principalOf(request).org.id, params.id))),
      { params: TicketParams },
    );
}
