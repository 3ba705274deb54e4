// createApp(deps): the whole HTTP surface, built from explicit dependencies so the tests run the
// very same pipeline through app.handle() that the server runs for every connection.
//
// Every request goes through `handle`: start it (id, client address), look up the rules its route
// declares (each module declares its routes: lib/routes.ts), pass the gate (authenticate,
// rate-limit, body limit), let the Elysia routes answer, then put the request id and rate-limit
// headers on whatever came out — success or error, matched route or not — and write the log line. The
// cross-cutting steps live here rather than in Elysia lifecycle hooks because each global hook was
// measured to cost on every request, and because only here is the final response (and its status)
// known for certain.
import { Elysia, type AnyElysia } from 'elysia';
import type { Config } from './config.ts';
import { type Settings, settingsOf } from './settings.ts';
import type { Database } from './db/client.ts';
import type { Logger } from './lib/log.ts';
import type { RateLimiter } from './lib/rate-limiter.ts';
import type { Authenticator } from './modules/keys/service.ts';
import { createSessionAuthenticator, type SessionAuthenticator } from './modules/auth/sessions.ts';
import { AUTH_ROUTES, authModule } from './modules/auth/index.ts';
import { USER_ROUTES, usersModule } from './modules/users/index.ts';
import type { RequestState, RequestStates } from './plugins/request-state.ts';
import { beginRequest, logRequest, type Peer } from './plugins/request-context.ts';
import { errorResponse, errorsPlugin } from './plugins/errors.ts';
import { createGate } from './plugins/gate.ts';
import { checkRequestSize, checkUrlEncoding, settleUrl } from './plugins/request-url.ts';
import { AppError } from './lib/errors.ts';
import { patternMatcher, routeTable, undeclaredRoutes, type DeclaredModule, type RouteDeclaration, type Rules } from './lib/routes.ts';
import { HEALTH_ROUTES, healthModule, type ReadinessProbe } from './modules/health/index.ts';
import { ME_ROUTES, meModule } from './modules/me/index.ts';
import { API_SCOPE, KEY_ROUTES, keysModule } from './modules/keys/index.ts';
import { CUSTOMER_ROUTES, customersModule } from './modules/customers/index.ts';
import { CONTRACT_ROUTES, contractsModule } from './modules/contracts/index.ts';
import { INVOICE_ROUTES, invoicesModule } from './modules/invoices/index.ts';
import {
  createWebhookReceiver,
  TICKET_WEBHOOK_ROUTE,
  WEBHOOK_SCOPE,
  webhooksModule,
  type WebhookReceiver,
} from './modules/webhooks/index.ts';
import { CONNECTOR_ROUTES, connectorsModule } from './modules/tickets/connectors/index.ts';
import { BILLING_ROUTES, billingModule } from './modules/billing/index.ts';
import { createBillingConnectorLookup, type BillingConnectorLookup } from './modules/billing/connector-lookup.ts';
import { BILLING_WEBHOOK_ROUTE, billingWebhookModule, createBillingWebhookReceiver } from './modules/billing/webhook.ts';
import { TICKET_ROUTES, ticketsModule } from './modules/tickets/api/index.ts';
import { TICKET_IMPORT_ROUTES, ticketImportModule } from './modules/tickets/import/index.ts';
import { PREDICTION_ROUTES, predictionsModule } from './modules/predictions/index.ts';
import { CFO_HISTORY_ROUTES, cfoHistoryModule } from './modules/cfo-history/index.ts';
import { keepSums } from './modules/cfo-history/history.ts';
import { storedSums } from './modules/cfo-history/sums-reader.ts';
import { CFO_FORECAST_ROUTES, cfoForecastModule } from './modules/cfo-forecast/index.ts';
import { ACTION_ROUTES, agentActionsModule } from './modules/agent-actions/index.ts';
import { TEAM_CHAT_ROUTE, teamChatModule } from './modules/slack/webhook.ts';
import { DOCS_ROUTES, docsModule } from './modules/docs/index.ts';
import { CONSOLE_ROUTES, consoleModule, consolePages, wantsConsolePage } from './modules/console/index.ts';
import { METRICS_ROUTES, metricsModule } from './modules/metrics/index.ts';
import { createMetrics, type Metrics } from './modules/metrics/registry.ts';
import type { RegisteredRoute } from './modules/docs/openapi.ts';
import { WORKSPACE_CHAT_ROUTE, workspaceChatModule } from './modules/google-chat/webhook.ts';
import { MESSAGING_ROUTES, messagingModule } from './modules/whatsapp/webhook.ts';
import { createConnectorLookup, type ConnectorLookup } from './modules/webhooks/connector-lookup.ts';
import { createEventWriter, type EventWriter } from './modules/tickets/queue/writer.ts';
import { createListCache, type ListCache } from './lib/list-cache.ts';
import { type WebhookBudgets, webhookBudgets } from './modules/signed-webhooks/budgets.ts';
import type { SignedWebhookReceiver } from './modules/signed-webhooks/index.ts';

