// The one JSON body parser: enforces the size limit while reading, requires a JSON content type on
// API endpoints (415 otherwise), and turns a parse failure into a 400 that says so. A route that
// takes a body names it as its `parse` hook, at the limit its declaration names (lib/routes.ts):
// a parse hook on every route would cost GETs too. Webhook routes bring their own parser (they
// need the raw bytes for signatures).
import { timedWork } from '../db/embedded-stalls.ts';
import { AppError } from '../lib/errors.ts';
import { isJsonContentType, readBodyLimited } from '../lib/body.ts';
import { parseJsonBody } from '../lib/json.ts';
import { bodyLimit, type RouteDeclaration } from '../lib/routes.ts';
import type { Config } from '../config.ts';

/** The parse hook of a route that takes a JSON body, at its declared limit. */
export function jsonBody(
  route: Pick<RouteDeclaration, 'body'>,
  config: Pick<Config, 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook'>,
) {
  const limit = bodyLimit(route.body, config);
  return ({ request }: { request: Request }) => readJsonBody(request, limit);
}

/** The request's JSON body: null when empty; 413 over `limit`, 415 when not declared JSON, 400 when
 * it does not parse, is nested too deep or holds text that cannot be stored (lib/json.ts). */
export async function readJsonBody(request: Request, limit: number, options: { storedAsText?: boolean } = {}): Promise<unknown> {
  const contentType = request.headers.get('content-type');
  const bytes = await readBodyLimited(request, limit);
  if (bytes.byteLength === 0) return null;
  if (!isJsonContentType(contentType)) {
    throw new AppError('unsupported_media_type', `Content-Type must be application/json, got "${contentType ?? 'none'}"`);
  }
  let text: string;
  try {
    text = fatalUtf8.decode(bytes);
  } catch {
    throw new AppError('malformed_json', 'Request body is not valid UTF-8');
  }
  return timedWork('json body parse', () => parseJsonBody(text, options));
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });
