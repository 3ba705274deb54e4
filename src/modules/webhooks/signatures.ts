// Who sent a ticket webhook: `x-hub-signature-256` or the platform's own scheme (docs/tickets.md "Connecting
// a platform"), checked on the raw bytes in constant time; timestamps within 5 minutes (Linear 60 s).
// Pure: no database, no clock unless the caller leaves `now` out. This runs on every webhook before
// anything is stored, so it works on the raw bytes and only parses JSON for Linear, whose replay
// timestamp lives in the body.
import { sha256Hex } from '../../lib/digest.ts';
import { timingSafeEqual } from 'node:crypto';
import type { Platform } from '../tickets/platforms.ts';

export interface WebhookRequestParts {
  rawBody: Uint8Array; // the exact bytes received
  headers: Headers; // the request's headers
  method: string; // 'POST'
  /** The URL the platform called, as the platform saw it (PUBLIC_URL + path + query when set): HubSpot v3 signs it. */
  url: string;
}

export interface ConnectorCredentials {
  platform: Platform;
  /** Webhook secrets currently valid (the current one, and during a rotation the previous one). Empty: no signature required. */
  secrets: string[];
  /** SHA-256 hex of the static bearer token, when the connector has one (Freshdesk, Gorgias, Zoho: `Authorization: Bearer <token>`). */
  tokenHash: string | null;
}

export type Verdict = { ok: true; scheme: string } | { ok: false; reason: string };

// Svix, Slack and HubSpot all use ±5 minutes; Linear's docs ask for one minute.
const TIMESTAMP_WINDOW_MS = 5 * 60 * 1000;
const LINEAR_TIMESTAMP_WINDOW_MS = 60 * 1000;

// The customer's interface's header: accepted for every platform, besides the platform's own scheme.
const HUB_SHA256_HEADER = 'x-hub-signature-256';

/** SHA-256 hex of a connector's static token: what the connector service stores instead of the token. */
export const hashToken = sha256Hex;

export function verifyWebhook(request: WebhookRequestParts, credentials: ConnectorCredentials, now: number = Date.now()): Verdict {
  const hasSecrets = credentials.secrets.length > 0;
  const tokenHash = credentials.tokenHash;
  // Platforms that can neither sign nor add a header: the unguessable connector id is the credential.
  if (!hasSecrets && tokenHash === null) return { ok: true, scheme: 'none' };

  let tokenVerdict: Verdict | null = null;
  if (tokenHash !== null) {
    tokenVerdict = verifyBearerToken(request.headers, tokenHash);
    if (tokenVerdict.ok || !hasSecrets) return tokenVerdict;
  }

  const signatureVerdict = verifySignature(request, credentials.platform, credentials.secrets, now);
  if (signatureVerdict.ok || tokenVerdict === null) return signatureVerdict;
  // Both were possible and neither passed: the delivery log should say why for each.
  return { ok: false, reason: `${tokenVerdict.reason}; ${signatureVerdict.reason}` };
}

function verifyBearerToken(headers: Headers, tokenHash: string): Verdict {
  const authorization = headers.get('authorization');
  if (authorization === null) return { ok: false, reason: 'missing Authorization header (expected "Bearer <token>")' };
  const bearerMatch = /^bearer\s+(\S+)\s*$/i.exec(authorization.trim());
  if (bearerMatch === null) return { ok: false, reason: 'Authorization header is not "Bearer <token>"' };
  // Comparing hashes (fixed length) means the stored token never exists in memory and the comparison
  // time says nothing about the token's length.
  const presentedHash = hashToken(bearerMatch[1] as string);
  return equalsInConstantTime(presentedHash, tokenHash.toLowerCase())
    ? { ok: true, scheme: 'bearer' }
    : { ok: false, reason: 'bearer token did not match' };
}

// ---------------------------------------------------------------------------------------------
// Signature schemes

interface SignatureScheme {
  /** Reported on success, so logs show which scheme a platform actually used. */
  scheme: string;
  /** Lower-case header carrying the signature; when it is absent the scheme is not attempted. */
  signatureHeader: string;
  verify: (receivedSignature: string, request: WebhookRequestParts, secrets: string[], now: number) => Verdict;
}

