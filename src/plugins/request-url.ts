// The one reading of a request's URL that every step uses. Bun builds `request.url` from the Host
// header, and two things read a path out of it differently: Elysia searches for '/' from the 11th
// character (it assumes "http://" and a host of four characters or more), so with a Host of one to
// three characters it read `/api/me` out of `http://x/ab/api/me` while the gate, reading after the
// host, saw `/ab/api/me` — a public path. With no Host, or one holding '/' or a space, Bun gives a
// bare path (`/api/me`); with one `new URL()` cannot parse (`[`, a port past 65535), URL-reading
// code threw. So a URL that is not plainly `http://<host>/…` with a host of four or more is replaced, on the request
// itself (the body is untouched), by the same path on `http://localhost`.
import { AppError } from '../lib/errors.ts';

/** Where the path of an absolute URL starts: after "scheme://host". */
const pathStart = (url: string) => url.indexOf('/', url.indexOf('//') + 2);

/** A host name, IPv4 or bracketed IPv6 address, with an optional port. */
const PLAIN_HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** A host the regex admits that `new URL()` still refuses: a port past 65535 (`127.0.0.1:99999`, which
 * Bun puts in `request.url` as sent), or a bracketed IPv6 literal that is not one (`[1:2:3]`). */
function unreadableHost(host: string): boolean {
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && colon > host.lastIndexOf(']') && Number(host.slice(colon + 1)) > 65_535) return true;
  return host.charCodeAt(0) === 91 && !URL.canParse(`http://${host}/`); // '['
}

/** Makes `request.url` read alike by every step (see above) and returns its path. Runs first, on
 * every request: the common URL costs two searches and a short regex. */
export function settleUrl(request: Request): string {
  const url = request.url;
  const relative = url.charCodeAt(0) === 47; // '/': Bun had no usable Host
  const start = relative ? 0 : pathStart(url);
  if (!relative && start >= 0 && url.indexOf('/', 11) === start) {
    const host = url.slice(url.indexOf('//') + 2, start);
    if (PLAIN_HOST.test(host) && !unreadableHost(host)) return pathOf(url);
  }
  const target = start < 0 ? '/' : url.slice(start);
  Object.defineProperty(request, 'url', { value: `http://localhost${target}` });
  return pathOf(request.url);
}

/** The path of an absolute URL without building a URL object (this runs on every request). */
function pathOf(url: string): string {
  const start = pathStart(url);
  if (start < 0) return '/';
  const end = url.indexOf('?', start);
  return url.slice(start, end < 0 ? undefined : end);
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
  for (const [name, value] of queryPairs(url)) {
    if (!decodesCleanly(name)) throw new AppError('bad_request', 'A query parameter name is not valid percent-encoded UTF-8 text (no %00)');
    if (!decodesCleanly(value))
      throw new AppError(
        'validation_failed',
        `Invalid query parameter "${decodedName(name)}": must be valid percent-encoded UTF-8 text (no %00)`,
      );
  }
}

/** `access_token` in the query, however it is spelt (`access%5Ftoken`, `ACCESS_TOKEN`): keys in
 * URLs end up in logs and browser histories. */
export function hasKeyInQuery(url: string): boolean {
  for (const [name] of queryPairs(url)) if (decodedName(name)?.trim().toLowerCase() === 'access_token') return true;
  return false;
}

/** The query's name=value pairs, still percent-encoded. */
function* queryPairs(url: string): Generator<[string, string]> {
  const queryAt = url.indexOf('?');
  if (queryAt < 0) return;
  for (const pair of url.slice(queryAt + 1).split('&')) {
    const eq = pair.indexOf('=');
    yield eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
  }
}

/** A parameter name as a form decoder reads it, or null when it does not decode. */
function decodedName(name: string): string | null {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return null;
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
