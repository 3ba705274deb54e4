// How the credential is read: @elysiajs/bearer's own extraction, called as a function.
//
// Mounted as a plugin, @elysiajs/bearer registers a global `derive` that destructures `headers`,
// which makes Elysia build a headers object for every request on every route: measured here at
// 8–10 µs of CPU per request, a sixth of what serving GET /api/me costs in all. The gate reads the
// key before routing anyway (it must count every request, matched or not), so it takes the
// plugin's derive function and applies it to the one header it needs.
import { bearer } from '@elysiajs/bearer';

type Derive = (context: { query: Record<string, string | undefined>; headers: Record<string, string | undefined> }) => { bearer?: string };

const derive = (bearer().event as { transform?: { fn: unknown }[] }).transform?.[0]?.fn as Derive | undefined;
if (typeof derive !== 'function') {
  throw new Error('@elysiajs/bearer no longer exposes its derive function: revisit src/plugins/bearer-token.ts');
}

const NO_QUERY = Object.freeze({}) as Record<string, string | undefined>;

/** The key in an Authorization header: undefined without a header, null for a header that is not a
 * bearer credential. Keys in the URL are never read here (the gate refuses them). */
export function bearerToken(authorization: string | null): string | undefined | null {
  if (authorization === null) return undefined;
  return derive!({ query: NO_QUERY, headers: { authorization } }).bearer ?? null;
}
