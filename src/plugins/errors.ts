// Every failure leaves as the envelope with its status (docs/api.md "Envelope") — one mapping, used by the
// request pipeline (app.ts) for what fails before routing and by Elysia's onError for the rest.
// Only 5xx are logged, without the query parameters drizzle puts in its messages, and the answer
// never carries internals.
import { Elysia } from 'elysia';
import { AppError, type ErrorCode, ERROR_STATUS } from '../lib/errors.ts';
import { failure } from '../lib/envelope.ts';
import type { Logger } from '../lib/log.ts';
import { DatabaseTimeoutError } from '../db/client.ts';
import { EmbeddedDatabaseFailedError, TransactionIdleTimeoutError } from '../db/embedded-guard.ts';
import { describeSchemaError, type SchemaError, type Where } from '../lib/validation.ts';

export function envelopeResponse(status: number, message: string, code: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(failure(message, code)), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

const answer = (code: ErrorCode, message: string, headers: Record<string, string> = {}) =>
  envelopeResponse(ERROR_STATUS[code], message, code, headers);

/** TypeBox's errors name the field by JSON pointer (`/limit`); say it the way a client wrote it. */
function validationMessage(error: unknown): string {
  const e = error as { all?: SchemaError[]; type?: string };
  const where: Where =
    e.type === 'query' ? 'query parameter' : e.type === 'params' ? 'path parameter' : e.type === 'headers' ? 'header' : 'field';
  return describeSchemaError(e.all?.[0], where, e.type ?? 'request');
}

/** The errors on the way down, outermost first: drizzle wraps the driver's error in `cause`. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

const DOWN_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01',
  '57P03',
  '53300',
]);
/** The work ran past REQUEST_TIMEOUT_MS in the database: a statement cancelled (57014), a
 * transaction left idle ended (25P03 on PostgreSQL, TransactionIdleTimeoutError on PGlite). */
const TIMEOUT_CODES = new Set(['57014', '25P03']);
/** A deadlock or serialization failure: PostgreSQL rolled the whole transaction back, so nothing
 * was written and the same request can simply be sent again. */
const CONFLICT_CODES = new Set(['40P01', '40001']);

/** What PGlite throws once closed (shutting down): it has no code. */
const EMBEDDED_CLOSED = 'PGlite is closed';

function timedOut(error: unknown): boolean {
  return causes(error).some((e) => e instanceof TransactionIdleTimeoutError || TIMEOUT_CODES.has((e as { code?: string })?.code ?? ''));
}

/** The database could not be reached or refused to work (not a fault of the request). */
export function isDatabaseDown(error: unknown): boolean {
  return causes(error).some(
    (e) =>
      e instanceof DatabaseTimeoutError ||
      e instanceof EmbeddedDatabaseFailedError ||
      DOWN_CODES.has((e as { code?: string })?.code ?? '') ||
      (e as Error)?.message === EMBEDDED_CLOSED,
  );
}

/** What a log line may say about an error: messages and codes down the chain, with drizzle's
 * "params: …" (the query's values: key hashes today, customer data tomorrow) cut off. */
export function describeError(error: unknown): Record<string, unknown> {
  return {
    error: causes(error)
      .map((e) => String((e as Error)?.message ?? e).replace(/\nparams: [\s\S]*$/, '\nparams: [REDACTED]'))
      .join(' <- '),
    code: causes(error)
      .map((e) => (e as { code?: string })?.code)
      .find(Boolean),
  };
}

/** Maps anything thrown while answering a request to its envelope. */
export function errorResponse(
  error: unknown,
  context: {
    log: Logger;
    requestId: string;
    method: string;
    path: string;
    allowedMethods?: (path: string) => string[];
    elysiaCode?: string | number;
  },
): Response {
  // Elysia wraps whatever a parse hook throws in its ParseError: ours (413, 415) is the cause.
  const appError = causes(error).find((e): e is AppError => e instanceof AppError);
  if (appError) {
    // A 5xx a module made of what failed under it: the failure is the operator's to see.
    if (appError.status >= 500 && appError.cause !== undefined)
      context.log.error(appError.message, { request_id: context.requestId, path: context.path, ...describeError(appError.cause) });
    return answer(appError.code, appError.message, appError.headers);
  }
  switch (context.elysiaCode) {
    case 'NOT_FOUND': {
      const allowed = context.allowedMethods?.(context.path) ?? [];
      if (allowed.length > 0) {
        return answer('method_not_allowed', `Method ${context.method} is not allowed on ${context.path}; allowed: ${allowed.join(', ')}`, {
          allow: allowed.join(', '),
        });
      }
      return answer('not_found', `Route ${context.method} ${context.path} not found`);
    }
    case 'VALIDATION':
      return answer('validation_failed', validationMessage(error));
    case 'PARSE':
      return answer('malformed_json', 'Malformed JSON in request body');
    case 'INVALID_COOKIE_SIGNATURE':
      return answer('bad_request', 'Invalid cookie signature');
  }
  if (timedOut(error)) {
    context.log.warn('request work timed out in the database', { request_id: context.requestId, ...describeError(error) });
    return answer('request_timeout', `The request ran too long and was abandoned (request ${context.requestId})`, { 'retry-after': '5' });
  }
  if (causes(error).some((e) => CONFLICT_CODES.has((e as { code?: string })?.code ?? ''))) {
    context.log.warn('transaction rolled back by a lock conflict', {
      request_id: context.requestId,
      path: context.path,
      ...describeError(error),
    });
    return answer(
      'database_busy',
      `The database rolled this request back in a lock conflict; nothing was written, send it again (request ${context.requestId})`,
      { 'retry-after': '1' },
    );
  }
  if (isDatabaseDown(error)) {
    context.log.error('database unavailable', { request_id: context.requestId, ...describeError(error) });
    return answer('database_unavailable', `Database unavailable, retry shortly (request ${context.requestId})`, { 'retry-after': '5' });
  }
  context.log.error('unhandled error', { request_id: context.requestId, path: context.path, ...describeError(error) });
  return answer('internal', `Internal server error (request ${context.requestId})`);
}

/** `notFoundPage`: what answers a path no route has, when it is a page rather than an API call (the
 * console's own "not found"); null leaves it to the envelope. */
export function errorsPlugin(deps: {
  log: Logger;
  requestIdOf: (request: Request) => string;
  allowedMethods: (path: string) => string[];
  notFoundPage?: (request: Request, path: string) => Response | Promise<Response> | null;
}) {
  return new Elysia({ name: 'revintel/errors' }).onError({ as: 'global' }, ({ code, error, request, path }) => {
    if (code === 'NOT_FOUND' && deps.notFoundPage && deps.allowedMethods(path).length === 0) {
      const page = deps.notFoundPage(request, path);
      if (page) return page;
    }
    return errorResponse(error, {
      log: deps.log,
      requestId: deps.requestIdOf(request),
      method: request.method,
      path,
      allowedMethods: deps.allowedMethods,
      elysiaCode: code,
    });
  });
}
