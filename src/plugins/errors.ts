// One onError for the whole app: every failure leaves as the envelope with the status of SPEC §3,
// with the request id and rate-limit headers; only 5xx are logged, and never with internals in the
// answer.
import { Elysia } from 'elysia';
import { AppError, type ErrorCode, ERROR_STATUS } from '../lib/errors.ts';
import { failure } from '../lib/envelope.ts';
import type { Logger } from '../lib/log.ts';
import type { RequestStates } from './request-state.ts';
import { DatabaseTimeoutError } from '../db/client.ts';

export function envelopeResponse(status: number, message: string, code: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(failure(message, code)), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/** TypeBox's errors name the field by JSON pointer (`/limit`); say it the way a client wrote it. */
function validationMessage(error: unknown): string {
  const e = error as { all?: { path?: string; message?: string; summary?: string }[]; type?: string };
  const first = e.all?.[0];
  const where = e.type === 'query' ? 'query parameter' : e.type === 'params' ? 'path parameter' : e.type === 'headers' ? 'header' : 'field';
  if (!first) return 'Invalid request';
  const field = (first.path ?? '').replace(/^\//, '').replaceAll('/', '.');
  const rule = (first.message ?? first.summary ?? 'is invalid').replace(/^Expected/, 'expected');
  return field ? `Invalid ${where} "${field}": ${rule}` : `Invalid ${e.type ?? 'request'}: ${rule}`;
}

function isDatabaseDown(error: unknown): boolean {
  if (error instanceof DatabaseTimeoutError) return true;
  const code = (error as { code?: string })?.code;
  return code === 'ECONNREFUSED' || code === 'CONNECTION_CLOSED' || code === 'CONNECTION_ENDED' || code === 'CONNECT_TIMEOUT' || code === '57P01' || code === '57P03';
}

export function errorsPlugin(deps: { log: Logger; states: RequestStates; allowedMethods: (path: string) => string[] }) {
  return new Elysia({ name: 'revintel/errors' }).onError({ as: 'global' }, ({ code, error, request, path }) => {
    const state = deps.states.get(request);
    const headers: Record<string, string> = { ...(state?.headers ?? {}) };
    if (state) headers['x-request-id'] = state.id;
    const answer = (errorCode: ErrorCode, message: string, extra: Record<string, string> = {}) => {
      if (state) state.errorStatus = ERROR_STATUS[errorCode];
      return envelopeResponse(ERROR_STATUS[errorCode], message, errorCode, { ...headers, ...extra });
    };

    // Elysia wraps whatever a parse hook throws in its ParseError: ours (413, 415) is the cause.
    const appError = error instanceof AppError ? error : (error as { cause?: unknown })?.cause instanceof AppError ? ((error as { cause: AppError }).cause) : null;
    if (appError) return answer(appError.code, appError.message, appError.headers);
    switch (code) {
      case 'NOT_FOUND': {
        const allowed = deps.allowedMethods(path);
        if (allowed.length > 0) {
          return answer('method_not_allowed', `Method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, { allow: allowed.join(', ') });
        }
        return answer('not_found', `Route ${request.method} ${path} not found`);
      }
      case 'VALIDATION':
        return answer('validation_failed', validationMessage(error));
      case 'PARSE':
        return answer('malformed_json', 'Malformed JSON in request body');
      case 'INVALID_COOKIE_SIGNATURE':
        return answer('bad_request', 'Invalid cookie signature');
    }
    if (isDatabaseDown(error)) {
      deps.log.error('database unavailable', { request_id: state?.id, error: String((error as Error)?.message ?? error) });
      return answer('database_unavailable', `Database unavailable, retry shortly (request ${state?.id})`, { 'retry-after': '5' });
    }
    deps.log.error('unhandled error', {
      request_id: state?.id,
      path,
      error: (error as Error)?.message ?? String(error),
      stack: (error as Error)?.stack,
    });
    return answer('internal', `Internal server error (request ${state?.id ?? 'unknown'})`);
  });
}
