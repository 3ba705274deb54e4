// Whose X-Forwarded-For to believe decides whose budget an unauthenticated request spends.
import { describe, expect, test } from 'bun:test';
import { clientAddressOf } from '../../src/plugins/request-context.ts';

const request = (forwarded?: string) => new Request('http://localhost/', { headers: forwarded ? { 'x-forwarded-for': forwarded } : {} });

describe('client address', () => {
  test('off: the socket peer, whatever the header says', () => {
    expect(clientAddressOf(request('1.2.3.4'), '10.0.0.5', { mode: 'off' })).toBe('10.0.0.5');
  });
  test('all: the left-most forwarded address', () => {
    expect(clientAddressOf(request('1.2.3.4, 10.0.0.9'), '10.0.0.5', { mode: 'all' })).toBe('1.2.3.4');
    expect(clientAddressOf(request(), '10.0.0.5', { mode: 'all' })).toBe('10.0.0.5');
  });
  test('a list: only from those proxies, and the right-most address that is not one of them', () => {
    const trust = { mode: 'list' as const, addresses: ['10.0.0.5', '10.0.0.9'] };
    expect(clientAddressOf(request('6.6.6.6, 1.2.3.4, 10.0.0.9'), '10.0.0.5', trust)).toBe('1.2.3.4');
    expect(clientAddressOf(request('1.2.3.4'), '192.168.1.1', trust)).toBe('192.168.1.1'); // not our proxy: ignore its header
    expect(clientAddressOf(request('1.2.3.4'), '::ffff:10.0.0.5', trust)).toBe('1.2.3.4');
  });
});
