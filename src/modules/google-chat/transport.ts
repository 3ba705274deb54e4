// Google Chat, outbound (docs/chat-platforms.md "Google Chat"): one attempt of one row of the chat outbox, in the worker. The app
// speaks as its service account: a JWT signed RS256 with the key file's private key (scope
// chat.bot) is exchanged at GOOGLE_TOKEN_URL for an access token, kept until a minute before it
// expires (one exchange serves every send meanwhile). An approval request is
// `POST {GCHAT_API_BASE}/{space}/messages?requestId=<copy id>` — Google answers a repeated requestId
// with the message it already created, so a retry after a timeout never posts twice; a decided
// copy is `PATCH {base}/{message name}?updateMask=cardsV2` (its buttons back when a snooze ended,
// with a reminder posted beside it). 429 (never sooner than Retry-After),
// 408, 5xx and timeouts are tried again; 401 drops the cached token and is tried again; any other
// 4xx stops at once.
import { readFile } from 'node:fs/promises';
import { importPKCS8, SignJWT } from 'jose';
import { OPEN_ACTION_STATUSES } from '../../db/schema/index.ts';
import { messageOf } from '../../lib/errors.ts';
import { OUTBOX_TIMEOUT_MS, retryAfterOf, unanswered } from '../../queue/outbox-attempts.ts';
import type { ActionSettings } from '../agent-actions/settings.ts';
import type { Pending, SendAnswer } from '../chat/port.ts';
import { approvalCard, decidedCard } from './cards.ts';

export const CHAT_BOT_SCOPE = 'https://www.googleapis.com/auth/chat.bot';
/** A token is renewed this long before Google says it expires. */
const TOKEN_MARGIN_MS = 60_000;

/** What Chat's API answers, as far as we read it. */
interface GoogleChatData {
  name?: unknown;
  error?: { status?: unknown };
}
type Answer = SendAnswer & { data: GoogleChatData | null };

const answer = (started: number, partial: Omit<Answer, 'ms'>): Answer => ({ ...partial, ms: Math.round(performance.now() - started) });
const permanent = (error: string): Answer => ({ status: null, error, ms: 0, retryAfterSeconds: null, final: true, data: null });
const transient = (error: string): Answer => ({ status: null, error, ms: 0, retryAfterSeconds: null, final: false, data: null });

// --- the service account's access token -----------------------------------------------------------

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

/** Why the key file cannot be used (final: its content is wrong; not final: it cannot be read yet). */
class KeyFileProblem extends Error {
  constructor(
    message: string,
    readonly final: boolean,
  ) {
    super(message);
  }
}

async function readKeyFile(path: string): Promise<ServiceAccountKey> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new KeyFileProblem(`GCHAT_SERVICE_ACCOUNT_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, false);
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new KeyFileProblem('GCHAT_SERVICE_ACCOUNT_FILE is not JSON', true);
  }
  for (const field of ['client_email', 'private_key'] as const) {
    if (typeof parsed[field] !== 'string' || !parsed[field]) throw new KeyFileProblem(`GCHAT_SERVICE_ACCOUNT_FILE has no "${field}"`, true);
  }
  return parsed as unknown as ServiceAccountKey;
}

interface CachedToken {
  key: string;
  token: string;
  expiresAt: number;
}

let cached: CachedToken | null = null;
let inFlight: { key: string; promise: Promise<string | Answer> } | null = null;

/** Forgets the cached access token (Google refused it, or a test starts afresh). */
export function forgetAccessToken(): void {
  cached = null;
}

/** An access token for the Chat API, from the cache or one exchange (shared by concurrent sends);
 * an Answer when it could not be had. */
export function accessToken(settings: ActionSettings, now = Date.now()): Promise<string | Answer> {
  const file = settings.gchatServiceAccountFile;
  if (!file) return Promise.resolve(permanent('GCHAT_SERVICE_ACCOUNT_FILE is not set: the app has no credentials'));
  const key = `${file}\n${settings.googleTokenUrl}`;
  if (cached && cached.key === key && cached.expiresAt - TOKEN_MARGIN_MS > now) return Promise.resolve(cached.token);
  if (inFlight && inFlight.key === key) return inFlight.promise;
  const promise = exchange(file, settings.googleTokenUrl, key).finally(() => {
    inFlight = null;
  });
  inFlight = { key, promise };
  return promise;
}

async function exchange(file: string, tokenUrl: string, cacheKey: string): Promise<string | Answer> {
  let account: ServiceAccountKey;
  let assertion: string;
  try {
    account = await readKeyFile(file);
    const privateKey = await importPKCS8(account.private_key, 'RS256').catch(() => {
      throw new KeyFileProblem('GCHAT_SERVICE_ACCOUNT_FILE\'s "private_key" is not an RSA private key (PKCS#8 PEM)', true);
    });
    const issuedAt = Math.floor(Date.now() / 1000);
    assertion = await new SignJWT({ scope: CHAT_BOT_SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.private_key_id ? { kid: account.private_key_id } : {}) })
      .setIssuer(account.client_email)
      .setAudience(tokenUrl)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + 3600)
      .sign(privateKey);
  } catch (error) {
    if (error instanceof KeyFileProblem) return error.final ? permanent(error.message) : transient(error.message);
    return permanent(`the service account's JWT could not be signed: ${messageOf(error)}`);
  }
  const started = performance.now();
  try {
    const response = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'revintel-google-chat/1' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(OUTBOX_TIMEOUT_MS),
    });
    const text = await response.text().catch(() => '');
    const status = response.status;
    if (status === 429 || status === 408 || status >= 500)
      return answer(started, {
        status,
        error: `the token endpoint answered ${status}`,
        retryAfterSeconds: retryAfterOf(response.headers.get('retry-after')),
        final: false,
        data: null,
      });
    let data: Record<string, unknown> | null = null;
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
    if (status < 200 || status >= 300) {
      // Google names the fault (invalid_grant: a revoked key, a clock far off); the assertion itself is never repeated.
      const code = typeof data?.error === 'string' ? data.error.slice(0, 100) : 'unknown';
      return answer(started, {
        status,
        error: `the token endpoint refused the service account (${status} ${code}): not retried`,
        retryAfterSeconds: null,
        final: true,
        data: null,
      });
    }
    const token = typeof data?.access_token === 'string' ? data.access_token : null;
    if (!token)
      return answer(started, {
        status,
        error: 'the token endpoint answered without an access_token',
        retryAfterSeconds: null,
        final: false,
        data: null,
      });
    const expiresIn = Number(data?.expires_in);
    cached = { key: cacheKey, token, expiresAt: Date.now() + (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600) * 1000 };
    return token;
  } catch (error) {
    return answer(started, {
      status: null,
      error: `the token endpoint: ${unanswered(error)}`,
      retryAfterSeconds: null,
      final: false,
      data: null,
    });
  }
}

