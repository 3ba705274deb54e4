// The one JSON body parser: enforces the size limit while reading, requires a JSON content type on
// API endpoints (415 otherwise), and turns a parse failure into a 400 that says so. Modules whose
// routes take a body `.use()` it (scoped to them: a parse hook on every route costs GETs too).
// Webhook routes bring their own parser (they need the raw bytes for signatures).
import { Elysia } from 'elysia';
import { AppError } from '../lib/errors.ts';
import { bodyLimitFor, isJsonContentType, readBodyLimited } from '../lib/body.ts';
import { parseJsonBody } from '../lib/json.ts';
import type { Config } from '../config.ts';

/** `seed` tells Elysia apart the modules that use it: a named plugin is installed once per name and
 * seed, and each module needs its own scoped hook. */
export function bodyPlugin(config: Pick<Config, 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook'>, seed: string) {
  return new Elysia({ name: 'revintel/body', seed }).onParse({ as: 'scoped' }, ({ request, path }) => readJsonBody(request, bodyLimitFor(path, config)));
}

/** The request's JSON body: null when empty; 413 over `limit`, 415 when not declared JSON, 400 when
 * it does not parse, is nested too deep or holds text that cannot be stored (lib/json.ts). For
 * routes outside this plugin's module (it is installed once, by name). */
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
  return parseJsonBody(text, options);
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });
