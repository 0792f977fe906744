import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/**
 * Classification of the addresses GenGate never connects to unless ALLOW_PRIVATE_NETWORK=true
 * (DECISIONS §14, decision 0301). ipaddr.js names the ranges of the IANA special-purpose
 * registries; every range it names is blocked except plain unicast, and the forms that carry an
 * IPv4 address (mapped, compatible, SIIT, NAT64, 6to4, Teredo) are judged by that IPv4 address.
 */

/** IANA special-purpose IPv6 ranges ipaddr.js 2.5 does not name. */
const unnamedV6: [IPv6, number][] = [
  ipaddr.IPv6.parseCIDR('100:0:0:1::/64'), // dummy prefix (RFC 9780)
];

/** Global unicast space (IANA IPv6 address space registry); everything outside it is reserved, local or special. */
const globalUnicast = ipaddr.IPv6.parseCIDR('2000::/3');

/** The well-known NAT64 prefix: it reaches whatever IPv4 address it carries (DNS64 synthesises it for public names too). */
const nat64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/** IPv4 ranges that may be reached: only plain unicast. */
function blockedV4(ip: IPv4): boolean {
  return ip.range() !== 'unicast';
}

/** The IPv4 address from two 16-bit groups. */
function v4(hi: number, lo: number): IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
}

/**
 * The IPv4 addresses an IPv6 address carries, or null when it carries none: ::ffff:a.b.c.d
 * (mapped), ::a.b.c.d (compatible, deprecated but still routed by some stacks), ::ffff:0:a.b.c.d
 * (SIIT), 64:ff9b::a.b.c.d (NAT64), 2002:AABB:CCDD::/48 (6to4) and Teredo's server and client.
 */
function embeddedV4(ip: IPv6): IPv4[] | null {
  const p = ip.parts as [number, number, number, number, number, number, number, number];
  const zeros = (n: number) => p.slice(0, n).every((x) => x === 0);
  if (zeros(5) && p[5] === 0xffff) return [v4(p[6], p[7])];
  if (zeros(6) && (p[6] !== 0 || p[7] > 1)) return [v4(p[6], p[7])];
  if (zeros(4) && p[4] === 0xffff && p[5] === 0) return [v4(p[6], p[7])];
  if (ip.match(nat64)) return [v4(p[6], p[7])];
  if (p[0] === 0x2002) return [v4(p[1], p[2])];
  // Teredo (2001:0::/32): server address in the clear, client address inverted in the last 32 bits.
  if (p[0] === 0x2001 && p[1] === 0) return [v4(p[2], p[3]), v4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
  return null;
}

/** IPv6 ranges that may be reached: global unicast that no special-purpose range covers, or a carrier of reachable IPv4 addresses. */
function blockedV6(ip: IPv6): boolean {
  const carried = embeddedV4(ip);
  if (carried) return carried.some(blockedV4);
  if (ip.range() !== 'unicast') return true;
  if (unnamedV6.some((range) => ip.match(range))) return true;
  return !ip.match(globalUnicast);
}

/** True when `ip` (a literal IPv4 or IPv6 address, brackets and zone allowed) is in a range GenGate must not reach; non-addresses count as blocked. */
export function isBlockedAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  let parsed: IPv4 | IPv6;
  try {
    parsed = ipaddr.parse(bare);
  } catch {
    return true;
  }
  return parsed.kind() === 'ipv4' ? blockedV4(parsed as IPv4) : blockedV6(parsed as IPv6);
}
