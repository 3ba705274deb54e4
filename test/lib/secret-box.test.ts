// Webhook secrets at rest: they open with the key and connector they were sealed for, and with
// nothing else; each sealing is different (random IV) and reveals nothing of the secret.
import { describe, expect, test } from 'bun:test';
import { openSecret, sealSecret, SecretBoxError } from '../../src/lib/secret-box.ts';

const KEY = 'a-server-secret-key-of-at-least-32-chars';

describe('secret box', () => {
  test('opens with the same key and connector', () => {
    const sealed = sealSecret('whsec_abc', KEY, 'con_1');
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain('whsec_abc');
    expect(openSecret(sealed, KEY, 'con_1')).toBe('whsec_abc');
    expect(sealSecret('whsec_abc', KEY, 'con_1')).not.toBe(sealed);
  });

  test('refuses another key, another connector, or altered text', () => {
    const sealed = sealSecret('whsec_abc', KEY, 'con_1');
    expect(() => openSecret(sealed, `${KEY}-other`, 'con_1')).toThrow(SecretBoxError);
    expect(() => openSecret(sealed, KEY, 'con_2')).toThrow(SecretBoxError);
    const parts = sealed.split('.');
    parts[2] = `${parts[2]!.slice(0, -2)}AA`;
    expect(() => openSecret(parts.join('.'), KEY, 'con_1')).toThrow(SecretBoxError);
    expect(() => openSecret('plain text', KEY, 'con_1')).toThrow('not a sealed secret');
  });
});
