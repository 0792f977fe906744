import { BlockList, isIP } from 'node:net';

/**
 * Address ranges GenGate never connects to unless ALLOW_PRIVATE_NETWORK=true (DECISIONS §14):
 * loopback, private, link-local, shared (CGNAT), cloud metadata, multicast and reserved space.
 */
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier NAT), also Alibaba's metadata 100.100.100.200
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, including the 169.254.169.254 metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64 can reach any IPv4 address, private ones included
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (fd00:ec2::254 is AWS's metadata service)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped or -compatible IPv6 address (::ffff:a.b.c.d), else null. */
function embeddedIpv4(ip: string): string | null {
  const m = /^::(?:ffff:(?:0:)?)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (m) return m[1]!;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (!hex) return null;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** True when `ip` (a literal IPv4 or IPv6 address) is in a range GenGate must not reach; non-addresses count as blocked. */
export function isBlockedAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const unzoned = bare.split('%')[0]!;
  const family = isIP(unzoned);
  if (family === 4) return blocked.check(unzoned, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(unzoned);
  if (v4) return blocked.check(v4, 'ipv4');
  return blocked.check(unzoned, 'ipv6');
}