const hubSha256Scheme: SignatureScheme = {
  scheme: 'hub-sha256',
  signatureHeader: HUB_SHA256_HEADER,
  verify: (received, request, secrets) =>
    verifyPrefixedHex(received, 'sha256=', 'sha256', HUB_SHA256_HEADER, request.rawBody, secrets, 'hub-sha256'),
};

// Zendesk: base64(HMAC-SHA256(secret, timestamp + body)). The signing secret looks like base64 but is
// used as the key as-is (the fixtures only verify that way).
const zendeskScheme: SignatureScheme = {
  scheme: 'zendesk',
  signatureHeader: 'x-zendesk-webhook-signature',
  verify: (received, request, secrets, now) =>
    verifyTimestampedBase64(received, request, secrets, now, {
      scheme: 'zendesk',
      signatureHeader: 'x-zendesk-webhook-signature',
      timestampHeader: 'x-zendesk-webhook-signature-timestamp',
      signedParts: (timestamp) => [timestamp, request.rawBody],
    }),
};

// Intercom and Jira share the `x-hub-signature` header with different algorithms, so each checks its
// own prefix (Intercom `sha1=`, Jira `sha256=`).
const intercomScheme: SignatureScheme = {
  scheme: 'intercom',
  signatureHeader: 'x-hub-signature',
  verify: (received, request, secrets) =>
    verifyPrefixedHex(received, 'sha1=', 'sha1', 'x-hub-signature', request.rawBody, secrets, 'intercom'),
};

const jiraScheme: SignatureScheme = {
  scheme: 'jira',
  signatureHeader: 'x-hub-signature',
  verify: (received, request, secrets) =>
    verifyPrefixedHex(received, 'sha256=', 'sha256', 'x-hub-signature', request.rawBody, secrets, 'jira'),
};

const helpScoutScheme: SignatureScheme = {
  scheme: 'helpscout',
  signatureHeader: 'x-helpscout-signature',
  verify: (received, request, secrets) =>
    anySecretMatches(secrets, received.trim(), (secret) => hmac('sha1', secret, [request.rawBody], 'base64'))
      ? { ok: true, scheme: 'helpscout' }
      : signatureMismatch('x-helpscout-signature'),
};

// Linear: bare hex over the body; the replay timestamp is `webhookTimestamp` (ms) inside the body.
const linearScheme: SignatureScheme = {
  scheme: 'linear',
  signatureHeader: 'linear-signature',
  verify: (received, request, secrets, now) => {
    const receivedHex = received.trim().toLowerCase();
    if (!anySecretMatches(secrets, receivedHex, (secret) => hmac('sha256', secret, [request.rawBody], 'hex'))) {
      return signatureMismatch('linear-signature');
    }
    // Checked after the signature so forged requests never cost a JSON parse.
    const webhookTimestamp = readLinearWebhookTimestamp(request.rawBody);
    // A body that is not JSON is the route's 400, not an authentication failure.
    if (webhookTimestamp === NOT_JSON) return { ok: true, scheme: 'linear' };
    // Without a timestamp there is no window, and a captured delivery could be replayed for ever.
    // Linear sends integer milliseconds; any finite number is judged by the window alone.
    if (typeof webhookTimestamp !== 'number' || !Number.isFinite(webhookTimestamp)) {
      return { ok: false, reason: 'body webhookTimestamp is missing or not a number (epoch milliseconds)' };
    }
    if (Math.abs(now - webhookTimestamp) > LINEAR_TIMESTAMP_WINDOW_MS) {
      return { ok: false, reason: 'timestamp outside the 60-second window (body webhookTimestamp)' };
    }
    return { ok: true, scheme: 'linear' };
  },
};

// Front application webhooks: base64(HMAC-SHA256(signing key, timestamp + ":" + body)).
const frontScheme: SignatureScheme = {
  scheme: 'front',
  signatureHeader: 'x-front-signature',
  verify: (received, request, secrets, now) =>
    verifyTimestampedBase64(received, request, secrets, now, {
      scheme: 'front',
      signatureHeader: 'x-front-signature',
      timestampHeader: 'x-front-request-timestamp',
      signedParts: (timestamp) => [`${timestamp}:`, request.rawBody],
    }),
};

