// POST /api/webhooks/tickets?connectorId=… (docs/tickets.md "The webhook"): any support platform's
// ticket events. The sender is proved by the connector id and, when the connector has them, its
// signature or token over the raw bytes; the event is then written durably and answered 200 at
// once. Nothing about the ticket is read before the answer: the worker thread does that.
import { Elysia, t } from 'elysia';
import type { Config } from '../../config.ts';
import { AppError } from '../../lib/errors.ts';
import { readBodyLimited } from '../../lib/body.ts';
import { newId } from '../../lib/ids.ts';
import { jsonDeeperThan, MAX_JSON_DEPTH, tooDeep } from '../../lib/json.ts';
import { memoryRateLimiter, rateLimitHeaders, type Limits, type RateLimiter } from '../../lib/rate-limiter.ts';
import { bodyLimit, type RouteDeclaration, type ScopeDeclaration } from '../../lib/routes.ts';
import { anonSubject } from '../../plugins/gate.ts';
import type { RequestState, RequestStates } from '../../plugins/request-state.ts';
import type { EventWriter } from '../tickets/queue/writer.ts';
import type { ConnectorLookup, WebhookConnector } from './connector-lookup.ts';
import { verifyWebhook } from './signatures.ts';
import { WebhookAck } from './model.ts';

/** Every platform's ticket events. Proved by the connector's signature or token over the raw bytes,
 * counted on the connector's own budget once it is known (on the sender's address until then); the
 * server hands a POST straight to the receiver (app.ts). */
export const TICKET_WEBHOOK_ROUTE = {
  method: 'POST',
  path: '/api/webhooks/tickets',
  auth: 'platform-signature',
  verifiedBy: 'connector',
  counted: 'connector',
  body: 'webhook',
  response: WebhookAck,
  envelope: false,
  checkedQuery: t.Object({ connectorId: t.String({ minLength: 1, maxLength: 100 }) }),
  errors: [404],
  summary: "A support platform's ticket event (?connectorId=…)",
} as const satisfies RouteDeclaration;

/** Paths under /api/webhooks/ that match no route are public (their senders have no API key) and
 * held to the webhook body limit; their 404 spends the address's budget. */
export const WEBHOOK_SCOPE: ScopeDeclaration = { prefix: '/api/webhooks/', auth: 'none', counted: 'address', body: 'webhook' };

/** Headers kept with the event: what adapters read, and what tells deliveries apart for the
 * operator. Everything else (cookies, authorization, signatures) is not stored. */
const KEPT_HEADERS = [
  'content-type',
  'user-agent',
  'x-github-event',
  'x-github-delivery',
  'x-helpscout-event',
  'linear-event',
  'linear-delivery',
  'x-atlassian-webhook-identifier',
  'x-atlassian-webhook-retry',
  'x-zendesk-webhook-id',
  'x-zendesk-webhook-invocation-id',
  'webhook-id',
] as const;

/** Headers whose value is the same on every retry of one delivery: a second copy is not stored. */
const DELIVERY_ID_HEADERS = [
  'x-github-delivery',
  'linear-delivery',
  'x-atlassian-webhook-identifier',
  'x-zendesk-webhook-invocation-id',
  'webhook-id',
] as const;

function deliveryKey(headers: Headers): string | null {
  for (const name of DELIVERY_ID_HEADERS) {
    const value = headers.get(name);
    if (value && value.length <= 200) return `${name}:${value}`;
  }
  return null;
}

function keptHeaders(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = headers.get(name);
    if (value !== null) kept[name] = value.slice(0, 500);
  }
  return kept;
}

