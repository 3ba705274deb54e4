// createApp(deps): the whole HTTP surface, built from explicit dependencies so tests run the very
// same app through app.handle() and the server runs it through listen().
import { Elysia } from 'elysia';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { Logger } from './lib/log.ts';
import type { RateLimiter } from './lib/rate-limiter.ts';
import type { Authenticator } from './modules/keys/service.ts';
import type { RequestStates } from './plugins/request-state.ts';
import { requestContextPlugin } from './plugins/request-context.ts';
import { errorsPlugin } from './plugins/errors.ts';
import { gatePlugin } from './plugins/gate.ts';
import { bodyPlugin } from './plugins/body.ts';
import { healthModule, type ReadinessProbe } from './modules/health/index.ts';
import { meModule } from './modules/me/index.ts';
import { keysModule } from './modules/keys/index.ts';

export interface AppDeps {
  config: Config;
  database: Database;
  limiter: RateLimiter;
  authenticator: Authenticator;
  log: Logger;
  readiness: ReadinessProbe;
  startedAt?: number;
}

/** `/api/keys/:id` -> a matcher, to tell "wrong method" (405) from "no such route" (404). */
function routeMatcher(pattern: string): RegExp {
  const source = pattern
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

export function createApp(deps: AppDeps) {
  const states: RequestStates = new WeakMap();
  let routeTable: { method: string; matcher: RegExp }[] | null = null;
  const allowedMethods = (path: string): string[] => {
    const table = (routeTable ??= routesOf().map((route) => ({ method: route.method, matcher: routeMatcher(route.path) })));
    return [...new Set(table.filter((r) => r.matcher.test(path)).map((r) => r.method))];
  };
  // Read lazily: the route list is complete only once every module below is registered.
  const routesOf = (): { method: string; path: string }[] => app.routes;

  const app = new Elysia({ normalize: true })
    .use(requestContextPlugin({ log: deps.log, states, trustProxy: deps.config.trustProxy }))
    .use(errorsPlugin({ log: deps.log, states, allowedMethods }))
    .use(gatePlugin({ config: deps.config, states, limiter: deps.limiter, authenticator: deps.authenticator }))
    .use(bodyPlugin(deps.config))
    .use(healthModule({ readiness: deps.readiness, startedAt: deps.startedAt ?? Date.now() }))
    .use(meModule({ states }))
    .use(keysModule({ database: deps.database, states, authenticator: deps.authenticator }));
  return app;
}

export type App = ReturnType<typeof createApp>;