// HubSpot v3: base64(HMAC-SHA256(client secret, method + URI + body + timestamp)).
const hubSpotV3Scheme: SignatureScheme = {
  scheme: 'hubspot-v3',
  signatureHeader: 'x-hubspot-signature-v3',
  verify: (received, request, secrets, now) =>
    verifyTimestampedBase64(received, request, secrets, now, {
      scheme: 'hubspot-v3',
      signatureHeader: 'x-hubspot-signature-v3',
      timestampHeader: 'x-hubspot-request-timestamp',
      signedParts: (timestamp) => [request.method, decodeHubSpotUri(request.url), request.rawBody, timestamp],
    }),
};

// Every platform accepts the customer's interface's header first; then what the platform itself sends.
// GitHub's own scheme is that header; Salesforce (Flow/Apex), Freshdesk, Gorgias, Zoho and generic have
// no native signature, so a configured secret means they must send it too.
const SCHEMES_BY_PLATFORM: Record<Platform, readonly SignatureScheme[]> = {
  zendesk: [hubSha256Scheme, zendeskScheme],
  freshdesk: [hubSha256Scheme],
  intercom: [hubSha256Scheme, intercomScheme],
  hubspot: [hubSha256Scheme, hubSpotV3Scheme],
  front: [hubSha256Scheme, frontScheme],
  helpscout: [hubSha256Scheme, helpScoutScheme],
  jira: [hubSha256Scheme, jiraScheme],
  linear: [hubSha256Scheme, linearScheme],
  github: [hubSha256Scheme],
  salesforce: [hubSha256Scheme],
  gorgias: [hubSha256Scheme],
  zoho: [hubSha256Scheme],
  generic: [hubSha256Scheme],
};

/** The headers a platform's signature is read from, in the order they are tried (what signing-help.ts
 * tells a person setting up a connector must be one of them). */
export const signatureHeadersOf = (platform: Platform): string[] => SCHEMES_BY_PLATFORM[platform].map((scheme) => scheme.signatureHeader);

function verifySignature(request: WebhookRequestParts, platform: Platform, secrets: string[], now: number): Verdict {
  const schemes = SCHEMES_BY_PLATFORM[platform];
  let firstFailure: Verdict | null = null;
  for (const scheme of schemes) {
    const receivedSignature = request.headers.get(scheme.signatureHeader);
    if (receivedSignature === null) continue;
    const verdict = scheme.verify(receivedSignature, request, secrets, now);
    if (verdict.ok) return verdict;
    firstFailure ??= verdict;
  }
  if (firstFailure !== null) return firstFailure;
  const expectedHeaders = schemes.map((scheme) => scheme.signatureHeader).join(' or ');
  return { ok: false, reason: `missing signature header (expected ${expectedHeaders})` };
}

function verifyPrefixedHex(
  received: string,
  prefix: string,
  algorithm: 'sha1' | 'sha256',
  header: string,
  rawBody: Uint8Array,
  secrets: string[],
  scheme: string,
): Verdict {
  // The customer's interface says lowercase hex; senders that upper-case it still hold the right key.
  const normalized = received.trim().toLowerCase();
  if (!normalized.startsWith(prefix)) return { ok: false, reason: `${header} does not start with "${prefix}"` };
  const receivedHex = normalized.slice(prefix.length);
  return anySecretMatches(secrets, receivedHex, (secret) => hmac(algorithm, secret, [rawBody], 'hex'))
    ? { ok: true, scheme }
    : signatureMismatch(header);
}

interface TimestampedScheme {
  scheme: string;
  signatureHeader: string;
  timestampHeader: string;
  /** What the platform signs, given the timestamp header exactly as received. */
  signedParts: (timestamp: string) => (string | Uint8Array)[];
}

