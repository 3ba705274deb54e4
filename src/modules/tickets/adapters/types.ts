// What every platform adapter turns a webhook body (or an imported item) into.
import type { Platform } from '../platforms.ts';

export type TicketStatus = 'open' | 'pending' | 'solved' | 'closed';
export type TicketPriority = 'low' | 'normal' | 'high' | 'urgent';

/** One ticket as the platform described it: id, subject, description, status, priority, requester
 * e-mail and created time (the customer's interface's fields), plus what ordering and normalisation
 * need. A field the platform does not send is null, never guessed. */
export interface ExtractedTicket {
  /** The ticket's id on the platform, always a string (GitHub and HubSpot send numbers). */
  externalId: string;
  subject: string | null;
  /** Plain text: HTML is stripped. */
  description: string | null;
  /** The platform's own labels, as sent (objects reduced to their name). */
  status: string | null;
  priority: string | null;
  /** The labels mapped onto revintel's scales; null when the label is unknown or absent. */
  statusNormalised: TicketStatus | null;
  priorityNormalised: TicketPriority | null;
  /** Lower-cased. */
  requesterEmail: string | null;
  /** ISO 8601 UTC with milliseconds (`2026-01-05T09:15:00.000Z`). */
  createdAt: string | null;
  /** When the platform says this version of the ticket was made (its updated time, else the
   * event's time, else createdAt), ISO 8601 UTC: an older event never overwrites a newer one. */
  updatedAt: string | null;
}

export interface AdapterInput {
  /** The parsed JSON body. */
  body: unknown;
  /** Request headers, names lower-cased (Help Scout names its event in `x-helpscout-event`). */
  headers: Record<string, string>;
}

/** Either the tickets found (a body may carry several: HubSpot and Zoho send arrays of events), or
 * why none could be read, in words an operator can act on. */
export type AdapterResult = { ok: true; tickets: ExtractedTicket[] } | { ok: false; reason: string };

export interface PlatformAdapter {
  platform: Platform;
  extract(input: AdapterInput): AdapterResult;
}