export interface AppDeps {
  config: Config;
  /** The settings the server built from `config` (default: built here, as tests' apps do). */
  settings?: Settings;
  database: Database;
  limiter: RateLimiter;
  authenticator: Authenticator;
  /** Console sessions (default: looked up in `database`). */
  sessions?: SessionAuthenticator;
  log: Logger;
  readiness: ReadinessProbe;
  startedAt?: number;
  /** More feature modules to mount beside the built-in ones (the tests mount fixtures here): with
   * their routes' declarations, or bare, when their routes take the rules of the scope they are in. */
  modules?: (AnyElysia | DeclaredModule<AnyElysia>)[];
  /** Called when `events` new ticket events are committed: the worker thread takes them at once. */
  wakeWorker?: (events: number) => void;
  /** Called after a request's transaction committed jobs (src/jobs): the job loop looks at once. */
  wakeJobs?: () => void;
  /** The Prometheus registry (the server's; a test may pass its own). */
  metrics?: Metrics;
  /** The time signature windows are judged by (tests replay platforms' recorded deliveries). */
  clock?: () => number;
}

export interface App {
  /** Answers one request. `server` (Bun's) tells the client address; tests pass none. A Response
   * when every step was synchronous (a cached key, the in-process limiter, a synchronous route),
   * else its promise: Bun writes a Response handed back at once without a round through the
   * microtask queue. */
  handle(request: Request, server?: Peer): Response | Promise<Response>;
  /** The Elysia application with the routes. */
  routes: ReturnType<typeof createRoutes>['routes'];
  /** Every route's declaration (lib/routes.ts), the built-in ones and the mounted modules'. */
  declarations: readonly RouteDeclaration[];
  /** Webhook connectors as this process knows them (forget after an admin change). */
  connectors: ConnectorLookup;
  /** Billing connectors as the billing webhook knows them (forget after an admin change). */
  billingConnectors: BillingConnectorLookup;
  /** Where inbound ticket events are written (group commit). */
  events: EventWriter;
}

/** Every built-in route, as its module declares it. */
const DECLARED_ROUTES: readonly RouteDeclaration[] = [
  HEALTH_ROUTES,
  ME_ROUTES,
  AUTH_ROUTES,
  KEY_ROUTES,
  USER_ROUTES,
  CUSTOMER_ROUTES,
  CONTRACT_ROUTES,
  INVOICE_ROUTES,
  CONNECTOR_ROUTES,
  BILLING_ROUTES,
  TICKET_ROUTES,
  TICKET_IMPORT_ROUTES,
  PREDICTION_ROUTES,
  CFO_HISTORY_ROUTES,
  CFO_FORECAST_ROUTES,
  ACTION_ROUTES,
  { receive: TICKET_WEBHOOK_ROUTE },
  { teamChat: TEAM_CHAT_ROUTE },
  { workspaceChat: WORKSPACE_CHAT_ROUTE },
  { billingWebhook: BILLING_WEBHOOK_ROUTE },
  DOCS_ROUTES,
  CONSOLE_ROUTES,
  METRICS_ROUTES,
  MESSAGING_ROUTES,
].flatMap((module): RouteDeclaration[] => Object.values(module));

