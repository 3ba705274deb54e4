/** Interface spec §2.2: every answer but the ticket webhook's is this envelope. */
export interface Envelope<T> {
  success: boolean;
  data: T | null;
  error: string | null;
  meta?: Record<string, unknown>;
  code?: string;
}

export const ok = <T>(data: T, meta?: Record<string, unknown>): Envelope<T> =>
  meta ? { success: true, data, error: null, meta } : { success: true, data, error: null };

export const failure = (error: string, code?: string): Envelope<never> => ({ success: false, data: null, error, code });

/** A success whose `data` is JSON text already (made by the database): the envelope goes around it
 * as text, so nothing is parsed or serialised again. */
export function jsonEnvelope(dataJson: string, meta?: Record<string, unknown>, headers: Record<string, string> = {}): Response {
  const body = `{"success":true,"data":${dataJson},"error":null${meta ? `,"meta":${JSON.stringify(meta)}` : ''}}`;
  return new Response(body, { headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}
