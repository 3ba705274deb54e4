// The one reading of a request's URL that every step uses. Elysia finds the path by searching for
// '/' from the 11th character (it assumes "http://" and a host of four characters or more): with a
// Host of one to three characters it reads `/api/me` out of `http://x/ab/api/me` while the gate,
// reading after the host, saw `/ab/api/me` — a public path. So the path is read here once, and a
// URL Elysia would misread is handed to it rewritten onto a host it reads right.
import { AppError } from '../lib/errors.ts';

/** Where the path of an absolute URL starts: after "scheme://host". */
const pathStart = (url: string) => url.indexOf('/', url.indexOf('//') + 2);

/** The path of an absolute URL without building a URL object (this runs on every request). */
export function pathOf(url: string): string {
  const start = pathStart(url);
  if (start < 0) return '/';
  const end = url.indexOf('?', start);
  return url.slice(start, end < 0 ? undefined : end);
}

/** The request as Elysia must see it to route the path `pathOf` read: the same request, or a copy
 * on a host Elysia's reading agrees with. */
export function forRouter(request: Request): Request {
  const url = request.url;
  const start = pathStart(url);
  if (start >= 0 && url.indexOf('/', 11) === start) return request;
  return new Request(`http://localhost${start < 0 ? '/' : url.slice(start)}`, request);
}

/** Longest URL served (8 KiB, as most servers and proxies): a longer one is refused with 414. */
export const MAX_URL_LENGTH = 8 * 1024;
/** Largest header block accepted (16 KiB, Bun's default, which the binary raises so that the
 * refusal below is ours, in the envelope). */
export const MAX_HEADER_BYTES = 16 * 1024;

/** 414 for a URL over MAX_URL_LENGTH, 431 for headers over MAX_HEADER_BYTES. */
export function checkRequestSize(request: Request): void {
  if (request.url.length > MAX_URL_LENGTH) throw new AppError('uri_too_long', `The URL is longer than ${MAX_URL_LENGTH} bytes`);
  let size = 0;
  for (const [name, value] of request.headers) size += name.length + value.length + 4;
  if (size > MAX_HEADER_BYTES) throw new AppError('headers_too_large', `The request headers are larger than ${MAX_HEADER_BYTES} bytes`);
}

/** A 400 for a URL whose percent-encoding does not decode to text we can store and match: invalid
 * UTF-8 (a lone surrogate encoded, %FF) or a NUL (%00), in the path or a query parameter — else
 * they reach SQL and fail there. Only URLs with a '%' are looked at. */
export function checkUrlEncoding(url: string): void {
  if (!url.includes('%')) return;
  const start = pathStart(url);
  const queryAt = url.indexOf('?', start);
  const path = url.slice(start, queryAt < 0 ? undefined : queryAt);
  if (!decodesCleanly(path)) throw new AppError('bad_request', 'The request path is not valid percent-encoded UTF-8 text (no %00)');
  if (queryAt < 0) return;
  for (const pair of url.slice(queryAt + 1).split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    const value = eq < 0 ? '' : pair.slice(eq + 1);
    if (!decodesCleanly(name)) throw new AppError('bad_request', 'A query parameter name is not valid percent-encoded UTF-8 text (no %00)');
    if (!decodesCleanly(value)) {
      throw new AppError('validation_failed', `Invalid query parameter "${decodeURIComponent(name.replaceAll('+', ' '))}": must be valid percent-encoded UTF-8 text (no %00)`);
    }
  }
}

function decodesCleanly(part: string): boolean {
  if (!part.includes('%')) return true;
  try {
    return !decodeURIComponent(part).includes('\u0000');
  } catch {
    return false;
  }
}
