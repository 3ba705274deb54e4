// The OpenAPI 3.1 document (docs/api.md "API reference"), made from what the server really runs: every
// declared route (lib/routes.ts: who may call, whose budget, the body limit, the success answer's
// schema) joined with the schemas Elysia validates its path, query and body against. Nothing here
// is written by hand per route, so the document cannot drift from the routes.
import { ERROR_STATUS } from '../../lib/errors.ts';
import type { PlatformVerifier, RouteDeclaration } from '../../lib/routes.ts';
import { MAX_HEADER_BYTES, MAX_URL_LENGTH } from '../../plugins/request-url.ts';
import { REQUEST_EXAMPLES } from './examples.ts';
import { describeParameter } from './parameters.ts';
import { TAG_DESCRIPTIONS } from './tags.ts';

/** A route as Elysia registered it: its validators' schemas in `hooks`. */
export interface RegisteredRoute {
  method: string;
  path: string;
  hooks?: { params?: unknown; query?: unknown; body?: unknown };
}

/** How each platform route proves its sender (the declaration's `verifiedBy`). */
const PLATFORM_SCHEMES: Record<PlatformVerifier, Record<string, string>> = {
  connector: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Hub-Signature-256',
    description:
      "The connector's webhook secret: an HMAC-SHA256 of the raw body in the header its platform uses (X-Hub-Signature-256, X-Zendesk-Webhook-Signature, X-HubSpot-Signature-v3, …), or the connector's token; a connector without a secret takes unsigned events. See docs/tickets.md.",
  },
  slack: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Slack-Signature',
    description:
      "`v0=` HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{raw body}` with the Slack app's signing secret; the timestamp within 300 s.",
  },
  'google-chat': {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      "Google's RS256 ID token for the Chat app (issuer, audience and signer checked; the add-on's systemIdToken when there is no header).",
  },
  whatsapp: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Hub-Signature-256',
    description: '`sha256=` HMAC-SHA256 of the raw body with the Meta app secret.',
  },
  billing: {
    type: 'apiKey',
    in: 'header',
    name: 'Stripe-Signature',
    description:
      "The billing connector's proof: Stripe's `t=…,v1=…` (HMAC-SHA256 of `{t}.{raw body}` with the endpoint secret, or the previous one within its grace; t within BILLING_TOLERANCE_S), or for Chargebee the connector's HTTP Basic credentials in Authorization. See docs/billing.md.",
  },
};

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': {
    description: 'The limit of the window in force (the one with fewest requests left).',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: 'Requests left in that window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When that window ends, in Unix seconds.', schema: { type: 'integer' } },
  'X-Request-Id': { description: 'The request id: yours if you sent one, else a generated `req_…`.', schema: { type: 'string' } },
};

const ERROR_ANSWERS: Record<number, string> = {
  400: 'A field, query or path parameter breaks its rule (the message names it), or the body is not valid JSON',
  401: 'No usable credentials',
  403: 'Not allowed for this plan or role',
  404: 'No such record in your organisation',
  409: 'The change collides with the current state (the message says with what)',
  413: 'The body is over its limit',
  414: `The URL is longer than ${MAX_URL_LENGTH} bytes`,
  415: 'A body that is not application/json',
  422: 'Well-formed but unusable',
  429: 'Over a rate limit; see Retry-After',
  431: `The request headers are larger than ${MAX_HEADER_BYTES} bytes`,
  500: 'Our fault: the message carries the request id, never internals',
  503: 'The database (or a service the request depends on) is not answering, or the request ran too long: retry after Retry-After',
};

/** The codes each status may carry (lib/errors.ts). */
const codesOf = (status: number) =>
  Object.entries(ERROR_STATUS)
    .filter(([, s]) => s === status)
    .map(([code]) => code);

type Schema = Record<string, unknown>;

/** Keys whose value is a map of names to schemas, and keys whose value is a schema or a list of them. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_SLOTS = new Set([
  'items',
  'prefixItems',
  'additionalProperties',
  'unevaluatedProperties',
  'anyOf',
  'allOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
]);
/** Our validation formats by the standard names generators know. */
const STANDARD_FORMATS: Record<string, string> = { 'calendar-day': 'date', instant: 'date-time' };

/** A TypeBox schema as a client should read it: plain JSON Schema (symbols and transforms dropped),
 * without our `error` wording (not a JSON Schema keyword: it becomes the description when there is
 * none), a union of string constants as an `enum`, a boolean query flag as a boolean. */
function documented(schema: unknown): Schema {
  return clean(JSON.parse(JSON.stringify(schema ?? {})) as Schema);
}

