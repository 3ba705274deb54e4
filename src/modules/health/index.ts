import { Elysia } from 'elysia';
import { ok } from '../../lib/envelope.ts';
import { VERSION } from '../../version.ts';

export interface ReadinessCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

export type ReadinessProbe = () => Promise<ReadinessCheck[]>;

export function healthModule(deps: { readiness: ReadinessProbe; startedAt: number }) {
  return new Elysia({ name: 'revintel/health' })
    .get('/healthz', () => ok({ status: 'alive', version: VERSION, uptime_s: Math.round((Date.now() - deps.startedAt) / 1000) }))
    .get('/readyz', async ({ set }) => {
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
