// GET /metrics (docs/operating.md "Metrics"): Prometheus's text format, on the API port only with
// METRICS_TOKEN as a bearer token (compared in constant time; without the setting the route is a
// 404), or on METRICS_PORT, bound to 127.0.0.1, with no token (server.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import { Elysia, t } from 'elysia';
import { AppError } from '../../lib/errors.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import type { Metrics } from './registry.ts';

export const METRICS_ROUTES = {
  scrape: {
    method: 'GET',
    path: '/metrics',
    auth: 'none',
    counted: 'not-counted',
    body: 'none',
    envelope: false,
    response: t.String(),
    produces: ['text/plain; version=0.0.4'],
    errors: [401, 404],
    summary: 'Prometheus metrics (bearer METRICS_TOKEN; 404 when it is not set)',
  },
} as const satisfies Record<string, RouteDeclaration>;

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The scrape's answer: the registry in Prometheus's text format. */
export async function scrape(metrics: Metrics): Promise<Response> {
  return new Response(await metrics.registry.metrics(), {
    headers: { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' },
  });
}

export function metricsModule(deps: { metrics: Metrics; token: string | null }) {
  const expected = deps.token ? digest(deps.token) : null;
  return new Elysia({ name: 'revintel/metrics' }).get(METRICS_ROUTES.scrape.path, ({ request }) => {
    if (!expected)
      throw new AppError(
        'not_found',
        'Not found: metrics are not served on this port (set METRICS_TOKEN, or METRICS_PORT for a local port)',
      );
    const given = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1] ?? '';
    if (!timingSafeEqual(digest(given), expected))
      throw new AppError('unauthorized', 'Missing or invalid metrics token: send Authorization: Bearer <METRICS_TOKEN>');
    return scrape(deps.metrics);
  });
}
