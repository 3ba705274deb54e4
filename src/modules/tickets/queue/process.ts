// What the worker thread makes of one claimed event: the platform's tickets, read by the
// connector's adapter, each with its intelligence. Pure (the database work is in service.ts), and
// run off the main thread: parsing and scoring never hold up a request.
import { extractTickets } from '../adapters/index.ts';
import type { ExtractedTicket } from '../adapters/types.ts';
import { analyseTicket } from '../intelligence.ts';
import { failedOutcome, UnusableEvent } from './retry.ts';
import { contactKey, type AnalysedTicket, type ClaimedEvent, type EventOutcome } from './service.ts';
import { parsePayload } from '../../../db/storable.ts';

export type Extraction =
  | { event: ClaimedEvent; ok: true; tickets: ExtractedTicket[] }
  | { event: ClaimedEvent; ok: false; error: UnusableEvent };

const unusable = (event: ClaimedEvent, reason: string): Extraction => ({ event, ok: false, error: new UnusableEvent(reason) });

export function extractEvent(event: ClaimedEvent): Extraction {
  let body: unknown;
  try {
    body = parsePayload(event.body);
  } catch {
    return unusable(event, 'the stored body is not JSON');
  }
  let result;
  try {
    result = extractTickets(event.platform, { body, headers: event.headers ?? {} });
  } catch (error) {
    // An adapter bug must not take the worker down with every retry: the event waits, dead, for a
    // fixed version and a replay.
    return unusable(event, `the ${event.platform} adapter failed: ${(error as Error).message}`);
  }
  return result.ok ? { event, ok: true, tickets: result.tickets } : unusable(event, result.reason);
}

export function analyseExtraction(extraction: Extraction, recentContacts: Record<string, number>): EventOutcome {
  if (!extraction.ok) return failedOutcome(extraction.event.id, extraction.error);
  const tickets: AnalysedTicket[] = extraction.tickets.map((t) => {
    const hasText = Boolean(t.subject || t.description);
    const contacts = t.requesterEmail ? (recentContacts[contactKey(extraction.event.orgId, t.requesterEmail)] ?? 0) : 0;
    const intelligence = hasText
      ? analyseTicket({ subject: t.subject, description: t.description, priority: t.priorityNormalised }, { recentContacts: contacts })
      : null;
    return { ...t, intelligence };
  });
  return { eventId: extraction.event.id, ok: true, tickets };
}
