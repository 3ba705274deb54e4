// What the worker thread makes of one claimed event: the platform's tickets, read by the
// connector's adapter, each with its intelligence. Pure (the database work is in service.ts), and
// run off the main thread: parsing and scoring never hold up a request.
import { extractTickets } from '../tickets/adapters/index.ts';
import type { ExtractedTicket } from '../tickets/adapters/types.ts';
import { analyseTicket } from '../tickets/intelligence.ts';
import { contactKey, type AnalysedTicket, type ClaimedEvent, type EventOutcome } from './service.ts';

export type Extraction = { event: ClaimedEvent; ok: true; tickets: ExtractedTicket[] } | { event: ClaimedEvent; ok: false; error: string };

export function extractEvent(event: ClaimedEvent): Extraction {
  let body: unknown;
  try {
    body = JSON.parse(event.body);
  } catch {
    return { event, ok: false, error: 'the stored body is not JSON' };
  }
  let result;
  try {
    result = extractTickets(event.platform, { body, headers: event.headers ?? {} });
  } catch (error) {
    // An adapter bug must not take the worker down with every retry: the event waits, dead, for a
    // fixed version and a replay.
    return { event, ok: false, error: `the ${event.platform} adapter failed: ${(error as Error).message}` };
  }
  return result.ok ? { event, ok: true, tickets: result.tickets } : { event, ok: false, error: result.reason };
}

export function analyseExtraction(extraction: Extraction, recentContacts: Record<string, number>): EventOutcome {
  if (!extraction.ok) return { eventId: extraction.event.id, ok: false, error: extraction.error, permanent: true };
  const tickets: AnalysedTicket[] = extraction.tickets.map((t) => {
    const hasText = Boolean(t.subject || t.description);
    const contacts = t.requesterEmail ? recentContacts[contactKey(extraction.event.orgId, t.requesterEmail)] ?? 0 : 0;
    const intelligence = hasText ? analyseTicket({ subject: t.subject, description: t.description, priority: t.priorityNormalised }, { recentContacts: contacts }) : null;
    return { ...t, intelligence };
  });
  return { eventId: extraction.event.id, ok: true, tickets };
}
