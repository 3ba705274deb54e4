// Which addresses an outbound call to a URL an organisation gave us may reach: the public internet
// only. One check for every textual form of an address — WHATWG URL parsing already turns
// `2130706433`, `0x7f.1` and `127.1` into `127.0.0.1`, and `[::ffff:127.0.0.1]` into `[::ffff:7f00:1]`,
// so an IPv6 address is read as its eight groups, never matched as text — and for the addresses a
// name resolves to. IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4) are judged by it.
import { isIP } from 'node:net';

/** IPv4 ranges that are not the internet: [first octets as a 32-bit number, prefix length, name]. */
const V4_RANGES: [number, number, string][] = [
  [v4(0, 0, 0, 0), 8, '"this network" 0.0.0.0/8'],
  [v4(10, 0, 0, 0), 8, 'private 10.0.0.0/8'],
  [v4(100, 64, 0, 0), 10, 'shared (CGNAT) 100.64.0.0/10'],
  [v4(127, 0, 0, 0), 8, 'loopback 127.0.0.0/8'],
  [v4(169, 254, 0, 0), 16, 'link-local 169.254.0.0/16'],
  [v4(172, 16, 0, 0), 12, 'private 172.16.0.0/12'],
  [v4(192, 0, 0, 0), 24, 'IETF protocol assignments 192.0.0.0/24'],
  [v4(192, 0, 2, 0), 24, 'documentation 192.0.2.0/24'],
  [v4(192, 88, 99, 0), 24, '6to4 relay anycast 192.88.99.0/24'],
  [v4(192, 168, 0, 0), 16, 'private 192.168.0.0/16'],
  [v4(198, 18, 0, 0), 15, 'benchmarking 198.18.0.0/15'],
  [v4(198, 51, 100, 0), 24, 'documentation 198.51.100.0/24'],
  [v4(203, 0, 113, 0), 24, 'documentation 203.0.113.0/24'],
  [v4(224, 0, 0, 0), 4, 'multicast 224.0.0.0/4'],
  [v4(240, 0, 0, 0), 4, 'reserved 240.0.0.0/4 (and broadcast)'],
];

function v4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

/** A dotted quad as a 32-bit number (the only IPv4 form a parsed URL or a resolver gives). */
function parseV4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  const [a, b, c, d] = parts.map(Number) as [number, number, number, number];
  return v4(a, b, c, d);
}

/** An IPv6 address as its eight 16-bit groups (a dotted IPv4 tail and a `%zone` allowed). */
function parseV6(text: string): number[] | null {
  let address = text.split('%')[0]!;
  if (isIP(address) !== 6) return null;
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    const n = parseV4(dotted[1]!);
    if (n === null) return null;
    address = `${address.slice(0, dotted.index)}:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [left, right] = address.includes('::') ? address.split('::') : [address, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const before = groups(left);
  const after = groups(right);
  const missing = 8 - before.length - after.length;
  if (right === undefined ? missing !== 0 : missing < 0) return null;
  return [...before, ...Array<number>(missing).fill(0), ...after];
}

function v4Range(n: number): string | null {
  for (const [base, bits, name] of V4_RANGES) if (n >>> (32 - bits) === base >>> (32 - bits)) return name;
  return null;
}

const v4Text = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** Whether the top `bits` bits of the groups are `prefix` (groups given as a list). */
function under(groups: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i]! & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

function v6Range(g: number[]): string | null {
  const embedded = (high: number, low: number, form: string): string | null => {
    const n = ((high << 16) | low) >>> 0;
    const inside = v4Range(n);
    return inside ? `${form} of ${v4Text(n)}, ${inside}` : null;
  };
  if (g.every((x) => x === 0)) return 'unspecified ::';
  if (under(g, [0, 0, 0, 0, 0, 0, 0, 1], 128)) return 'loopback ::1';
  if (under(g, [0, 0, 0, 0, 0, 0xffff], 96)) return embedded(g[6]!, g[7]!, 'IPv4-mapped') ?? null;
  if (under(g, [0, 0, 0, 0, 0, 0], 96)) return 'IPv4-compatible ::/96';
  if (under(g, [0, 0, 0, 0, 0xffff, 0], 96)) return 'IPv4-translated ::ffff:0:0:0/96';
  // NAT64's well-known prefix reaches the embedded IPv4 address; its local-use prefix is not global.
  if (under(g, [0x64, 0xff9b], 96)) return embedded(g[6]!, g[7]!, 'NAT64');
  if (under(g, [0x64, 0xff9b, 1], 48)) return 'local-use NAT64 64:ff9b:1::/48';
  if (under(g, [0x100], 64)) return 'discard-only 100::/64';
  if (under(g, [0x2001, 0xdb8], 32)) return 'documentation 2001:db8::/32';
  // 2001::/23 holds Teredo (2001::/32, whose IPv4 address is obscured) and other protocol blocks.
  if (under(g, [0x2001, 0], 32)) return 'Teredo 2001::/32';
  if (under(g, [0x2001, 0], 23)) return 'IETF protocol assignments 2001::/23';
  if (under(g, [0x2002], 16)) return embedded(g[1]!, g[2]!, '6to4') ?? null;
  if (under(g, [0x3fff], 20)) return 'documentation 3fff::/20';
  if (under(g, [0x5f00], 16)) return 'segment routing 5f00::/16';
  if (under(g, [0xfc00], 7)) return 'unique local fc00::/7';
  if (under(g, [0xfe80], 10)) return 'link-local fe80::/10';
  if (under(g, [0xfec0], 10)) return 'site-local fec0::/10';
  if (under(g, [0xff00], 8)) return 'multicast ff00::/8';
  // Only 2000::/3 is handed out as global unicast: anything else is unassigned or special.
  if (!under(g, [0x2000], 3)) return 'not global unicast (outside 2000::/3)';
  return null;
}

/** Why an IP address (v4, or v6 in any textual form, with or without brackets) is not a public
 * internet address — its range — or null when it is. Anything that is not an address is refused. */
export function nonPublicRange(address: string): string | null {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  const n = parseV4(bare);
  if (n !== null) return v4Range(n);
  const groups = parseV6(bare);
  return groups ? v6Range(groups) : 'not an IP address';
}

export const isPublicAddress = (address: string): boolean => nonPublicRange(address) === null;

/** `localhost`, a name under it, with or without the root's trailing dot: this machine (RFC 6761),
 * whatever a resolver says. */
export function isLocalName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || name === '';
}

/** The host of a URL without brackets or the root's trailing dot: what a resolver is asked. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.+$/, '');

/** Why a URL's host, as written, is not public — a non-public address or a local name — or null
 * (a name is judged again by the addresses it resolves to, on every call). */
export function hostRefusal(url: URL): string | null {
  const host = hostOf(url);
  if (isIP(host)) return nonPublicRange(host);
  return isLocalName(url.hostname) ? 'a name for this machine (localhost)' : null;
}
