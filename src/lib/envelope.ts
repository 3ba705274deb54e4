/** Every answer but the ticket webhook's is this envelope (docs/api.md "Envelope"). */
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
