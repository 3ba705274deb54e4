// What a route is besides its handler: who may call it, whose budget it spends, how large a body it
// may send and what it answers. Each feature module declares its routes next to their handlers and
// registers them from the same objects; the gate, the body limits and the OpenAPI document
// are built from these declarations, so no path string lives outside the module that owns it.
import type { TSchema } from '@sinclair/typebox';
import type { Config } from '../config.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call and whose budget a call spends; the pairs that make sense, and no others.
 * - `key`: an API key, or a console session (the `revintel_session` cookie, with the CSRF checks
 *   of plugins/gate.ts on state-changing methods), checked by the gate before the body is read;
 *   the organisation's budget. `who` narrows it: `session` (a person signed in to the console),
 *   `admin-session` (an admin signed in: keys, users, connector secrets — never an API key, so a
 *   leaked key cannot mint its own replacements), `admin` (a key, or an admin signed in: not a
 *   member's session).
 * - `platform-signature`: the signed-webhook path (modules/signed-webhooks) proves the sender over
 *   the raw bytes and counts the call on the budget `counted` names — the connector's, or the
 *   platform installation's — once it knows who sent it; a refused signature spends its address's
 *   failures. Handlers never count. The gate never reads its `Authorization` header as an API key.
 * - `none`: public; the client address's budget, or for probes only a look at it. */
export type Access =
  | { auth: 'key'; counted: 'organisation'; who?: Who }
  | { auth: 'platform-signature'; counted: 'connector' | 'installation'; verifiedBy: PlatformVerifier }
  | { auth: 'none'; counted: 'address' | 'not-counted' };

/** Who of those with the organisation's credentials may call a route (absent: a key or a session). */
export type Who = 'session' | 'admin-session' | 'admin';

/** How a platform route proves its sender (the OpenAPI document's security scheme of it). */
export type PlatformVerifier = 'connector' | 'slack' | 'google-chat' | 'whatsapp' | 'billing';

/** A named body limit (config). `none`: the route reads no body; a declared length is still held
 * to the API limit, as for every request. */
export type BodyKind = 'api' | 'import' | 'webhook' | 'none';

export type Rules = Access & { body: BodyKind };

/** The rules of a route a platform signs (the signed-webhook path reads its `counted`). */
export type PlatformRules = Extract<Access, { auth: 'platform-signature' }> & { body: BodyKind };

export type RouteDeclaration = Rules & {
  method: Method;
  /** Elysia's pattern: `/api/customers/:id`. */
  path: string;
  /** The success answer's `data` (the whole answer when `envelope` is false). Documentation, never
   * checked per request: response validation would cost every request. */
  response: TSchema;
  /** The answer is not the envelope (the ticket webhook's acknowledgement). */
  envelope?: false;
  summary?: string;
  /** The OpenAPI tag; by default the path's segment after `/api/`, else `probes`. */
  tag?: string;
  /** The JSON body a handler checks itself (absent it is `{}`, unless `required`; or checked by
   * the handler for its own wording): Elysia does not hold its schema, so the OpenAPI document
   * learns it from here. */
  checkedBody?: { schema: TSchema; required: boolean };
  /** The answer's media types when it is not JSON (the console's pages and assets). */
  produces?: readonly string[];
  /** Query parameters the handler reads itself (a route Elysia does not validate). */
  checkedQuery?: TSchema;
  /** Error statuses the route answers besides those its rules imply (a 404 for an unknown connector). */
  errors?: readonly number[];
};

/** The rules of paths under `prefix` that match no declared route (404s): an unknown path under
 * the API still needs a key, so it is a 401 without one and a 404 with one. */
export type ScopeDeclaration = Rules & { prefix: string };

/** A module mounted from outside (tests' fixtures) with the declarations of its routes. */
export interface DeclaredModule<App = unknown> {
  app: App;
  declarations: readonly RouteDeclaration[];
}

/** A body a handler reads itself and takes as `{}` when absent. */
export const optional = (schema: TSchema) => ({ schema, required: false }) as const;

export function bodyLimit(kind: BodyKind, config: Pick<Config, 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook'>): number {
  return kind === 'import' ? config.bodyLimitImport : kind === 'webhook' ? config.bodyLimitWebhook : config.bodyLimitApi;
}

/** Outside every scope (the probes aside, nothing is served there): public, on the address. */
const OUTSIDE: Rules = { auth: 'none', counted: 'address', body: 'none' };

/** `/api/keys/:id` -> a matcher of the paths Elysia routes to it (it takes one trailing slash). */
export function patternMatcher(pattern: string): RegExp {
  const source = pattern
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

export interface RouteTable {
  /** The rules a request is judged by: its route's; for a method the path does not have (405),
   * the path's first route's; else the longest scope's that holds it; else public. */
  rulesFor(method: string, path: string): Rules;
}

/** Builds the per-request lookup once: static paths in a Map (one lookup), parameterised patterns
 * compiled once and tried only when the path starts with their literal head. */
export function routeTable(routes: readonly RouteDeclaration[], scopes: readonly ScopeDeclaration[]): RouteTable {
  const exact = new Map<string, RouteDeclaration[]>();
  const patterns: { head: string; matcher: RegExp; routes: RouteDeclaration[] }[] = [];
  const byPattern = new Map<string, RouteDeclaration[]>();
  const seen = new Set<string>();
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) throw new Error(`Route ${key} is declared twice`);
    seen.add(key);
    const shape = route.path.replace(/:[^/]+/g, ':');
    let group = byPattern.get(shape);
    if (!group) {
      byPattern.set(shape, (group = []));
      const param = route.path.indexOf(':');
      if (param < 0) exact.set(route.path, group);
      else patterns.push({ head: route.path.slice(0, param), matcher: patternMatcher(route.path), routes: group });
    }
    group.push(route);
  }
  const ordered = [...scopes].sort((a, b) => b.prefix.length - a.prefix.length);

  const declaredAt = (path: string): RouteDeclaration[] | undefined => {
    const found = exact.get(path);
    if (found) return found;
    if (path.length > 1 && path.endsWith('/')) {
      const trimmed = exact.get(path.slice(0, -1));
      if (trimmed) return trimmed;
    }
    for (const pattern of patterns) if (path.startsWith(pattern.head) && pattern.matcher.test(path)) return pattern.routes;
    return undefined;
  };

  return {
    rulesFor(method, path) {
      const declared = declaredAt(path);
      if (declared) {
        const wanted = method === 'HEAD' ? 'GET' : method;
        for (const route of declared) if (route.method === wanted) return route;
        return declared[0]!;
      }
      for (const scope of ordered) if (path.startsWith(scope.prefix)) return scope;
      return OUTSIDE;
    },
  };
}

/** What differs between the routes a server registered and the ones declared: each line names a
 * route registered without a declaration, or a declaration with no route. */
export function undeclaredRoutes(registered: readonly { method: string; path: string }[], declared: readonly RouteDeclaration[]): string[] {
  const keyOf = (route: { method: string; path: string }) => `${route.method} ${route.path}`;
  const declaredKeys = new Set(declared.map(keyOf));
  const registeredKeys = new Set(registered.map(keyOf));
  return [
    ...[...registeredKeys].filter((key) => !declaredKeys.has(key)).map((key) => `${key} is registered but not declared`),
    ...[...declaredKeys].filter((key) => !registeredKeys.has(key)).map((key) => `${key} is declared but not registered`),
  ];
}
