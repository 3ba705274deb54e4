// The key is read with @elysiajs/bearer's own extraction (called as a function, not mounted).
import { describe, expect, test } from 'bun:test';
import { bearerToken } from '../../src/plugins/bearer-token.ts';

describe('bearer token', () => {
  test('Authorization: Bearer <key> gives the key; anything else is not a bearer credential', () => {
    expect(bearerToken('Bearer rvk_abc')).toBe('rvk_abc');
    expect(bearerToken('Basic dXNlcjpwYXNz')).toBeNull();
    expect(bearerToken('')).toBeNull();
    expect(bearerToken(null)).toBeUndefined();
  });
});
