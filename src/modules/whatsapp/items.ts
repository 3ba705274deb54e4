// What a WhatsApp delivery holds: its body parsed (storable) and cut into items, one per message,
// status or unhandled change. The webhook reads a delivery with these, and so does the job that
// works through a large one stored as it came (batch.ts).
import { createHash } from 'node:crypto';
import { AppError } from '../../lib/errors.ts';
import { parseStorableJson } from '../../db/storable.ts';

/** One thing Meta told us: a message, a status, or something we keep without acting on it. */
export interface Item {
  phoneNumberId: string;
  dedupeKey: string;
  type: 'message' | 'status' | 'other';
  body: unknown;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text: UTF-8, or the request is refused (what PostgreSQL stores as it came). */
export function bodyText(bytes: Uint8Array): string {
  try {
    return fatalUtf8.decode(bytes);
  } catch {
    throw malformed();
  }
}

/** A delivery's text parsed, every string storable. */
export function parseBody(text: string): Record<string, any> {
  try {
    // PostgreSQL text holds no U+0000 and no lone surrogate: made storable before anything is
    // stored, or a hostile delivery would fail for ever.
    const parsed = parseStorableJson(text) as Record<string, any> | null;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed;
  } catch {
    throw malformed();
  }
}

const malformed = () => new AppError('malformed_json', 'The body is not a WhatsApp webhook (a JSON object)');

/** Every message and status of every entry and change (Meta batches them). */
export function itemsOf(payload: Record<string, any>): Item[] {
  const items: Item[] = [];
  const entries = Array.isArray(payload.entry) ? payload.entry : [];
  for (const entry of entries) {
    const changes = Array.isArray(entry?.changes) ? entry.changes : [];
    for (const change of changes) {
      const value = change?.value ?? {};
      const phoneNumberId = String(value.metadata?.phone_number_id ?? '');
      if (change?.field !== 'messages') {
        const digest = createHash('sha256')
          .update(JSON.stringify(change ?? null))
          .digest('hex')
          .slice(0, 32);
        items.push({ phoneNumberId, dedupeKey: `field:${String(change?.field ?? '').slice(0, 60)}:${digest}`, type: 'other', body: null });
        continue;
      }
      const contacts = Array.isArray(value.contacts) ? value.contacts : [];
      for (const message of Array.isArray(value.messages) ? value.messages : []) {
        if (typeof message?.id !== 'string' || !message.id) continue;
        const contact = contacts.find((c: any) => c?.wa_id === message.from);
        items.push({
          phoneNumberId,
          dedupeKey: `message:${message.id}`,
          type: 'message',
          body: { message, profile_name: contact?.profile?.name ?? null },
        });
      }
      for (const status of Array.isArray(value.statuses) ? value.statuses : []) {
        if (typeof status?.id !== 'string' || !status.id) continue;
        items.push({ phoneNumberId, dedupeKey: `status:${status.id}:${String(status.status ?? '')}`, type: 'status', body: status });
      }
    }
  }
  return items;
}
