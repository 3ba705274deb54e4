// Request id (echoed when the client sent a sane one) and one JSON log line per request.
import { Elysia } from 'elysia';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../lib/log.ts';
import type { RequestStates } from './request-state.ts';
import type { TrustProxy } from '../config.ts';

const CLIENT_REQUEST_ID = /^[\w.:@/-]{1,128}$/;

/** The client's address: the socket peer, or X-Forwarded-For when TRUST_PROXY says whom to believe
 * (the right-most address that is not one of our proxies). */
export function clientAddressOf(request: Request, peer: string | undefined, trust: TrustProxy): string {
  const socket = peer ?? 'unknown';
  if (trust.mode === 'off') return socket;
  if (trust.mode === 'list' && !trust.addresses.includes(socket.replace(/^::ffff:/, ''))) return socket;
  const forwarded = (request.headers.get('x-forwarded-for') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (forwarded.length === 0) return socket;
  if (trust.mode === 'all') return forwarded[0]!;
  for (let i = forwarded.length - 1; i >= 0; i--) if (!trust.addresses.includes(forwarded[i]!)) return forwarded[i]!;
  return forwarded[0]!;
}

/** Only the path and the names of query parameters are logged: values may be secrets. */
function loggablePath(url: string): string {
  const parsed = new URL(url);
  const names = [...new Set(parsed.searchParams.keys())];
  return names.length ? `${parsed.pathname}?${names.map((n) => `${n}=…`).join('&')}` : parsed.pathname;
}

export function requestContextPlugin(deps: { log: Logger; states: RequestStates; trustProxy: TrustProxy }) {
  return new Elysia({ name: 'revintel/request-context' })
    .onRequest(({ request, server, set }) => {
      const sent = request.headers.get('x-request-id');
      const id = sent && CLIENT_REQUEST_ID.test(sent) ? sent : `req_${randomUUID().replaceAll('-', '')}`;
      const peer = server?.requestIP(request)?.address;
      deps.states.set(request, {
        id,
        startedAt: performance.now(),
        clientAddress: clientAddressOf(request, peer, deps.trustProxy),
        principal: null,
        tokenHash: null,
        errorStatus: null,
        rateLimit: null,
        headers: {},
      });
      set.headers['x-request-id'] = id;
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, responseValue }) => {
      const state = deps.states.get(request);
      if (!state) return;
      const status = state.errorStatus ?? (responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200);
      deps.log.info('request', {
        request_id: state.id,
        method: request.method,
        path: loggablePath(request.url),
        status,
        duration_ms: Math.round((performance.now() - state.startedAt) * 100) / 100,
        client: state.clientAddress,
        org_id: state.principal?.org.id,
        key_id: state.principal?.key.id,
      });
    });
}
