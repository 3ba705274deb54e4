// The verification port: one function per signature scheme, given the exact bytes received and the
// credentials the sender is known by, answering a verdict. Schemes are pure (no database, the clock
// passed in), so a new sender's scheme — Stripe's `t=…,v1=…` with several `v1` and a previous
// secret in its rotation grace, Chargebee's Basic credentials — is one function beside these and
// its tests, whatever route it serves.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** A delivery as its signature covers it. */
export interface SignedDelivery {
  /** The exact bytes received. */
  rawBody: Uint8Array;
  headers: Headers;
  method: string;
  /** The URL the sender called, as it saw it (PUBLIC_URL + path + query when set). */
  url: string;
}

/** `scheme`: which of the sender's schemes proved it, when it has several. */
export type Verdict = { ok: true; scheme?: string } | { ok: false; reason: string };

/** A signature scheme: `credentials` are what the sender is known by (secrets during a rotation,
 * a token's hash, a key set); `nowMs` bounds replays. */
export type SignatureScheme<Credentials> = (delivery: SignedDelivery, credentials: Credentials, nowMs: number) => Verdict;

/** Whether `given` is HMAC-SHA256 of `parts` under one of `secrets`, in constant time: every secret
 * is tried, whichever matches, so the time taken does not say which one did. */
export function hmacSha256Matches(secrets: readonly string[], parts: readonly (string | Uint8Array)[], given: Uint8Array): boolean {
  let matched = false;
  for (const secret of secrets) {
    const hmac = createHmac('sha256', secret);
    for (const part of parts) hmac.update(part);
    const expected = hmac.digest();
    if (expected.length === given.length && timingSafeEqual(expected, given)) matched = true;
  }
  return matched;
}

/** A timestamp in Unix seconds within `windowS` of now, or why not. */
export function freshTimestamp(raw: string, nowMs: number, windowS: number, header: string): string | null {
  if (!/^\d{1,12}$/.test(raw)) return `${header} is not a Unix time`;
  if (Math.abs(nowMs / 1000 - Number(raw)) > windowS) return `the timestamp is more than ${windowS} s from now`;
  return null;
}
