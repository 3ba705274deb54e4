// The one check of where outbound calls may go (src/lib/outbound-address.ts): a table of addresses
// in the forms a parsed URL or a resolver gives them, each public or not with its range.
import { describe, expect, test } from 'bun:test';
import { hostRefusal, isLocalName, nonPublicRange } from '../../src/lib/outbound-address.ts';

const NOT_PUBLIC: [string, string][] = [
  ['0.0.0.0', '"this network" 0.0.0.0/8'],
  ['0.1.2.3', '"this network" 0.0.0.0/8'],
  ['10.20.30.40', 'private 10.0.0.0/8'],
  ['100.64.0.1', 'shared (CGNAT) 100.64.0.0/10'],
  ['100.127.255.254', 'shared (CGNAT) 100.64.0.0/10'],
  ['127.0.0.1', 'loopback 127.0.0.0/8'],
  ['127.255.255.254', 'loopback 127.0.0.0/8'],
  ['169.254.169.254', 'link-local 169.254.0.0/16'],
  ['172.16.0.1', 'private 172.16.0.0/12'],
  ['172.31.255.255', 'private 172.16.0.0/12'],
  ['192.0.0.8', 'IETF protocol assignments 192.0.0.0/24'],
  ['192.0.2.10', 'documentation 192.0.2.0/24'],
  ['192.88.99.1', '6to4 relay anycast 192.88.99.0/24'],
  ['192.168.1.1', 'private 192.168.0.0/16'],
  ['198.18.0.1', 'benchmarking 198.18.0.0/15'],
  ['198.19.255.255', 'benchmarking 198.18.0.0/15'],
  ['198.51.100.7', 'documentation 198.51.100.0/24'],
  ['203.0.113.9', 'documentation 203.0.113.0/24'],
  ['224.0.0.1', 'multicast 224.0.0.0/4'],
  ['239.255.255.250', 'multicast 224.0.0.0/4'],
  ['240.0.0.1', 'reserved 240.0.0.0/4 (and broadcast)'],
  ['255.255.255.255', 'reserved 240.0.0.0/4 (and broadcast)'],
  ['::', 'unspecified ::'],
  ['::1', 'loopback ::1'],
  ['[::1]', 'loopback ::1'],
  ['0:0:0:0:0:0:0:1', 'loopback ::1'],
  ['::ffff:7f00:1', 'IPv4-mapped of 127.0.0.1, loopback 127.0.0.0/8'],
  ['[::ffff:7f00:1]', 'IPv4-mapped of 127.0.0.1, loopback 127.0.0.0/8'],
  ['::ffff:127.0.0.1', 'IPv4-mapped of 127.0.0.1, loopback 127.0.0.0/8'],
  ['::FFFF:7F00:0001', 'IPv4-mapped of 127.0.0.1, loopback 127.0.0.0/8'],
  ['0:0:0:0:0:ffff:a9fe:a9fe', 'IPv4-mapped of 169.254.169.254, link-local 169.254.0.0/16'],
  ['::ffff:0.0.0.0', 'IPv4-mapped of 0.0.0.0, "this network" 0.0.0.0/8'],
  ['::7f00:1', 'IPv4-compatible ::/96'],
  ['::127.0.0.1', 'IPv4-compatible ::/96'],
  ['::808:808', 'IPv4-compatible ::/96'],
  ['::ffff:0:7f00:1', 'IPv4-translated ::ffff:0:0:0/96'],
  ['64:ff9b::7f00:1', 'NAT64 of 127.0.0.1, loopback 127.0.0.0/8'],
  ['64:ff9b::10.0.0.1', 'NAT64 of 10.0.0.1, private 10.0.0.0/8'],
  ['64:ff9b:1::7f00:1', 'local-use NAT64 64:ff9b:1::/48'],
  ['64:ff9b:1:ffff::808:808', 'local-use NAT64 64:ff9b:1::/48'],
  ['100::1', 'discard-only 100::/64'],
  ['2001::1', 'Teredo 2001::/32'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo 2001::/32'],
  ['2001:10::1', 'IETF protocol assignments 2001::/23'],
  ['2001:db8::1', 'documentation 2001:db8::/32'],
  ['2002:7f00:1::', '6to4 of 127.0.0.1, loopback 127.0.0.0/8'],
  ['2002:c0a8:101::1', '6to4 of 192.168.1.1, private 192.168.0.0/16'],
  ['3fff::1', 'documentation 3fff::/20'],
  ['5f00::1', 'segment routing 5f00::/16'],
  ['fc00::1', 'unique local fc00::/7'],
  ['fd12:3456:789a::1', 'unique local fc00::/7'],
  ['fe80::1', 'link-local fe80::/10'],
  ['fe80::1%eth0', 'link-local fe80::/10'],
  ['febf::1', 'link-local fe80::/10'],
  ['fec0::1', 'site-local fec0::/10'],
  ['feff::1', 'site-local fec0::/10'],
  ['ff02::1', 'multicast ff00::/8'],
  ['1::', 'not global unicast (outside 2000::/3)'],
  ['4000::1', 'not global unicast (outside 2000::/3)'],
  ['example.com', 'not an IP address'],
  ['127.1', 'not an IP address'],
  ['', 'not an IP address'],
];

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.1',
  '192.169.0.1',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2001:200::1',
  '2a00:1450:4001::200e',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

describe('nonPublicRange', () => {
  test.each(NOT_PUBLIC)('%p is not public: %s', (address, range) => {
    expect(nonPublicRange(address)).toBe(range);
  });
  test.each(PUBLIC)('%p is public', (address) => {
    expect(nonPublicRange(address)).toBeNull();
  });
});

describe('hosts as a parsed URL gives them', () => {
  // The URL parser turns every numeric IPv4 form into a dotted quad, and prints IPv6 its own way.
  const LOOPBACK_URLS = [
    'http://2130706433/',
    'http://0x7f.1/',
    'http://127.1/',
    'http://0177.0.0.1/',
    'http://0x7f000001/',
    'http://127.0.0.1./',
    'http://[::ffff:127.0.0.1]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/',
    'http://[64:ff9b::127.0.0.1]/',
  ];
  test.each(LOOPBACK_URLS)('%p is refused as written', (url) => {
    expect(hostRefusal(new URL(url))).toContain('loopback 127.0.0.0/8');
  });
  test.each([
    'http://localhost/',
    'http://localhost./',
    'http://LOCALHOST../',
    'http://a.localhost/',
    'http://a.b.localhost./',
    'http://%6c%6fcalhost/',
  ])('%p is a name for this machine', (url) => {
    expect(hostRefusal(new URL(url))).toBe('a name for this machine (localhost)');
  });
  test.each(['http://[::]/', 'http://0/', 'http://[::1]/', 'http://[fe80::1]/'])('%p is refused as written', (url) => {
    expect(hostRefusal(new URL(url))).not.toBeNull();
  });
  test.each(['https://hooks.example.com/x', 'https://notlocalhost.example/', 'http://localhost.example.com/', 'https://8.8.8.8/'])(
    '%p is not refused as written (a name is judged by its addresses)',
    (url) => {
      expect(hostRefusal(new URL(url))).toBeNull();
    },
  );
  test('isLocalName: localhost with trailing dots and any case', () => {
    expect(['localhost', 'LocalHost.', 'x.localhost', 'x.localhost..'].map(isLocalName)).toEqual([true, true, true, true]);
  });
});