// --- calls ----------------------------------------------------------------------------------------

/** One call to the Chat API with the app's token. Never throws. */
export async function callGoogleChat(
  settings: ActionSettings,
  method: 'POST' | 'PATCH',
  path: string,
  body: Record<string, unknown>,
): Promise<Answer> {
  const token = await accessToken(settings);
  if (typeof token !== 'string') return token;
  const started = performance.now();
  try {
    const response = await fetch(`${settings.gchatApiBase}/${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'revintel-google-chat/1',
      },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(OUTBOX_TIMEOUT_MS),
    });
    const text = await response.text().catch(() => '');
    const status = response.status;
    if (status === 429 || status === 408 || status >= 500)
      return answer(started, {
        status,
        error: `answered ${status}`,
        retryAfterSeconds: retryAfterOf(response.headers.get('retry-after')),
        final: false,
        data: null,
      });
    if (status === 401) {
      // The token was revoked or expired early: the next attempt exchanges a new one.
      forgetAccessToken();
      return answer(started, {
        status,
        error: 'answered 401: the access token is renewed for the next attempt',
        retryAfterSeconds: null,
        final: false,
        data: null,
      });
    }
    let data: GoogleChatData | null = null;
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
    if (status < 200 || status >= 300) {
      const reason = typeof data?.error?.status === 'string' ? ` ${data.error.status}` : '';
      return answer(started, {
        status,
        error: `answered ${status}${reason}: not retried`,
        retryAfterSeconds: null,
        final: true,
        data: null,
      });
    }
    if (!data) return answer(started, { status, error: 'the answer is not JSON', retryAfterSeconds: null, final: false, data: null });
    return answer(started, { status, error: null, retryAfterSeconds: null, final: false, data });
  } catch (error) {
    return answer(started, { status: null, error: unanswered(error), retryAfterSeconds: null, final: false, data: null });
  }
}

/** Sends one Google Chat row of the chat outbox; for a post, where the message is. */
export async function attemptGoogleChatSend(pending: Pending, settings: ActionSettings): Promise<Answer> {
  switch (pending.kind) {
    case 'post': {
      if (!pending.facts || !pending.nonce || !pending.notification_id) return permanent('the action or its copy is gone');
      if (!(OPEN_ACTION_STATUSES as readonly string[]).includes(pending.facts.status) || pending.facts.status === 'approved') {
        return permanent(`the action was ${pending.facts.status} before its copy was sent`);
      }
      const space = pending.installation_external_id;
      const card = approvalCard(pending.facts, pending.nonce, pending.target ?? pending.csm_email);
      // The copy's id is the request id: a retry of a create Google already did returns that message.
      const sent = await callGoogleChat(
        settings,
        'POST',
        `${space}/messages?requestId=${encodeURIComponent(pending.notification_id)}`,
        card,
      );
      if (sent.error) return sent;
      const name = typeof sent.data?.name === 'string' ? sent.data.name : '';
      if (!name.startsWith(`${space}/messages/`)) return { ...sent, error: 'the answer names no message of the space', final: false };
      return { ...sent, channel: space, ts: name };
    }
    case 'update': {
      if (!pending.facts) return permanent('the action is gone');
      const name = String(pending.request.name ?? '');
      if (!/^spaces\/[^/]+\/messages\/[^/?#]+$/.test(name)) return permanent(`"${name.slice(0, 100)}" is not a Google Chat message name`);
      // A card of an action waiting for a decision again (its snooze ended) gets its buttons back.
      const waiting = pending.facts.status === 'pending_approval' && pending.nonce;
      const card = waiting ? approvalCard(pending.facts, pending.nonce!, pending.target ?? pending.csm_email) : decidedCard(pending.facts);
      return callGoogleChat(settings, 'PATCH', `${name}?updateMask=cardsV2`, { cardsV2: card.cardsV2 });
    }
    case 'reply': {
      // The send's own id is the request id: a retried reminder is posted once.
      return callGoogleChat(settings, 'POST', `${pending.installation_external_id}/messages?requestId=${encodeURIComponent(pending.id)}`, {
        text: String(pending.request.text ?? ''),
      });
    }
    default:
      return permanent(`Google Chat rows are posts, updates and replies, not ${pending.kind}`);
  }
}
