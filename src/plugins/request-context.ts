// Request id (echoed when the client sent a sane one), client address, and one JSON log line per
// request.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../lib/log.ts';
import type { RequestState } from './request-state.ts';
import type { TrustProxy } from '../config.ts';

const CLIENT_REQUEST_ID = /^[\w.:@/-]{1,128}$/;

/** The client's address: the socket peer, or X-Forwarded-For when TRUST_PROXY says whom to believe
 * (the right-most address that is not one of our proxies). */
export function clientAddressOf(request: Request, peer: string | undefined, trust: TrustProxy): string {
  const socket = peer ?? 'unknown';
  if (trust.mode === 'off') return socket;
  if (trust.mode === 'list' && !trust.addresses.includes(socket.replace(/^::ffff:/, ''))) return socket;
  const forwarded = (request.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (forwarded.length === 0) return socket;
  if (trust.mode === 'all') return forwarded[0]!;
  for (let i = forwarded.length - 1; i >= 0; i--) if (!trust.addresses.includes(forwarded[i]!)) return forwarded[i]!;
  return forwarded[0]!;
}

/** Only the path and the names of query parameters are logged: values may be secrets. */
function loggablePath(url: string, path: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt < 0) return path;
  // Read from the query alone: the log line must never fail over a URL the rest could not parse.
  const names = [...new Set(new URLSearchParams(url.slice(queryAt + 1)).keys())];
  return names.length ? `${path}?${names.map((n) => `${n}=…`).join('&')}` : path;
}

export type Peer = { requestIP(request: Request): { address: string } | null } | null | undefined;

/** A class rather than an object literal with a getter: it is made for every request, and a
 * literal with an accessor takes the engine's slow path. */
class LiveRequestState implements RequestState {
  principal: RequestState['principal'] = null;
  rateLimit: RequestState['rateLimit'] = null;
  headers: Record<string, string> = {};
  logged = false;
  rules: RequestState['rules'] = null;
  readonly startedAt = performance.now();
  private address: string | undefined;

  constructor(
    readonly id: string,
    readonly path: string,
    private readonly request: Request,
    private readonly server: Peer,
    private readonly trustProxy: TrustProxy,
  ) {}

  /** Asked only when needed — unauthenticated limits and the log line, both before the response
   * leaves: Bun's requestIP() costs about 6 µs, and after the response has gone about a ms. */
  get clientAddress(): string {
    return (this.address ??= clientAddressOf(this.request, this.server?.requestIP(this.request)?.address, this.trustProxy));
  }
}

export function beginRequest(request: Request, path: string, server: Peer, trustProxy: TrustProxy): RequestState {
  const sent = request.headers.get('x-request-id');
  const id = sent && CLIENT_REQUEST_ID.test(sent) ? sent : `req_${randomUUID().replaceAll('-', '')}`;
  return new LiveRequestState(id, path, request, server, trustProxy);
}

export function logRequest(log: Logger, state: RequestState, request: Request, status: number): void {
  if (!log.enabled('info')) return;
  log.info('request', {
    request_id: state.id,
    method: request.method,
    path: loggablePath(request.url, state.path),
    status,
    duration_ms: Math.round((performance.now() - state.startedAt) * 100) / 100,
    client: state.clientAddress,
    org_id: state.principal?.org.id,
    key_id: state.principal?.kind === 'key' ? state.principal.key.id : undefined,
    user_id: state.principal?.kind === 'session' ? state.principal.user.id : undefined,
  });
}