function clean(schema: Schema): Schema {
  const { error, ...rest } = schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(rest)) {
    if (SCHEMA_MAPS.has(key) && value && typeof value === 'object')
      out[key] = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, clean(inner as Schema)]));
    else if (SCHEMA_SLOTS.has(key) && Array.isArray(value)) out[key] = value.map((inner) => clean(inner as Schema));
    else if (SCHEMA_SLOTS.has(key) && value && typeof value === 'object') out[key] = clean(value as Schema);
    else out[key] = value;
  }
  if (typeof error === 'string' && out.description === undefined) out.description = error[0]!.toUpperCase() + error.slice(1);
  if (typeof out.format === 'string' && STANDARD_FORMATS[out.format]) out.format = STANDARD_FORMATS[out.format];
  const members = out.anyOf as Schema[] | undefined;
  if (members?.length && members.every((m) => typeof m.const === 'string' && Object.keys(m).every((k) => k === 'const' || k === 'type'))) {
    const { anyOf: _, ...others } = out;
    return { ...others, type: 'string', enum: members.map((m) => m.const) };
  }
  // t.BooleanString(): `true` or `false` in the query string.
  if (members?.length === 2 && members[0]!.type === 'boolean' && members[1]!.format === 'boolean') {
    const { anyOf: _, ...others } = out;
    return { ...others, type: 'boolean' };
  }
  return out;
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function operationId(route: RouteDeclaration): string {
  // A page outside /api names its tag first: the console's /customers is not /api/customers.
  const words = [...(route.tag && !route.path.startsWith('/api/') ? [route.tag] : []), ...route.path.split('/')]
    .filter((part) => part && part !== 'api')
    .map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [route.method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}

const tagOf = (route: RouteDeclaration) => route.tag ?? (route.path.startsWith('/api/') ? route.path.split('/')[2]! : 'probes');

/** The path and query parameters: those the route validates (or its handler checks, per its
 * declaration), each path placeholder (a console page's reads its own), described by name. */
function parameters(route: RouteDeclaration, registered: RegisteredRoute | undefined): Schema[] {
  const path = openApiPath(route.path);
  const out: Schema[] = [];
  const pathNames = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  const sources = {
    path: registered?.hooks?.params ?? {
      properties: Object.fromEntries(pathNames.map((name) => [name, { type: 'string', minLength: 1 }])),
    },
    query: registered?.hooks?.query ?? route.checkedQuery,
  };
  for (const where of ['path', 'query'] as const) {
    const schema = documented(sources[where]);
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, property] of Object.entries(properties)) {
      const { description: own, ...validated } = property;
      const known = describeParameter(name, path);
      const description = known.description ?? own;
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(description ? { description } : {}),
        schema: known.schema ?? validated,
        ...(known.example !== undefined ? { example: known.example } : {}),
      });
    }
  }
  return out;
}

function successSchema(route: RouteDeclaration): Record<string, unknown> {
  const data = documented(route.response);
  if (route.envelope === false) return data;
  const list = data.type === 'array';
  return {
    type: 'object',
    required: ['success', 'data', 'error'],
    properties: {
      success: { const: true },
      data,
      error: { type: 'null' },
      ...(list ? { meta: { $ref: '#/components/schemas/PageMeta' } } : {}),
    },
  };
}

function errorStatuses(route: RouteDeclaration, registered: RegisteredRoute | undefined): number[] {
  const statuses = new Set<number>([500, 503]);
  if (route.auth !== 'none') statuses.add(401);
  if (route.counted !== 'not-counted') statuses.add(429);
  if (registered?.hooks?.params || registered?.hooks?.query || route.body !== 'none') statuses.add(400);
  for (const status of [414, 431]) statuses.add(status); // every request: see plugins/request-url.ts
  for (const status of route.errors ?? []) statuses.add(status);
  if (route.checkedQuery || route.checkedBody) statuses.add(400);
  if (route.path.includes(':')) statuses.add(404);
  if (route.body !== 'none') statuses.add(413);
  if (route.body === 'api') statuses.add(415);
  if (route.auth === 'key' && route.method !== 'GET') for (const s of [403, 409, 422]) statuses.add(s);
  if (route.auth === 'key' && route.who) statuses.add(403);
  return [...statuses].sort((a, b) => a - b);
}

