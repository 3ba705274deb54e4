// Google Chat's bearer token (docs/chat-platforms.md "Google Chat"; Google's "Verify requests from Google Chat"):
// with the app's Authentication Audience set to its HTTP endpoint URL, an OIDC ID token signed by
// Google's OAuth keys (GOOGLE_JWKS_URL), issued by accounts.google.com, for the endpoint's URL, its
// verified `email` the signer; set to the project number, a JWT that chat@system.gserviceaccount.com
// signs with the keys of its x509 certificates (GOOGLE_CHAT_CERTS_URL, chosen by `kid`), for the
// project's number. Only RS256. Keys are fetched once and kept for the max-age Google gives; past
// it the kept keys still answer at once while one refresh runs behind them. An unknown kid fetches
// them again at most once per KEY_REFETCH_GAP_MS (a failed try counts), a failed fetch is not tried
// again for KEY_FAILURE_BACKOFF_MS, concurrent verifications share one fetch, and there are at
// most KEY_FETCHES_PER_MINUTE: no stream of forged kids, and no outage of Google's, makes us
// hammer Google or makes a valid event wait. Nothing cached and no keys to be had is a 503.
import { decodeProtectedHeader, importJWK, importX509, jwtVerify, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { GchatAudienceMode } from '../../config.ts';
import { messageOf } from '../../lib/errors.ts';
import { isJsonObject } from '../signed-webhooks/payload.ts';

export const CHAT_ISSUER = 'chat@system.gserviceaccount.com';
export const ID_TOKEN_ISSUERS = ['https://accounts.google.com', 'accounts.google.com'];
/** Add-on events are signed by the project's Workspace add-ons service agent. */
export const addOnSigner = (projectNumber: string) => `service-${projectNumber}@gcp-sa-gsuiteaddons.iam.gserviceaccount.com`;

const KEY_FETCH_TIMEOUT_MS = 5_000;
const KEY_REFETCH_GAP_MS = 30_000;
const KEY_FAILURE_BACKOFF_MS = 10_000;
const KEY_FETCHES_PER_MINUTE = 4;
const DEFAULT_MAX_AGE_S = 3600;
const MAX_AGE_BOUNDS_S: [number, number] = [60, 86_400];
const CLOCK_TOLERANCE_S = 30;

/** The token does not prove Google sent this request: 401. */
export class TokenRejected extends Error {
  override readonly name = 'TokenRejected';
}

/** Google's keys could not be had: 503 (nothing is known about the token). */
export class KeysUnavailable extends Error {
  override readonly name = 'KeysUnavailable';
}

interface KeySet {
  keys: Map<string, CryptoKey>;
  fetchedAt: number;
  expiresAt: number;
}

/** `Cache-Control: max-age=N` within bounds, else an hour. */
function maxAgeOf(header: string | null): number {
  const match = /(?:^|,)\s*max-age=(\d+)/i.exec(header ?? '');
  const seconds = match ? Number(match[1]) : DEFAULT_MAX_AGE_S;
  return Math.min(MAX_AGE_BOUNDS_S[1], Math.max(MAX_AGE_BOUNDS_S[0], seconds));
}

/** One of Google's key sets: a JWKS (`{keys: [...]}`) or a map of kid to PEM certificate. */
export function googleKeySet(url: string, format: 'jwks' | 'x509', clock: () => number = Date.now) {
  let current: KeySet | null = null;
  let fetching: Promise<KeySet> | null = null;

  async function load(): Promise<KeySet> {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json' },
        redirect: 'manual',
        signal: AbortSignal.timeout(KEY_FETCH_TIMEOUT_MS),
      });
    } catch (error) {
      throw new KeysUnavailable(`Google's keys (${format}) could not be fetched: ${messageOf(error)}`);
    }
    if (response.status !== 200) throw new KeysUnavailable(`Google's keys (${format}) answered ${response.status}`);
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw new KeysUnavailable(`Google's keys (${format}) are not JSON`);
    }
    const keys = new Map<string, CryptoKey>();
    if (format === 'jwks') {
      const listed = isJsonObject(body) && Array.isArray(body.keys) ? body.keys : [];
      // Each entry is checked below (kid, kty, alg) before jose reads it as a key.
      for (const jwk of listed.filter((entry): entry is JWK => isJsonObject(entry))) {
        if (typeof jwk?.kid !== 'string' || jwk.kty !== 'RSA' || (jwk.alg !== undefined && jwk.alg !== 'RS256')) continue;
        const key = await importJWK({ ...jwk, alg: 'RS256' }, 'RS256').catch(() => null);
        if (key && !(key instanceof Uint8Array)) keys.set(jwk.kid, key);
      }
    } else if (isJsonObject(body)) {
      for (const [kid, pem] of Object.entries(body)) {
        if (typeof pem !== 'string') continue;
        const key = await importX509(pem, 'RS256').catch(() => null);
        if (key) keys.set(kid, key);
      }
    }
    if (keys.size === 0) throw new KeysUnavailable(`Google's keys (${format}) hold no RS256 key`);
    const now = clock();
    return { keys, fetchedAt: now, expiresAt: now + maxAgeOf(response.headers.get('cache-control')) * 1000 };
  }

  /** When the last fetches started (the last minute's), and the last failure while it is fresh. */
  let started: number[] = [];
  let failure: { error: unknown; at: number } | null = null;

  /** Whether a fetch may start now: none failed within the back-off, and the minute's budget holds. */
  function mayFetch(now: number): boolean {
    if (failure && now - failure.at < KEY_FAILURE_BACKOFF_MS) return false;
    started = started.filter((at) => now - at < 60_000);
    return started.length < KEY_FETCHES_PER_MINUTE;
  }

  /** One fetch at a time; its result (or failure) is everyone's. */
  function refresh(): Promise<KeySet> {
    if (fetching) return fetching;
    started.push(clock());
    fetching = load()
      .then(
        (set) => {
          failure = null;
          return (current = set);
        },
        (error) => {
          failure = { error, at: clock() };
          throw error;
        },
      )
      .finally(() => {
        fetching = null;
      });
    return fetching;
  }

  /** Why there are no keys to be had without fetching: the cached failure, or the spent budget. */
  const unavailable = () =>
    (failure?.error as Error | undefined) ??
    new KeysUnavailable(`Google's keys (${format}) were fetched ${KEY_FETCHES_PER_MINUTE} times this minute; try again shortly`);

  return {
    /** The key for `kid`: from the cache (past its max-age too, while a refresh runs), else fetched. */
    async keyFor(kid: string): Promise<CryptoKey> {
      const now = clock();
      if (!current) {
        if (!fetching && !mayFetch(now)) throw unavailable();
        await refresh();
      } else if (current.expiresAt <= now && !fetching && mayFetch(now)) {
        // Google's keys change rarely: the kept ones answer now, the refresh lands for later events.
        refresh().catch(() => {});
      }
      const known = current!.keys.get(kid);
      if (known) return known;
      // An unknown kid: Google may have rotated. Ask again only when the last try (failed or not)
      // is old enough, or join the one in flight.
      const lastTry = started[started.length - 1] ?? 0;
      if (fetching || (now - lastTry >= KEY_REFETCH_GAP_MS && mayFetch(now))) {
        await refresh().catch(() => {});
        const fresh = current!.keys.get(kid);
        if (fresh) return fresh;
      }
      throw new TokenRejected(`no key of Google's has the token's kid "${kid.slice(0, 64)}"`);
    },
  };
}