/** The rules of paths no route matches, by the module that owns the prefix. */
const SCOPES = [API_SCOPE, WEBHOOK_SCOPE];

function createRoutes(
  deps: AppDeps,
  states: RequestStates,
  shared: {
    listCache: ListCache;
    webhooks: WebhookReceiver;
    billingWebhook: SignedWebhookReceiver;
    metrics: Metrics;
    connectors: ConnectorLookup;
    billingConnectors: BillingConnectorLookup;
    budgets: WebhookBudgets;
  },
) {
  // What the routes read of the settings: the configuration's (SECRET_KEY the one in force).
  const settings = deps.settings ?? settingsOf(deps.config);
  // The ARR history's month sums for the history's routes and the forecast's expansion rate alike:
  // stored and kept up to date by a job, and the live query (kept per data version) until they are.
  const cfoSums = storedSums(keepSums());
  let methodTable: { method: string; matcher: RegExp }[] | null = null;
  const allowedMethods = (path: string): string[] => {
    const table = (methodTable ??= routesOf().map((route) => ({ method: route.method, matcher: patternMatcher(route.path) })));
    return [...new Set(table.filter((r) => r.matcher.test(path)).map((r) => r.method))];
  };
  // Read lazily: the route list is complete only once every module below is registered.
  const routesOf = (): { method: string; path: string }[] => routes.routes;
  const registeredRoutes = (): RegisteredRoute[] => routes.routes as RegisteredRoute[];

  const pages = consolePages();
  const notFoundPage = (request: Request, path: string) => (wantsConsolePage(request, path) ? pages.page(404) : null);
  const routes = new Elysia({ normalize: false })
    .use(errorsPlugin({ log: deps.log, requestIdOf: (request) => states.get(request)?.id ?? 'unknown', allowedMethods, notFoundPage }))
    .use(healthModule({ readiness: deps.readiness, startedAt: deps.startedAt ?? Date.now() }))
    .use(meModule({ states }))
    .use(authModule({ database: deps.database, states, config: deps.config, limiter: deps.limiter }))
    .use(keysModule({ database: deps.database, states, config: deps.config, authenticator: deps.authenticator }))
    .use(usersModule({ database: deps.database, states, config: deps.config }))
    .use(customersModule({ database: deps.database, states, config: deps.config, listCache: shared.listCache }))
    .use(contractsModule({ database: deps.database, states, config: deps.config, listCache: shared.listCache }))
    .use(invoicesModule({ database: deps.database, states, config: deps.config, listCache: shared.listCache }))
    .use(
      connectorsModule({
        database: deps.database,
        states,
        config: deps.config,
        wakeWorker: deps.wakeWorker,
        secretsChanged: shared.connectors.invalidate,
      }),
    )
    .use(
      billingModule({
        database: deps.database,
        states,
        config: deps.config,
        wakeJobs: deps.wakeJobs,
        connectorsChanged: shared.billingConnectors.invalidate,
      }),
    )
    .use(ticketsModule({ database: deps.database, states }))
    .use(ticketImportModule({ database: deps.database, states, config: deps.config, wakeWorker: deps.wakeWorker }))
    .use(
      predictionsModule({
        database: deps.database,
        states,
        config: deps.config,
        settings: settings.predictions,
        listCache: shared.listCache,
        wakeJobs: deps.wakeJobs,
      }),
    )
    .use(cfoHistoryModule({ database: deps.database, states, config: deps.config, readSums: cfoSums }))
    .use(
      cfoForecastModule({
        database: deps.database,
        states,
        config: deps.config,
        settings: settings.predictions,
        wakeJobs: deps.wakeJobs,
        readSums: cfoSums,
      }),
    )
    .use(agentActionsModule({ database: deps.database, states, config: deps.config, settings: settings.actions, wakeJobs: deps.wakeJobs }))
    .use(webhooksModule(shared.webhooks, states))
    .use(docsModule(() => ({ declarations, routes: registeredRoutes(), serverUrl: deps.config.publicUrl })))
    .use(consoleModule(pages))
    .use(metricsModule({ metrics: shared.metrics, token: deps.config.metricsToken }))
    .use(
      teamChatModule({
        database: deps.database,
        states,
        config: deps.config,
        settings: settings.actions,
        budgets: shared.budgets,
        clock: deps.clock,
        wakeJobs: deps.wakeJobs,
      }),
    )
    .use(
      workspaceChatModule({
        database: deps.database,
        states,
        config: deps.config,
        settings: settings.actions,
        budgets: shared.budgets,
        clock: deps.clock,
        wakeJobs: deps.wakeJobs,
      }),
    )
    .use(messagingModule({ database: deps.database, states, config: deps.config, budgets: shared.budgets, wakeJobs: deps.wakeJobs }))
    .use(billingWebhookModule(shared.billingWebhook, states));
  const declarations = [...DECLARED_ROUTES];
  const bare = new Set<string>();
  for (const module of deps.modules ?? []) {
    if ('declarations' in module) {
      routes.use(module.app);
      declarations.push(...module.declarations);
    } else {
      routes.use(module);
      for (const route of module.routes) bare.add(`${route.method} ${route.path}`);
    }
  }
  // A route without its rules would be judged by its scope's; a declaration without its route
  // would leave rules behind: either is a mistake to stop at start-up.
  const mismatches = undeclaredRoutes(
    routes.routes.filter((route) => !bare.has(`${route.method} ${route.path}`)),
    declarations,
  );
  if (mismatches.length > 0) throw new Error(`Routes and their declarations differ: ${mismatches.join('; ')}`);
  return { routes, table: routeTable(declarations, SCOPES), declarations };
}