function operation(route: RouteDeclaration, registered: RegisteredRoute | undefined): Record<string, unknown> {
  const success = route.method === 'GET' ? '200' : '2XX';
  const content = route.produces
    ? Object.fromEntries(route.produces.map((type) => [type, { schema: { type: 'string' } }]))
    : route.envelope === false && (route.response as { type?: unknown }).type === 'string'
      ? { 'text/plain': { schema: { type: 'string' } } }
      : { 'application/json': { schema: successSchema(route) } };
  const responses: Record<string, unknown> = {
    [success]: {
      description: route.method === 'GET' ? 'OK' : 'Done: 200, or 201 for a record created, or 202 for work queued',
      headers: mapRefs(
        route.counted === 'not-counted'
          ? ['X-Request-Id']
          : ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id'],
      ),
      content,
    },
  };
  for (const status of errorStatuses(route, registered)) responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
  const body = registered?.hooks?.body ? { schema: registered.hooks.body, required: true } : route.checkedBody;
  const example = REQUEST_EXAMPLES[`${route.method} ${route.path}`];
  const verifiedBy = route.auth === 'platform-signature' ? route.verifiedBy : undefined;
  const described = parameters(route, registered);
  return {
    operationId: operationId(route),
    summary: route.summary,
    tags: [tagOf(route)],
    security:
      route.auth === 'key'
        ? route.who && route.who !== 'admin'
          ? [{ session: [] }]
          : [{ bearer: [] }, { session: [] }]
        : verifiedBy
          ? [{ [verifiedBy]: [] }]
          : [],
    ...(described.length ? { parameters: described } : {}),
    ...(body
      ? {
          requestBody: {
            required: body.required,
            ...(body.required ? {} : { description: 'May be left out: an empty body is `{}`' }),
            content: { 'application/json': { schema: documented(body.schema), ...(example ? { example } : {}) } },
          },
        }
      : route.body === 'webhook' || route.body === 'import'
        ? {
            requestBody: {
              required: true,
              description: 'The raw body, as the platform sends it (docs/tickets.md, docs/arr-data.md)',
              content: { '*/*': { schema: {} } },
            },
          }
        : {}),
    responses,
  };
}

const mapRefs = (names: string[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

export function openApiDocument(input: {
  declarations: readonly RouteDeclaration[];
  routes: readonly RegisteredRoute[];
  version: string;
  serverUrl: string | null;
}): Record<string, unknown> {
  const registered = new Map(input.routes.map((route) => [`${route.method} ${route.path}`, route]));
  const paths: Record<string, Record<string, unknown>> = {};
  const sorted = [...input.declarations].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  for (const route of sorted) {
    const path = (paths[openApiPath(route.path)] ??= {});
    path[route.method.toLowerCase()] = operation(route, registered.get(`${route.method} ${route.path}`));
  }
  const errorBody = {
    type: 'object',
    required: ['success', 'data', 'error'],
    properties: {
      success: { const: false },
      data: { type: 'null' },
      error: { type: 'string', description: 'For people: what went wrong, naming the field' },
      code: { type: 'string', description: 'Stable, for programs' },
      meta: { type: 'object' },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'revintel API',
      version: input.version,
      description:
        "Revenue intelligence: ARR data, support tickets and their intelligence, churn predictions and agent actions. Every answer is the envelope `{success, data, error}` (the ticket webhook's acknowledgement aside); lists page with `limit` and an opaque `cursor` (`meta.next_cursor`, and a `Link` header). Every response carries the rate-limit headers of the budget it was counted on.",
    },
    // PUBLIC_URL when set; else this server, wherever the document was fetched from.
    servers: [
      input.serverUrl
        ? { url: input.serverUrl.replace(/\/+$/, '') }
        : { url: '/', description: 'The server that answered this document (set PUBLIC_URL to name it)' },
    ],
    tags: [...new Set(sorted.map((route) => tagOf(route)))].map((name) => ({
      name,
      description: TAG_DESCRIPTIONS[name] ?? `${name} routes`,
    })),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key (`rvk_…`), from `revintel keys create` or the console' },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'revintel_session',
          description:
            "A console session (POST /api/auth/sign-in or /api/auth/accept), used when no Authorization header is sent. POST, PUT, PATCH and DELETE must also send `X-CSRF-Token` (the `csrf_token` of the sign-in answer or GET /api/me) and an `Origin` of this server, else 403 `csrf_failed`. Keys and users are managed with an admin's session only.",
        },
        ...PLATFORM_SCHEMES,
      },
      headers: {
        ...RATE_LIMIT_HEADERS,
        'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } },
      },
      schemas: {
        Error: errorBody,
        PageMeta: {
          type: 'object',
          required: ['has_more', 'next_cursor', 'limit'],
          properties: {
            has_more: { type: 'boolean' },
            next_cursor: { type: ['string', 'null'] },
            limit: { type: 'integer', minimum: 1, maximum: 200 },
          },
        },
      },
      responses: Object.fromEntries(
        Object.entries(ERROR_ANSWERS).map(([status, description]) => [
          `Error${status}`,
          {
            description: `${description}. code: ${codesOf(Number(status)).join(', ')}`,
            headers: mapRefs(Number(status) === 429 || Number(status) === 503 ? ['Retry-After', 'X-Request-Id'] : ['X-Request-Id']),
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          },
        ]),
      ),
    },
  };
}
