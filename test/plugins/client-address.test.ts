// Whose X-Forwarded-For to believe decides whose budget an unauthenticated request spends.
import { describe, expect, test } from 'bun:test';
import { clientAddressOf } from '../../src/plugins/request-context.ts';
import { anonSubject } from '../../src/plugins/gate.ts';

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

describe('whose budget an unauthenticated request spends', () => {
  test('an IPv4 address is its own; an IPv6 address shares its /64', () => {
    expect(anonSubject('203.0.113.7')).toBe('ip:203.0.113.7');
    expect(anonSubject('::ffff:203.0.113.7')).toBe('ip:203.0.113.7');
    expect(anonSubject('2001:db8:1:2:aaaa::1')).toBe('ip6:2001:db8:1:2::/64');
    expect(anonSubject('2001:0db8:0001:0002:ffff:0:0:9')).toBe('ip6:2001:db8:1:2::/64');
    expect(anonSubject('2001:db8::1')).toBe('ip6:2001:db8:0:0::/64');
    expect(anonSubject('::1')).toBe('ip6:0:0:0:0::/64');
  });
});
