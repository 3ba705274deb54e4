// HubSpot's Webhooks API posts a JSON array of events, each naming a ticket only by `objectId`:
// `ticket.creation` says one was made, `ticket.propertyChange` carries one property's new value.
// Everything else (subject, content, stage) lives in the CRM, so most fields stay null: null here
// means "not in this delivery", not "cleared".
import {
  MAX_TICKETS_PER_BODY,
  buildTicket,
  isRecord,
  own,
  parseTimestamp,
  plainText,
  shownText,
  textOf,
  toText,
  tooManyEvents,
  type JsonObject,
} from './fields.ts';
import { found, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput, ExtractedTicket } from './types.ts';

const EXPECTED = 'a HubSpot array of ticket events [{"subscriptionType":"ticket.creation","objectId":…}]';
const TICKET_EVENT_PREFIX = 'ticket.';
// The ticket properties whose changes we read, and the field each one feeds. Pipeline stages
// (`hs_pipeline_stage`) are ids that mean something only in their own pipeline: not a status label.
const PROPERTY_FIELDS = { subject: 'subject', content: 'description', hs_ticket_priority: 'priority' } as const;
type PropertyField = (typeof PROPERTY_FIELDS)[keyof typeof PROPERTY_FIELDS];

interface TicketEvents {
  externalId: string;
  createdAt: string | null;
  updatedAt: string | null;
  /** Each property's latest value, with when it changed, so a batch out of order still ends right. */
  latest: Partial<Record<PropertyField, { value: unknown; occurredAt: string | null }>>;
}

// ISO strings in UTC with milliseconds sort like the times they stand for.
const isNotBefore = (candidate: string | null, current: string | null) => current === null || (candidate !== null && candidate >= current);

const foldEvent = (byTicket: Map<string, TicketEvents>, event: JsonObject) => {
  const externalId = toText(own(event, 'objectId'));
  if (externalId === null) return;
  const occurredAt = parseTimestamp(own(event, 'occurredAt'));
  const ticket = byTicket.get(externalId) ?? { externalId, createdAt: null, updatedAt: null, latest: {} };
  byTicket.set(externalId, ticket);
  if (isNotBefore(occurredAt, ticket.updatedAt)) ticket.updatedAt = occurredAt ?? ticket.updatedAt;
  const type = own(event, 'subscriptionType');
  // The creation event happens when the ticket is made.
  if (type === 'ticket.creation') ticket.createdAt = occurredAt;
  if (type !== 'ticket.propertyChange') return;
  const propertyName = own(event, 'propertyName');
  if (typeof propertyName !== 'string' || !Object.hasOwn(PROPERTY_FIELDS, propertyName)) return;
  const fieldName = PROPERTY_FIELDS[propertyName as keyof typeof PROPERTY_FIELDS];
  const seen = ticket.latest[fieldName];
  if (!seen || isNotBefore(occurredAt, seen.occurredAt)) ticket.latest[fieldName] = { value: own(event, 'propertyValue'), occurredAt };
};

const toTicket = (events: TicketEvents): ExtractedTicket | null =>
  buildTicket({
    externalId: events.externalId,
    subject: textOf(events.latest.subject?.value),
    description: plainText(events.latest.description?.value),
    // LOW, MEDIUM, HIGH or URGENT.
    priority: textOf(events.latest.priority?.value),
    createdAt: events.createdAt,
    updatedAt: events.updatedAt,
  });

const readHubspot = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  if (!Array.isArray(body)) return unrecognised(EXPECTED);
  if (body.length > MAX_TICKETS_PER_BODY) return refused(tooManyEvents(body.length));
  const types = body.map((event) => own(event, 'subscriptionType'));
  if (!types.some((type) => typeof type === 'string')) return unrecognised(EXPECTED);
  const byTicket = new Map<string, TicketEvents>();
  body.forEach((event, index) => {
    const type = types[index];
    if (isRecord(event) && typeof type === 'string' && type.startsWith(TICKET_EVENT_PREFIX)) foldEvent(byTicket, event);
  });
  return found([...byTicket.values()].map(toTicket), () => {
    const kinds = [...new Set(types.filter((type): type is string => typeof type === 'string'))].slice(0, 5).map((type) => shownText(type));
    return refused(
      `none of the ${body.length} HubSpot events is about a ticket with an "objectId" (subscription types: ${kinds.join(', ')})`,
    );
  });
};

export const hubspotAdapter = platformAdapter('hubspot', readHubspot);
