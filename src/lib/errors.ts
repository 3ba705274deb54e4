/** The closed set of errors the API answers with. One class, one status per code, one place. */
export const ERROR_STATUS = {
  bad_request: 400,
  validation_failed: 400,
  malformed_json: 400,
  unauthorized: 401,
  forbidden: 403,
  /** A console session's state-changing request without its CSRF token or from another origin. */
  csrf_failed: 403,
  not_found: 404,
  /** A customer that exists but has no churn prediction (not active, or churned). */
  not_scored: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  database_unavailable: 503,
  request_timeout: 503,
  database_busy: 503,
  /** The server is doing as much of one costly kind of work as it allows at once (password hashing). */
  busy: 503,
  /** A service the request depends on did not answer (Google's signing keys, for a Chat event). */
  upstream_unavailable: 503,
  /** The server lacks a setting the request needs (SECRET_KEY, to seal a secret typed in). */
  not_configured: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    /** What went wrong underneath (a 5xx made of a database failure): logged, never answered. */
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);

/** What an error says, whatever was thrown. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
