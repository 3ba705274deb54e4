// Console sessions as the gate sees them: the `revintel_session` cookie's token, looked up by its
// SHA-256, judged against the idle (12 h) and absolute (7 d) ends, and turned into a Principal that
// spends its organisation's budget like a key. Looked up only when a request has the cookie and no
// Authorization header, so API clients never pay for it; not cached, so a sign-out, a disabled user
// or a session ended elsewhere is refused at the next request.
import { eq, sql } from 'drizzle-orm';
import { organisations, sessions, users } from '../../db/schema/index.ts';
import type { Db } from '../../db/client.ts';
import type { Config } from '../../config.ts';
import type { SessionPrincipal } from '../keys/service.ts';
import { limitsOf } from '../orgs/service.ts';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../users/service.ts';
import { sameSecret, sha256Hex } from '../../lib/digest.ts';

const SESSION_COOKIE = 'revintel_session';
const CSRF_HEADER = 'x-csrf-token';
/** last_seen_at is written at most this often per session. */
const LAST_SEEN_RESOLUTION_MS = 60_000;

export type SessionFailure = 'unknown' | 'ended' | 'idle' | 'expired' | 'disabled';

export const SESSION_FAILURE_MESSAGES: Record<SessionFailure, string> = {
  unknown: 'Your session is not valid: sign in again',
  ended: 'Your session has ended (signed out): sign in again',
  idle: 'Your session ended after 12 hours without use: sign in again',
  expired: 'Your session reached its 7-day limit: sign in again',
  disabled: 'This account is disabled',
};

/** The CSRF token of a session: derived from the cookie's token (a SHA-256 under its own label),
 * so it is never stored, cannot be turned back into the cookie, and changes with every session. */
export const csrfTokenOf = (sessionToken: string): string => Bun.SHA256.hash(`revintel-csrf:${sessionToken}`, 'base64url') as string;

/** The session cookie's token in a Cookie header (null: none). */
export function sessionTokenOf(cookieHeader: string | null): string | null {
  if (!cookieHeader?.includes(SESSION_COOKIE)) return null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return /^[0-9A-Za-z]{20,128}$/.test(value) ? value : null;
    }
  }
  return null;
}

const secureCookies = (config: Pick<Config, 'publicUrl'>) => config.publicUrl?.startsWith('https:') ?? false;

/** Set-Cookie for a new session: HttpOnly, SameSite=Lax, the whole site; Secure behind https. */
export function sessionCookie(token: string, config: Pick<Config, 'publicUrl'>): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${SESSION_ABSOLUTE_MS / 1000}${secureCookies(config) ? '; Secure' : ''}`;
}

/** Set-Cookie that removes the session cookie (sign-out). */
export function clearedSessionCookie(config: Pick<Config, 'publicUrl'>): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secureCookies(config) ? '; Secure' : ''}`;
}

export interface SessionAuthenticator {
  authenticate(token: string): Promise<SessionPrincipal | SessionFailure>;
}

export function createSessionAuthenticator(db: Db, onError: (error: unknown) => void = () => {}): SessionAuthenticator {
  const byHash = db
    .select({ session: sessions, user: users, org: organisations })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .innerJoin(organisations, eq(organisations.id, sessions.orgId))
    .where(eq(sessions.tokenHash, sql.placeholder('hash')))
    .limit(1)
    .prepare('auth_session_by_hash');

  return {
    async authenticate(token) {
      const [row] = await byHash.execute({ hash: sha256Hex(token) });
      if (!row) return 'unknown';
      const { session, user, org } = row;
      const now = Date.now();
      if (session.revokedAt) return 'ended';
      if (session.expiresAt.getTime() <= now) return 'expired';
      if (now - session.lastSeenAt.getTime() > SESSION_IDLE_MS) return 'idle';
      if (user.disabledAt) return 'disabled';
      if (now - session.lastSeenAt.getTime() >= LAST_SEEN_RESOLUTION_MS) {
        db.update(sessions)
          .set({ lastSeenAt: new Date(now) })
          .where(eq(sessions.id, session.id))
          .then(undefined, onError);
      }
      return {
        kind: 'session',
        org,
        user: { id: user.id, email: user.email, name: user.name, role: user.role },
        session: { id: session.id, csrfToken: csrfTokenOf(token) },
        rateSubject: `org:${org.id}`,
        limits: limitsOf(org),
      };
    },
  };
}

// --- cross-site request forgery ----------------------------------------------------------------

/** The server's own origin: PUBLIC_URL's, else the one the request was addressed to (its Host). */
export function ownOrigin(request: Request, config: Pick<Config, 'publicUrl'>): string {
  return config.publicUrl ? new URL(config.publicUrl).origin : new URL(request.url).origin;
}

/** Where the request says it comes from: Origin, else Referer's origin; null when neither is sent. */
function claimedOrigin(request: Request): string | null {
  const origin = request.headers.get('origin');
  if (origin && origin !== 'null') return origin;
  if (origin === 'null') return 'null';
  const referer = request.headers.get('referer');
  if (!referer) return null;
  try {
    return new URL(referer).origin;
  } catch {
    return 'null';
  }
}

/** Without PUBLIC_URL the scheme is whatever reached us (http behind a TLS proxy): compare hosts. */
function sameOrigin(claimed: string, request: Request, config: Pick<Config, 'publicUrl'>): boolean {
  if (config.publicUrl) return claimed === ownOrigin(request, config);
  try {
    return new URL(claimed).host === new URL(request.url).host;
  } catch {
    return false;
  }
}

export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Why a state-changing request made with a session is refused (null: it may proceed). */
export function csrfProblem(request: Request, principal: SessionPrincipal, config: Pick<Config, 'publicUrl'>): string | null {
  const sent = request.headers.get(CSRF_HEADER);
  if (!sent) return 'Missing X-CSRF-Token header: a request made with a console session must send the csrf_token of GET /api/me';
  if (!sameSecret(sent, principal.session.csrfToken)) return "X-CSRF-Token does not match this session's csrf_token";
  const claimed = claimedOrigin(request);
  if (!claimed) return 'Missing Origin header: a request made with a console session must say where it comes from';
  if (!sameOrigin(claimed, request, config)) return `Origin ${claimed} is not this server's (${ownOrigin(request, config)})`;
  return null;
}

/** A request with no session yet (sign-in, accepting a link): refused when it says it comes from
 * another site (a cross-origin form post); allowed when it says nothing. */
export function foreignOriginProblem(request: Request, config: Pick<Config, 'publicUrl'>): string | null {
  const claimed = request.headers.get('origin');
  if (!claimed) return null;
  return sameOrigin(claimed, request, config) ? null : `Origin ${claimed} is not this server's (${ownOrigin(request, config)})`;
}
