// One path for every webhook a platform signs (the ticket webhook, Slack, Google Chat, WhatsApp;
// billing systems next): read the body within the route's limit, verify it with the sender's
// scheme, count it on the budget the route declares (refused signatures too), validate the payload
// against its TypeBox schema, store it once and answer. A webhook is a spec of those steps
// (`SignedWebhookSpec`); the order, the counting and what errors become live here only:
// - a refused signature is a 401 (429 past the refusals' budget) and nothing is stored;
// - the database out of reach while storing is a 503 with the sender's own retry hint;
// - anything else thrown is a fault of ours, left to the error plugin: 500 `internal`, logged
//   with the request id.
import { Elysia } from 'elysia';
import { readBodyLimited } from '../../lib/body.ts';
import { AppError } from '../../lib/errors.ts';
import { bodyLimit, type PlatformRules, type RouteDeclaration } from '../../lib/routes.ts';
import { isDatabaseDown } from '../../plugins/errors.ts';
import type { RequestState, RequestStates } from '../../plugins/request-state.ts';
import type { WebhookBudgets } from './budgets.ts';
import type { SignedDelivery, Verdict } from './verification.ts';

export type SignedWebhookRoute = RouteDeclaration & PlatformRules;

/** Whoever a delivery comes from, as counted: a connector or a platform installation. */
export interface Sender {
  id: string;
}

/** What a proven delivery is answered: the body as sent (JSON unless told otherwise). */
export interface WebhookAnswer {
  body: string;
  contentType?: string;
}

export interface DeliveryContext<S extends Sender> {
  delivery: SignedDelivery;
  /** The sender named before the body was read (`identify`), else null. */
  identified: S | null;
  /** The senders the payload names (`senders`), each counted. */
  senders: S[];
  now: number;
  state: RequestState;
}

export interface SignedWebhookSpec<S extends Sender, Payload> {
  route: SignedWebhookRoute;
  /** The sender a request names outside its body (the ticket webhook's `?connectorId=`), counted
   * at once on the route's budget, so its refused signatures spend it too. An AppError: it names
   * none this server knows, and ends the request counted on its address. */
  identify?: (request: Request) => S | AppError | Promise<S | AppError>;
  /** The platform's scheme on the raw bytes; may throw what is not a refusal (keys unavailable: 503). */
  verify: (delivery: SignedDelivery, identified: S | null, now: number) => Verdict | Promise<Verdict>;
  /** What a refused delivery is told. */
  refusal: (reason: string) => AppError;
  /** The installation an unproven body names (for the refusals' budget); null when none. */
  claimed?: (delivery: SignedDelivery) => string | null;
  /** The proven body as its typed payload, validated against the platform's schema of its kind
   * (the sender's platform, when `identify` named one); throws the 400 it is refused with. */
  parse: (delivery: SignedDelivery, now: number, identified: S | null) => Payload | Promise<Payload>;
  /** The senders a proven payload names, looked up (unknown ones left out): each is counted. */
  senders?: (payload: Payload) => Promise<S[]>;
  /** Stores the delivery once and does what it asks; what it is answered. */
  handle: (payload: Payload, context: DeliveryContext<S>) => Promise<WebhookAnswer>;
  /** What a delivery the database could not take is told with its 503 (absent: the error plugin's
   * "Database unavailable", with the request id). */
  unavailable?: { message: string; headers: Record<string, string> };
}

export interface SignedWebhookDeps {
  budgets: WebhookBudgets;
  config: Parameters<typeof bodyLimit>[1] & { publicUrl: string | null };
  clock?: () => number;
}

export interface SignedWebhookReceiver {
  route: SignedWebhookRoute;
  /** Answers one delivery: the answer with every header it leaves with, or throws the AppError it
   * ends with. `state` is the request's (its rate-limit headers are set here). */
  receive(request: Request, state: RequestState): Promise<Response>;
}

export const JSON_CONTENT = 'application/json;charset=utf-8';

export function signedWebhook<S extends Sender, Payload>(
  spec: SignedWebhookSpec<S, Payload>,
  deps: SignedWebhookDeps,
): SignedWebhookReceiver {
  const { route } = spec;
  const { budgets } = deps;
  const limit = bodyLimit(route.body, deps.config);
  const clock = deps.clock ?? Date.now;
  const publicUrl = deps.config.publicUrl?.replace(/\/+$/, '') ?? null;
  /** The address the sender called, as it signed it: PUBLIC_URL's origin behind a proxy. */
  const calledUrl = (request: Request) => {
    if (!publicUrl) return request.url;
    const url = new URL(request.url);
    return `${publicUrl}${url.pathname}${url.search}`;
  };

  async function receive(request: Request, state: RequestState): Promise<Response> {
    let identified: S | null = null;
    if (spec.identify) {
      const named = await spec.identify(request);
      if (named instanceof AppError) {
        await budgets.spendAddress(state);
        throw named;
      }
      identified = named;
      await budgets.spend(state, route.counted, named.id);
    }
    const delivery: SignedDelivery = {
      rawBody: await readBodyLimited(request, limit),
      headers: request.headers,
      method: request.method,
      url: calledUrl(request),
    };
    const now = clock();
    const verdict = await spec.verify(delivery, identified, now);
    if (!verdict.ok) {
      const refusal = spec.refusal(verdict.reason);
      // A sender named before the body has paid for this delivery already.
      if (identified) throw refusal;
      return budgets.refuse(state, refusal, spec.claimed?.(delivery) ?? null);
    }
    const payload = await spec.parse(delivery, now, identified);
    let answer: WebhookAnswer;
    try {
      const senders = spec.senders ? await spec.senders(payload) : [];
      for (const sender of senders) await budgets.spend(state, route.counted, sender.id);
      answer = await spec.handle(payload, { delivery, identified, senders, now, state });
    } catch (error) {
      // Nothing was stored: the sender is told to come again (or, for Slack, that the user should).
      if (spec.unavailable && isDatabaseDown(error))
        throw new AppError('database_unavailable', spec.unavailable.message, spec.unavailable.headers, { cause: error });
      throw error;
    }
    return new Response(answer.body, {
      headers: { 'content-type': answer.contentType ?? JSON_CONTENT, ...state.headers, 'x-request-id': state.id },
    });
  }

  return { route, receive };
}

/** The Elysia route of a receiver (the route table and OpenAPI know it by its declaration). */
export function signedWebhookModule(name: string, receiver: SignedWebhookReceiver, states: RequestStates) {
  return new Elysia({ name }).post(receiver.route.path, ({ request }) => {
    const state = states.get(request);
    if (!state) throw new Error(`no request state for ${receiver.route.path}`);
    return receiver.receive(request, state);
  });
}
