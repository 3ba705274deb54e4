// GET /healthz and GET /readyz (docs/operating.md "Signals and probes"): public, and never refused by the rate
// limiter — their headers show the address's budget, which they do not spend.
import { Elysia } from 'elysia';
import { ok } from '../../lib/envelope.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { VERSION } from '../../version.ts';
import { Liveness, Readiness } from './model.ts';

export interface ReadinessCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

export type ReadinessProbe = () => Promise<ReadinessCheck[]>;

export const HEALTH_ROUTES = {
  live: {
    method: 'GET',
    path: '/healthz',
    auth: 'none',
    counted: 'not-counted',
    body: 'none',
    response: Liveness,
    summary: 'The process is alive',
  },
  ready: {
    method: 'GET',
    path: '/readyz',
    auth: 'none',
    counted: 'not-counted',
    body: 'none',
    response: Readiness,
    summary: 'The process can serve: database, migrations, worker',
  },
} as const satisfies Record<string, RouteDeclaration>;

export function healthModule(deps: { readiness: ReadinessProbe; startedAt: number }) {
  return new Elysia({ name: 'revintel/health' })
    .get(HEALTH_ROUTES.live.path, () =>
      ok({ status: 'alive', version: VERSION, uptime_s: Math.round((Date.now() - deps.startedAt) / 1000) }),
    )
    .get(HEALTH_ROUTES.ready.path, async ({ set }) => {
      const checks = await deps.readiness();
      const failing = checks.filter((c) => !c.ok);
      if (failing.length === 0) return ok({ status: 'ready', checks });
      set.status = 503;
      set.headers['retry-after'] = '5';
      return {
        success: false,
        data: null,
        error: `Not ready: ${failing.map((c) => `${c.name} (${c.detail ?? 'failing'})`).join(', ')}`,
        code: 'not_ready',
        meta: { checks },
      };
    });
}