export type GoogleKeySet = ReturnType<typeof googleKeySet>;

export interface TokenCheck {
  mode: GchatAudienceMode;
  /** What `aud` must be: the endpoint's URL, or the project's number. */
  audience: string;
  /** Who must have signed it: chat@system.gserviceaccount.com, or the add-ons service agent. */
  signer: string;
  now: number;
}

/** The token's claims when it proves Google sent the request for this app; TokenRejected (401) or
 * KeysUnavailable (503) otherwise. */
export async function verifyChatToken(
  token: string,
  keys: { jwks: GoogleKeySet; x509: GoogleKeySet },
  check: TokenCheck,
): Promise<JWTPayload> {
  let header;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new TokenRejected('the bearer token is not a JWT');
  }
  if (header.alg !== 'RS256') throw new TokenRejected(`the token is signed with ${String(header.alg ?? 'no algorithm')}, not RS256`);
  if (typeof header.kid !== 'string' || !header.kid) throw new TokenRejected('the token names no key (kid)');
  const set = check.mode === 'endpoint_url' ? keys.jwks : keys.x509;
  const key = await set.keyFor(header.kid);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key, {
      algorithms: ['RS256'],
      issuer: check.mode === 'endpoint_url' ? ID_TOKEN_ISSUERS : CHAT_ISSUER,
      audience: check.audience,
      currentDate: new Date(check.now),
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['exp', 'iat'],
    }));
  } catch (error) {
    const code = (error as { code?: string }).code;
    const claim = (error as { claim?: string }).claim;
    if (code === 'ERR_JWT_EXPIRED') throw new TokenRejected('the token has expired');
    if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED')
      throw new TokenRejected(
        claim === 'aud'
          ? 'the token is for another audience'
          : claim === 'iss'
            ? 'the token has another issuer'
            : `the token's "${claim}" claim is not valid`,
      );
    if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') throw new TokenRejected("the token's signature does not verify");
    throw new TokenRejected(`the token does not verify (${code ?? 'malformed'})`);
  }
  // An ID token says who asked Google for it in `email`; the project-number JWT is self-issued.
  const signer = check.mode === 'endpoint_url' ? (payload.email_verified === true ? payload.email : null) : payload.iss;
  if (signer !== check.signer) throw new TokenRejected(`the token was not issued to ${check.signer}`);
  return payload;
}