function verifyTimestampedBase64(
  received: string,
  request: WebhookRequestParts,
  secrets: string[],
  now: number,
  timestamped: TimestampedScheme,
): Verdict {
  const timestamp = request.headers.get(timestamped.timestampHeader);
  if (timestamp === null) return { ok: false, reason: `missing header ${timestamped.timestampHeader}` };
  const timestampMs = parseTimestampMs(timestamp.trim());
  if (timestampMs === null) return { ok: false, reason: `${timestamped.timestampHeader} is not a timestamp` };
  // Checked before the HMAC: a replayed request is rejected without spending a hash on it.
  if (Math.abs(now - timestampMs) > TIMESTAMP_WINDOW_MS) {
    return { ok: false, reason: `timestamp outside the 5-minute window (${timestamped.timestampHeader})` };
  }
  const signedParts = timestamped.signedParts(timestamp);
  return anySecretMatches(secrets, received.trim(), (secret) => hmac('sha256', secret, signedParts, 'base64'))
    ? { ok: true, scheme: timestamped.scheme }
    : signatureMismatch(timestamped.signatureHeader);
}

// ---------------------------------------------------------------------------------------------
// Helpers

function signatureMismatch(header: string): Verdict {
  // Never the expected value: the reason goes back to the sender's delivery log.
  return { ok: false, reason: `${header} did not match` };
}

// Bun.CryptoHasher rather than node:crypto's createHmac: about 1.5x faster on a 1 KB body here, and
// this runs on every delivery.
function hmac(algorithm: 'sha1' | 'sha256', secret: string, signedParts: (string | Uint8Array)[], encoding: 'hex' | 'base64'): string {
  const mac = new Bun.CryptoHasher(algorithm, secret);
  for (const part of signedParts) mac.update(part);
  return mac.digest(encoding);
}

// Any of the connector's secrets, so a rotation does not drop deliveries signed with the previous one.
function anySecretMatches(secrets: string[], receivedSignature: string, expectedSignatureFor: (secret: string) => string): boolean {
  for (const secret of secrets) {
    if (equalsInConstantTime(receivedSignature, expectedSignatureFor(secret))) return true;
  }
  return false;
}

// Compares the encoded strings' bytes (not decoded digests): decoders silently skip junk such as
// trailing characters, and the exact encoding is what the platform sent.
function equalsInConstantTime(received: string, expected: string): boolean {
  const receivedBytes = Buffer.from(received, 'utf8');
  const expectedBytes = Buffer.from(expected, 'utf8');
  // timingSafeEqual throws on different lengths; the expected length (digest size) is public anyway.
  return receivedBytes.length === expectedBytes.length && timingSafeEqual(receivedBytes, expectedBytes);
}

// HubSpot, Front and Linear send epoch milliseconds and Zendesk ISO-8601; epoch seconds are accepted
// too (a number over 1e12 is milliseconds) so a unit change does not lock a sender out.
function parseTimestampMs(value: string): number | null {
  if (/^\d+(\.\d+)?$/.test(value)) {
    const epoch = Number(value);
    return epoch > 1e12 ? epoch : epoch * 1000;
  }
  const parsedMs = Date.parse(value);
  return Number.isNaN(parsedMs) ? null : parsedMs;
}

// HubSpot signs the URI with these escapes decoded (its v3 validation guide); others stay encoded.
const HUBSPOT_DECODED_ESCAPES: Record<string, string> = {
  '%3A': ':',
  '%2F': '/',
  '%3F': '?',
  '%40': '@',
  '%21': '!',
  '%24': '$',
  '%27': "'",
  '%28': '(',
  '%29': ')',
  '%2A': '*',
  '%2C': ',',
  '%3B': ';',
};

function decodeHubSpotUri(url: string): string {
  if (!url.includes('%')) return url;
  return url.replace(/%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi, (encoded) => HUBSPOT_DECODED_ESCAPES[encoded.toUpperCase()] ?? encoded);
}

const NOT_JSON = Symbol('not JSON');

/** The body's `webhookTimestamp` as sent (undefined when absent), or NOT_JSON. */
function readLinearWebhookTimestamp(rawBody: Uint8Array): unknown {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString('utf8'));
  } catch {
    return NOT_JSON;
  }
  return typeof body === 'object' && body !== null ? (body as { webhookTimestamp?: unknown }).webhookTimestamp : undefined;
}