export interface WebhooksDeps {
  config: Pick<
    Config,
    | 'bodyLimitApi'
    | 'bodyLimitImport'
    | 'bodyLimitWebhook'
    | 'publicUrl'
    | 'anonLimitPerMinute'
    | 'anonLimitPerDay'
    | 'webhookLimitPerMinute'
    | 'webhookLimitPerDay'
  >;
  limiter: RateLimiter;
  connectors: ConnectorLookup;
  writer: EventWriter;
  clock?: () => number;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The answer with every header it leaves with (rate limit, request id) set at once: it goes out as
 * it is, which saves setting them one by one afterwards on the path every delivery takes. */
function answer(state: RequestState, payload: object): Response {
  return new Response(JSON.stringify(payload), {
    headers: { 'content-type': 'application/json;charset=utf-8', ...state.headers, 'x-request-id': state.id },
  });
}

export interface WebhookReceiver {
  /** Answers one delivery to the ticket webhook: the acknowledgement, complete with its headers, or
   * throws the AppError it must end with. `state` is the request's (its rate-limit headers are set
   * here). */
  receive(request: Request, state: RequestState): Promise<Response>;
}

export function createWebhookReceiver(deps: WebhooksDeps): WebhookReceiver {
  const anonLimits: Limits = { perMinute: deps.config.anonLimitPerMinute, perDay: deps.config.anonLimitPerDay };
  const connectorLimits: Limits = { perMinute: deps.config.webhookLimitPerMinute, perDay: deps.config.webhookLimitPerDay };
  // A connector's budget is a flood guard, not a plan's quota: counted in this process, with no
  // round trip to a shared store on the path every delivery takes (with N servers a connector may
  // deliver up to N times it). Unknown senders spend their address's budget in the shared store.
  const connectorLimiter = memoryRateLimiter();
  const limit = bodyLimit(TICKET_WEBHOOK_ROUTE.body, deps.config);

  /** Counts the delivery against `subject` (the connector's budget, or the sender's address while
   * it is unknown) and puts the headers on the answer, whatever it will be. */
  async function count(state: RequestState, subject: string, limits: Limits): Promise<void> {
    const limiter = subject.startsWith('connector:') ? connectorLimiter : deps.limiter;
    const counted = limiter.consume(subject, limits);
    // The connector's budget is in-process: no promise to wait for on the common path.
    const decision = counted instanceof Promise ? await counted : counted;
    state.rateLimit = decision;
    state.headers = rateLimitHeaders(decision);
    if (!decision.allowed) {
      throw new AppError(
        'rate_limited',
        `Rate limit exceeded for this ${subject.startsWith('connector:') ? 'connector' : 'address'}; retry in ${decision.retryAfter} s`,
        {
          'retry-after': String(decision.retryAfter),
        },
      );
    }
  }

  /** The address the platform called, as it signed it (HubSpot v3): PUBLIC_URL's origin when the
   * server is behind a proxy. */
  const calledUrl = (request: Request) => {
    if (!deps.config.publicUrl) return request.url;
    const url = new URL(request.url);
    return `${deps.config.publicUrl.replace(/\/+$/, '')}${url.pathname}${url.search}`;
  };

  async function receive(request: Request, state: RequestState): Promise<Response> {
    const connectorId = new URL(request.url).searchParams.get('connectorId');
    // The address is looked up only for a delivery that names no known connector.
    if (!connectorId) {
      await count(state, anonSubject(state.clientAddress), anonLimits);
      throw new AppError('bad_request', 'Query parameter "connectorId" is required');
    }
    const found = connectorId.length <= 100 ? deps.connectors.find(connectorId) : null;
    const connector: WebhookConnector | null = found instanceof Promise ? await found : found;
    if (!connector) {
      await count(state, anonSubject(state.clientAddress), anonLimits);
      throw new AppError('not_found', `Connector ${connectorId.slice(0, 100)} not found`);
    }
    await count(state, `connector:${connector.id}`, connectorLimits);
    const bytes = await readBodyLimited(request, limit);
    const verdict = verifyWebhook(
      { rawBody: bytes, headers: request.headers, method: request.method, url: calledUrl(request) },
      { platform: connector.platform, secrets: connector.secrets, tokenHash: connector.tokenHash },
      deps.clock ? deps.clock() : Date.now(),
    );
    // A secret this server cannot open refuses everything: accepting unsigned deliveries because
    // of a misconfigured SECRET_KEY would let anyone post.
    if (connector.unreadableSecret && !(verdict.ok && verdict.scheme !== 'none')) {
      throw new AppError('unauthorized', 'Invalid webhook signature: the connector secret cannot be read by this server');
    }
    if (!verdict.ok) throw new AppError('unauthorized', `Invalid webhook signature: ${verdict.reason}`);
    let text: string;
    try {
      text = fatalUtf8.decode(bytes);
      JSON.parse(text);
    } catch {
      throw new AppError('malformed_json', 'Request body is not valid JSON');
    }
    // Stored as text, but the worker parses it and walks it: no platform nests this deep.
    if (jsonDeeperThan(text, MAX_JSON_DEPTH)) throw tooDeep();
    // Front validates a new webhook by sending a challenge to echo back (signed like any event).
    const challenge = request.headers.get('x-front-challenge');
    if (challenge !== null && connector.platform === 'front') return answer(state, { challenge });

    const stored = await deps.writer.write({
      id: newId('evt'),
      orgId: connector.orgId,
      connectorId: connector.id,
      source: 'webhook',
      body: text,
      headers: keptHeaders(request.headers),
      dedupeKey: deliveryKey(request.headers),
    });
    return answer(state, { ok: true, status: 'received', connector: connector.name, event_id: stored.id });
  }

  return { receive };
}

/** The route, for the route table (a GET is told 405, not 404). The server hands a POST straight to
 * the receiver without Elysia's per-request work (app.ts): this path takes every platform's events. */
export function webhooksModule(receiver: WebhookReceiver, states: RequestStates) {
  return new Elysia({ name: 'revintel/webhooks' }).post(TICKET_WEBHOOK_ROUTE.path, ({ request }) =>
    receiver.receive(request, states.get(request)!),
  );
}
