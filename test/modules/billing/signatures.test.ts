// Billing webhook verification on the recorded vectors (test/fixtures/billing/signatures.json,
// computed over the exact bytes of the fixtures) and on bodies signed here.
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { billingVerifier, stripeSignature, verifyChargebeeBasic, verifyStripeSignature } from '../../../src/modules/billing/signatures.ts';

const FIXTURES = new URL('../../fixtures/billing/', import.meta.url);
const vectors = JSON.parse(readFileSync(new URL('signatures.json', FIXTURES), 'utf8'));
const { current, previous } = vectors.secrets as { current: string; previous: string };
const TOLERANCE = 300;

describe('verifyStripeSignature', () => {
  for (const [file, vector] of Object.entries<Record<string, any>>(vectors.stripe)) {
    const body = readFileSync(new URL(file, FIXTURES));
    const at = vector.t * 1000;

    test(`${file}: the current secret's signature is valid`, () => {
      expect(verifyStripeSignature(body, vector.header_current, [current], at, TOLERANCE)).toEqual({ ok: true });
    });
    test(`${file}: two v1 during a rotation, either secret valid`, () => {
      expect(verifyStripeSignature(body, vector.header_rotation_both, [current], at, TOLERANCE)).toEqual({ ok: true });
      expect(verifyStripeSignature(body, vector.header_rotation_both, [previous], at, TOLERANCE)).toEqual({ ok: true });
    });
    test(`${file}: signed by the previous secret: valid only while it is within its grace`, () => {
      expect(verifyStripeSignature(body, vector.header_previous_only, [current, previous], at, TOLERANCE)).toEqual({ ok: true });
      expect(verifyStripeSignature(body, vector.header_previous_only, [current], at, TOLERANCE).ok).toBe(false);
    });
    test(`${file}: v0 alone is refused`, () => {
      expect(verifyStripeSignature(body, vector.header_v0_only, [current], at, TOLERANCE)).toEqual({
        ok: false,
        reason: 'Stripe-Signature has no v1 signature',
      });
    });
    test(`${file}: a body altered by one byte is refused`, () => {
      const altered = Buffer.from(body);
      altered[altered.length - 2]! ^= 1;
      expect(verifyStripeSignature(altered, vector.header_current, [current], at, TOLERANCE).ok).toBe(false);
    });
    test(`${file}: outside the tolerance, past or future, is refused; at its edge it holds`, () => {
      expect(verifyStripeSignature(body, vector.header_current, [current], at + 300_000, TOLERANCE).ok).toBe(true);
      expect(verifyStripeSignature(body, vector.header_current, [current], at + 301_000, TOLERANCE)).toEqual({
        ok: false,
        reason: "the signature's timestamp is more than 300 s from now",
      });
      expect(verifyStripeSignature(body, vector.header_current, [current], at - 301_000, TOLERANCE).ok).toBe(false);
    });
  }

  test('a valid v1 among junk ones passes; no header, no timestamp or no secret fail with their reason', () => {
    const body = '{"id":"evt_1"}';
    const t = 1_780_000_000;
    const good = stripeSignature(body, current, t);
    expect(verifyStripeSignature(body, `t=${t},v1=potato,v1=${'0'.repeat(64)},v1=${good}`, [current], t * 1000, TOLERANCE).ok).toBe(true);
    expect(verifyStripeSignature(body, null, [current], t * 1000, TOLERANCE)).toEqual({ ok: false, reason: 'no Stripe-Signature header' });
    expect(verifyStripeSignature(body, `v1=${good}`, [current], t * 1000, TOLERANCE)).toEqual({
      ok: false,
      reason: 'Stripe-Signature has no timestamp',
    });
    expect(verifyStripeSignature(body, `t=${t},v1=${good}`, [], t * 1000, TOLERANCE).ok).toBe(false);
  });
});

describe('verifyChargebeeBasic', () => {
  const { username, password, authorization } = vectors.chargebee;
  const credentials = `${username}:${password}`;

  test("the recorded header passes (a password with ':' splits on the first one)", () => {
    expect(verifyChargebeeBasic(authorization, credentials)).toEqual({ ok: true });
  });
  test('wrong credentials, none, or another scheme are refused', () => {
    const wrong = `Basic ${Buffer.from(`${username}:nope`).toString('base64')}`;
    expect(verifyChargebeeBasic(wrong, credentials)).toEqual({ ok: false, reason: 'wrong Basic credentials' });
    expect(verifyChargebeeBasic(null, credentials)).toEqual({ ok: false, reason: 'no Basic credentials' });
    expect(verifyChargebeeBasic('Bearer abc', credentials)).toEqual({ ok: false, reason: 'no Basic credentials' });
    expect(verifyChargebeeBasic(authorization, null).ok).toBe(false);
  });
});

test('billingVerifier dispatches on the platform, reading the headers the platforms send', () => {
  const verifier = billingVerifier({ toleranceSeconds: TOLERANCE, clock: () => 1_780_000_000_000 });
  const body = new TextEncoder().encode('{"id":"evt_2"}');
  const signed = new Request('http://x/', {
    method: 'POST',
    headers: { 'stripe-signature': `t=1780000000,v1=${stripeSignature(body, current, 1_780_000_000)}` },
  });
  expect(verifier.verify(signed, body, { platform: 'stripe', webhookSecrets: [current], basicAuth: null })).toEqual({ ok: true });
  const basic = new Request('http://x/', { method: 'POST', headers: { authorization: vectors.chargebee.authorization } });
  const creds = `${vectors.chargebee.username}:${vectors.chargebee.password}`;
  expect(verifier.verify(basic, body, { platform: 'chargebee', webhookSecrets: [], basicAuth: creds })).toEqual({ ok: true });
  expect(verifier.verify(signed, body, { platform: 'chargebee', webhookSecrets: [], basicAuth: creds }).ok).toBe(false);
});