/** A request refused before its rules were looked up (a URL too long, a bad encoding). */
const UNJUDGED: Rules = { auth: 'none', counted: 'address', body: 'none' };

/** Headers on a response we did not build may be immutable; copy it then. */
function withHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    for (const name in headers) response.headers.set(name, headers[name]!);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const name in headers) copy.headers.set(name, headers[name]!);
    return copy;
  }
}

export function createApp(deps: AppDeps): App {
  const states: RequestStates = new WeakMap();
  const connectors = createConnectorLookup(deps.database.db, deps.config.secretKey, deps.log);
  const events = createEventWriter(deps.database.db, (count) => deps.wakeWorker?.(count), {
    parallel: deps.database.kind === 'postgres' ? 2 : 1,
  });
  const listCache = createListCache(deps.config.listCacheMb * 1024 * 1024);
  // Every signed webhook's budgets: its senders' (as each route declares) and refused signatures'.
  const budgets = webhookBudgets(deps.limiter, deps.config);
  const webhooks = createWebhookReceiver({ config: deps.config, budgets, connectors, writer: events, clock: deps.clock });
  const billingConnectors = createBillingConnectorLookup(deps.database.db, deps.config.secretKey);
  const billingWebhook = createBillingWebhookReceiver({
    database: deps.database,
    config: deps.config,
    budgets,
    connectors: billingConnectors,
    clock: deps.clock,
    wakeJobs: deps.wakeJobs,
  });
  // The webhooks that take bursts of events: straight to their receiver (see handle).
  const directReceivers = new Map<Rules, SignedWebhookReceiver>([
    [TICKET_WEBHOOK_ROUTE, webhooks],
    [BILLING_WEBHOOK_ROUTE, billingWebhook],
  ]);
  const metrics = deps.metrics ?? createMetrics(deps.database);
  const { routes, table, declarations } = createRoutes(deps, states, {
    listCache,
    webhooks,
    billingWebhook,
    metrics,
    connectors,
    billingConnectors,
    budgets,
  });
  const sessions =
    deps.sessions ??
    createSessionAuthenticator(deps.database.db, (error) => deps.log.warn('session last_seen_at not written', { error: String(error) }));
  const admit = createGate({ ...deps, sessions });
  const trustProxy = deps.config.trustProxy;

  const fetchRoute = routes.fetch;

  function finish(state: RequestState, request: Request, response: Response): Response {
    state.headers['x-request-id'] = state.id;
    const final = withHeaders(response, state.headers);
    logOnce(state, request, final.status);
    return final;
  }
  /** A request answered at its deadline may still finish later: one log line, the answer's. */
  function logOnce(state: RequestState, request: Request, status: number): void {
    if (state.logged) return;
    state.logged = true;
    logRequest(deps.log, state, request, status);
    const rules = state.rules ?? UNJUDGED;
    metrics.observeRequest({
      route: 'method' in rules ? (rules as RouteDeclaration).path : '(unmatched)',
      method: request.method,
      status,
      seconds: (performance.now() - state.startedAt) / 1000,
      rules,
    });
  }
  const failed = (state: RequestState, request: Request, error: unknown) =>
    finish(state, request, errorResponse(error, { log: deps.log, requestId: state.id, method: request.method, path: state.path }));
  const routed = (state: RequestState, request: Request): Response | Promise<Response> => {
    const answer = fetchRoute(request) as Response | Promise<Response>;
    return answer instanceof Promise
      ? answer.then(
          (response) => finish(state, request, response),
          (error) => failed(state, request, error),
        )
      : finish(state, request, answer);
  };

  /** Answers 503 at REQUEST_TIMEOUT_MS if `work` has not answered by then. Only requests that
   * wait on something get a timer: an answer made synchronously needs none. */
  const requestTimeoutMs = deps.config.requestTimeoutMs;
  function withDeadline(state: RequestState, request: Request, work: Promise<Response>): Promise<Response> {
    let timer: Timer | undefined;
    const deadline = new Promise<Response>((resolve) => {
      timer = setTimeout(() => {
        const timeout = new AppError(
          'request_timeout',
          `The request ran longer than ${requestTimeoutMs} ms and was abandoned (request ${state.id})`,
          { 'retry-after': '5' },
        );
        deps.log.warn('request abandoned at its deadline', {
          request_id: state.id,
          method: request.method,
          path: state.path,
          timeout_ms: requestTimeoutMs,
        });
        resolve(failed(state, request, timeout));
      }, requestTimeoutMs);
    });
    return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
  }

  function handle(request: Request, server?: Peer): Response | Promise<Response> {
    const path = settleUrl(request);
    const state = beginRequest(request, path, server, trustProxy);
    try {
      checkRequestSize(request);
      checkUrlEncoding(request.url);
    } catch (error) {
      return failed(state, request, error);
    }
    const rules = (state.rules = table.rulesFor(request.method, path));
    // Every platform's ticket events and every billing system's events come here, thousands a
    // second in a burst: straight to the receiver, which counts the delivery itself (the gate has
    // nothing to do for it).
    const direct = request.method === 'POST' ? directReceivers.get(rules) : undefined;
    if (direct) {
      const received = direct.receive(request, state).then(
        (response) => {
          logOnce(state, request, response.status);
          return response;
        },
        (error) => failed(state, request, error),
      );
      return withDeadline(state, request, received);
    }
    states.set(request, state);
    try {
      const admitted = admit(state, request, rules);
      const answer = admitted
        ? admitted.then(
            () => routed(state, request),
            (error) => failed(state, request, error),
          )
        : routed(state, request);
      return answer instanceof Promise ? withDeadline(state, request, answer) : answer;
    } catch (error) {
      return failed(state, request, error);
    }
  }

  return { handle, routes, declarations, connectors, billingConnectors, events };
}
