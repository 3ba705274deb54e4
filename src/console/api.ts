// The console's one door to the server: the public /api routes, with the session cookie
// (same origin) and, on every state-changing call, the CSRF token GET /api/me handed out.

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }
}

export interface Envelope<T> {
  data: T;
  /** A list's (lib/pagination.ts), and whatever a list adds to it (predictions: model, summary). */
  meta?: Record<string, unknown> & { has_more?: boolean; next_cursor?: string | null; limit?: number };
}

let csrfToken: string | null = null;
let onUnauthorized: (() => void) | null = null;

/** Called when a call answers 401 outside sign-in: the session ended (expired, or signed out elsewhere). */
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

export function setCsrfToken(token: string | null | undefined): void {
  csrfToken = token ?? null;
}

/** Calls `path`; resolves the envelope, or rejects with the API's own error message. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<Envelope<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError('The server could not be reached. Check your connection and try again.', 0, null);
  }
  const text = await response.text();
  let parsed: { success?: boolean; data?: T; meta?: Envelope<T>['meta']; error?: unknown; code?: string } | null = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok || !parsed || parsed.success === false) {
    const error = parsed?.error;
    const message =
      typeof error === 'string'
        ? error
        : error && typeof error === 'object' && 'message' in error
          ? String((error as { message: unknown }).message)
          : `The server answered ${response.status}`;
    const code = parsed?.code ?? (error && typeof error === 'object' && 'code' in error ? String((error as { code: unknown }).code) : null);
    if (response.status === 401 && path !== '/api/me' && !path.startsWith('/api/auth/')) onUnauthorized?.();
    throw new ApiError(message, response.status, code);
  }
  return { data: parsed.data as T, meta: parsed.meta };
}

export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** `?a=1&b=x` from the defined, non-empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
