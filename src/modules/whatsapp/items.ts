// What a WhatsApp delivery holds: its body parsed (storable) and cut into items, one per message,
// status or unhandled change. The webhook reads a delivery with these, and so does the job that
// works through a large one stored as it came (batch.ts).
import { createHash } from 'node:crypto';
import { Type as t } from '@sinclair/typebox';
import { AppError } from '../../lib/errors.ts';
import { isJsonObject, payloadCheck } from '../signed-webhooks/payload.ts';
import { parseStorableJson } from '../../db/storable.ts';

const text = t.Optional(t.String());

/** A delivery of Meta's webhook: entries of changes; a `messages` change holds messages and
 * statuses. Only the fields we read are named (a message or status without its id is skipped);
 * the rest is stored as it came. */
export const WhatsAppDelivery = t.Object({
  object: text,
  entry: t.Optional(
    t.Array(
      t.Object({
        changes: t.Optional(
          t.Array(
            t.Object({
              field: text,
              value: t.Optional(
                t.Object({
                  metadata: t.Optional(t.Object({ phone_number_id: text })),
                  contacts: t.Optional(t.Array(t.Object({ wa_id: text, profile: t.Optional(t.Object({ name: text })) }))),
                  messages: t.Optional(t.Array(t.Object({ id: text, from: text }))),
                  statuses: t.Optional(t.Array(t.Object({ id: text, status: text }))),
                }),
              ),
            }),
          ),
        ),
      }),
    ),
  ),
});

export type WhatsAppDelivery = typeof WhatsAppDelivery.static;

const checkDelivery = payloadCheck(WhatsAppDelivery, 'a WhatsApp webhook');

/** One thing Meta told us: a message, a status, or something we keep without acting on it. */
export interface Item {
  phoneNumberId: string;
  dedupeKey: string;
  type: 'message' | 'status' | 'other';
  body: unknown;
}

/** What we read of a stored status (Meta's shape, kept as it came: any field may be missing or of
 * another type, so each is read through `String()`, `typeof` or `Array.isArray`). */
export interface StatusBody {
  id?: unknown;
  status?: unknown;
  timestamp?: unknown;
  errors?: unknown;
}

/** What we read of a stored message (`{ message, profile_name }`), as loosely as a status. */
export interface MessageBody {
  message?: {
    id?: unknown;
    from?: unknown;
    timestamp?: unknown;
    type?: unknown;
    interactive?: { type?: unknown; button_reply?: { id?: unknown } };
    button?: { payload?: unknown };
    text?: { body?: unknown };
    context?: { id?: unknown };
  };
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

/** A delivery's text parsed, every string storable, and checked against its schema. */
export function parseBody(text: string): WhatsAppDelivery {
  let parsed: unknown;
  try {
    // PostgreSQL text holds no U+0000 and no lone surrogate: made storable before anything is
    // stored, or a hostile delivery would fail for ever.
    parsed = parseStorableJson(text);
  } catch {
    throw malformed();
  }
  if (!isJsonObject(parsed)) throw malformed();
  return checkDelivery(parsed);
}

const malformed = () => new AppError('malformed_json', 'The body is not a WhatsApp webhook (a JSON object)');

/** Every message and status of every entry and change (Meta batches them). */
export function itemsOf(payload: WhatsAppDelivery): Item[] {
  const items: Item[] = [];
  for (const entry of payload.entry ?? []) {
    for (const change of entry.changes ?? []) {
      const value = change.value ?? {};
      const phoneNumberId = value.metadata?.phone_number_id ?? '';
      if (change.field !== 'messages') {
        const digest = createHash('sha256').update(JSON.stringify(change)).digest('hex').slice(0, 32);
        items.push({ phoneNumberId, dedupeKey: `field:${(change.field ?? '').slice(0, 60)}:${digest}`, type: 'other', body: null });
        continue;
      }
      const contacts = value.contacts ?? [];
      for (const message of value.messages ?? []) {
        if (!message.id) continue;
        const contact = contacts.find((c) => c.wa_id === message.from);
        items.push({
          phoneNumberId,
          dedupeKey: `message:${message.id}`,
          type: 'message',
          body: { message, profile_name: contact?.profile?.name ?? null },
        });
      }
      for (const status of value.statuses ?? []) {
        if (!status.id) continue;
        items.push({ phoneNumberId, dedupeKey: `status:${status.id}:${status.status ?? ''}`, type: 'status', body: status });
      }
    }
  }
  return items;
}
