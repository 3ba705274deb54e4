import { AppError } from './errors.ts';

/** Query parameters a list does not know are refused, naming them: a typo such as `stauts=` must
 * not silently return everything. (Elysia does not enforce `additionalProperties: false` on the
 * query.) */
export function refuseUnknownParams(url: string, known: readonly string[]): void {
  if (!url.includes('?')) return;
  for (const name of new URL(url).searchParams.keys()) {
    if (!known.includes(name)) {
      throw new AppError('validation_failed', `Unknown query parameter "${name}"; known: ${known.join(', ')}`);
    }
  }
}

/** `limit`: an integer from 1 to `max`, or the default when absent. */
export function parseLimit(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new AppError('validation_failed', `Invalid query parameter "limit": must be an integer from 1 to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

/** A `q` parameter as an ILIKE pattern: "contains", with the user's %, _ and backslash taken literally. */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
