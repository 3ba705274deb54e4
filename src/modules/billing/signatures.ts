// Who sent a billing webhook, as pure functions of the raw bytes, the headers and the connector's
// credentials (docs/billing.md "Webhooks"). Stripe signs `t.{raw body}` with HMAC-SHA256 and sends
// one `v1` per active endpoint secret while a secret is being rolled; `v0` is a test-only scheme
// and never accepted. Chargebee does not sign: its only proof is the HTTP Basic credentials set on
// the webhook, so those are compared in constant time (over their SHA-256, so lengths leak nothing).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { BillingPlatform } from '../../db/schema/index.ts';

export type BillingVerdict = { ok: true } | { ok: false; reason: string };

const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

/** `t=…,v1=…[,v1=…]`: the timestamp and every `v1`; any other key (`v0` too) is ignored. */
export function parseStripeSignature(header: string): { timestamp: number | null; signatures: string[] } {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const at = item.indexOf('=');
    if (at < 0) continue;
    const key = item.slice(0, at).trim();
    const value = item.slice(at + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase());
  }
  return { timestamp, signatures };
}

/** The `v1` Stripe would send for this body at `timestamp` with `secret` (tests sign with it). */
export function stripeSignature(rawBody: Uint8Array | string, secret: string, timestamp: number): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/**
 * Valid when any `v1` is the HMAC of `{t}.{raw body}` under any of `secrets` (the current one, and the
 * previous one while its grace lasts: the caller passes only the secrets still valid), and `t` is
 * within `toleranceSeconds` of `now` either way (stripe-node accepts any future time; a clock skew
 * of minutes is a replay window we need not open). The signature is judged before the time, so a
 * refusal names the real fault.
 */
export function verifyStripeSignature(
  rawBody: Uint8Array | string,
  header: string | null,
  secrets: readonly string[],
  now: number,
  toleranceSeconds: number,
): BillingVerdict {
  if (!header) return { ok: false, reason: 'no Stripe-Signature header' };
  if (secrets.length === 0) return { ok: false, reason: 'the connector has no webhook secret' };
  const { timestamp, signatures } = parseStripeSignature(header);
  if (timestamp === null) return { ok: false, reason: 'Stripe-Signature has no timestamp' };
  if (signatures.length === 0) return { ok: false, reason: 'Stripe-Signature has no v1 signature' };
  let matched = false;
  // Every pair is compared (no early exit): the time taken says nothing about which one matched.
  for (const secret of secrets) {
    const expected = Buffer.from(stripeSignature(rawBody, secret, timestamp), 'hex');
    for (const signature of signatures) if (sameBytes(Buffer.from(signature, 'hex'), expected)) matched = true;
  }
  if (!matched) return { ok: false, reason: 'no v1 signature matches the webhook secret' };
  if (Math.abs(Math.floor(now / 1000) - timestamp) > toleranceSeconds)
    return { ok: false, reason: `the signature's timestamp is more than ${toleranceSeconds} s from now` };
  return { ok: true };
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** `Authorization: Basic base64(user:pass)` against the connector's `user:pass` (the password may
 * itself hold colons: only the first one separates, as Chargebee's own SDK reads it). */
export function verifyChargebeeBasic(header: string | null, credentials: string | null): BillingVerdict {
  if (!credentials) return { ok: false, reason: 'the connector has no webhook credentials' };
  const match = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!match) return { ok: false, reason: 'no Basic credentials' };
  const presented = Buffer.from(match[1]!, 'base64').toString('utf8');
  if (presented.indexOf(':') < 0) return { ok: false, reason: 'malformed Basic credentials' };
  return sameBytes(digest(presented), digest(credentials)) ? { ok: true } : { ok: false, reason: 'wrong Basic credentials' };
}

/** What a verifier knows of a connector once its secrets are opened. */
export interface OpenedBillingConnector {
  platform: BillingPlatform;
  /** Stripe: the secrets valid now (current, and previous within its grace). */
  webhookSecrets: string[];
  /** Chargebee: `user:pass`. */
  basicAuth: string | null;
}

/** The port the shared signed-webhook route calls for a billing connector. */
export interface BillingWebhookVerifier {
  verify(request: Pick<Request, 'headers'>, rawBody: Uint8Array, connector: OpenedBillingConnector): BillingVerdict;
}

export function billingVerifier(options: { toleranceSeconds: number; clock?: () => number }): BillingWebhookVerifier {
  const clock = options.clock ?? Date.now;
  return {
    verify(request, rawBody, connector) {
      return connector.platform === 'stripe'
        ? verifyStripeSignature(
            rawBody,
            request.headers.get('stripe-signature'),
            connector.webhookSecrets,
            clock(),
            options.toleranceSeconds,
          )
        : verifyChargebeeBasic(request.headers.get('authorization'), connector.basicAuth);
    },
  };
}
