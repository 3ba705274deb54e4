// POST /api/webhooks/tickets?connectorId=… (docs/tickets.md "The webhook"): any support platform's
// ticket events. The sender is proved by the connector id and, when the connector has them, its
// signature or token over the raw bytes; the event is then written durably and answered 200 at
// once. Nothing about the ticket is read before the answer: the worker thread does that.
import { Elysia, t } from 'elysia';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { jsonDeeperThan, MAX_JSON_DEPTH, tooDeep } from '../../lib/json.ts';
import type { RouteDeclaration, ScopeDeclaration } from '../../lib/routes.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import type { WebhookBudgets } from '../signed-webhooks/budgets.ts';
import { type SignedWebhookDeps, type SignedWebhookReceiver, signedWebhook, signedWebhookModule } from '../signed-webhooks/index.ts';
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
  config: SignedWebhookDeps['config'];
  budgets: WebhookBudgets;
  connectors: ConnectorLookup;
  writer: EventWriter;
  clock?: () => number;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A ticket event as the path hands it over: the body's text (any JSON: each platform's adapter
 * reads its own shape in the worker) and, for Front's URL validation, the challenge to echo. */
interface TicketDelivery {
  text: string;
  challenge: string | null;
}

/** The receiver of the ticket webhook (app.ts hands it a POST directly). */
export type WebhookReceiver = SignedWebhookReceiver;

export function createWebhookReceiver(deps: WebhooksDeps): WebhookReceiver {
  return signedWebhook<WebhookConnector, TicketDelivery>(
    {
      route: TICKET_WEBHOOK_ROUTE,
      async identify(request) {
        const connectorId = new URL(request.url).searchParams.get('connectorId');
        // The address is looked up only for a delivery that names no known connector.
        if (!connectorId) return new AppError('bad_request', 'Query parameter "connectorId" is required');
        const found = connectorId.length <= 100 ? deps.connectors.find(connectorId) : null;
        const connector = found instanceof Promise ? await found : found;
        return connector ?? new AppError('not_found', `Connector ${connectorId.slice(0, 100)} not found`);
      },
      verify(delivery, connector, now) {
        if (!connector) return { ok: false, reason: 'no connector' };
        const verdict = verifyWebhook(delivery, connector, now);
        // A secret this server cannot open refuses everything: accepting unsigned deliveries because
        // of a misconfigured SECRET_KEY would let anyone post.
        if (connector.unreadableSecret && !(verdict.ok && verdict.scheme !== 'none'))
          return { ok: false, reason: 'the connector secret cannot be read by this server' };
        return verdict;
      },
      refusal: (reason) => new AppError('unauthorized', `Invalid webhook signature: ${reason}`),
      parse(delivery) {
        let text: string;
        try {
          text = fatalUtf8.decode(delivery.rawBody);
          JSON.parse(text);
        } catch {
          throw new AppError('malformed_json', 'Request body is not valid JSON');
        }
        // Stored as text, but the worker parses it and walks it: no platform nests this deep.
        if (jsonDeeperThan(text, MAX_JSON_DEPTH)) throw tooDeep();
        return { text, challenge: delivery.headers.get('x-front-challenge') };
      },
      async handle(event, { delivery, identified: connector }) {
        if (!connector) throw new Error('the ticket webhook stores only deliveries of a known connector');
        // Front validates a new webhook by sending a challenge to echo back (signed like any event).
        if (event.challenge !== null && connector.platform === 'front') return { body: JSON.stringify({ challenge: event.challenge }) };
        const stored = await deps.writer.write({
          id: newId('evt'),
          orgId: connector.orgId,
          connectorId: connector.id,
          source: 'webhook',
          body: event.text,
          headers: keptHeaders(delivery.headers),
          dedupeKey: deliveryKey(delivery.headers),
        });
        return { body: JSON.stringify({ ok: true, status: 'received', connector: connector.name, event_id: stored.id }) };
      },
    },
    deps,
  );
}

/** The route, for the route table (a GET is told 405, not 404). The server hands a POST straight to
 * the receiver without Elysia's per-request work (app.ts): this path takes every platform's events. */
export const webhooksModule = (receiver: WebhookReceiver, states: RequestStates) =>
  signedWebhookModule('revintel/webhooks', receiver, states);
