// What JSON from outside may be before anything reads it further: nested at most MAX_JSON_DEPTH
// levels, and text PostgreSQL can store. Deeper values cost Elysia's validation time with the
// square of the depth, and handed to PGlite they overflow the engine's stack inside PostgreSQL's
// recursive jsonb code, which wedges the embedded database (db/embedded.ts). PostgreSQL's text
// holds no U+0000 and UTF-8 has no lone surrogate: such strings are refused here, by name, instead
// of failing in SQL as a 500.
import { AppError } from './errors.ts';

export const MAX_JSON_DEPTH = 64;

/** Whether `text` opens more than `max` arrays or objects at once: one pass, no allocation, strings
 * skipped (a bracket inside a string is text). */
export function jsonDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) return true;
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return false;
}

/** Why a string cannot be stored, or null. */
export function textProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (!value.isWellFormed()) return 'must not contain an unpaired UTF-16 surrogate (\\ud800–\\udfff)';
  return null;
}

/** The first value in parsed JSON that cannot be stored — a string (value or key) PostgreSQL cannot
 * hold, or nesting deeper than MAX_JSON_DEPTH — with the field's path as a client writes it
 * (`metadata.notes`, `tickets.3.subject`), or null. */
export function jsonValueProblem(value: unknown, path = '', depth = 0): { field: string; problem: string } | null {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { field: path, problem } : null;
  }
  if (value === null || typeof value !== 'object') return null;
  if (depth >= MAX_JSON_DEPTH) return { field: path, problem: `is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = jsonValueProblem(value[i], path ? `${path}.${i}` : String(i), depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const key in value) {
    const field = path ? `${path}.${key}` : key;
    const keyProblem = textProblem(key);
    if (keyProblem) return { field, problem: `has a name that ${keyProblem}` };
    const found = jsonValueProblem((value as Record<string, unknown>)[key], field, depth + 1);
    if (found) return found;
  }
  return null;
}

export const tooDeep = () =>
  new AppError('validation_failed', `Request body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`);

/** Parses a request body's text: 400 when it is not JSON, nested too deep, or (unless `storedAsText`:
 * a body kept as JSON text, where such strings stay escaped, for the worker to clean) holds a
 * string that cannot be stored. Linear in the size of the text. */
export function parseJsonBody(text: string, options: { storedAsText?: boolean } = {}): unknown {
  if (jsonDeeperThan(text, MAX_JSON_DEPTH)) throw tooDeep();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('malformed_json', 'Malformed JSON in request body');
  }
  const found = options.storedAsText ? null : jsonValueProblem(value);
  if (found)
    throw new AppError(
      'validation_failed',
      found.field ? `Invalid field "${found.field}": ${found.problem}` : `Invalid request body: ${found.problem}`,
    );
  return value;
}
