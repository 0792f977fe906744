import ipaddr from 'ipaddr.js';

/**
 * What a per-address limit counts: an IPv4 address as it is (an IPv4-mapped IPv6 address as its
 * IPv4 address), an IPv6 address by its /64 (one subscriber usually holds a whole /64, so counting
 * single IPv6 addresses would let one client take 2^64 fresh budgets). Text that is no address
 * (none known) is counted as given.
 */
export function addressSubject(address: string | null | undefined): string {
  if (!address) return '?';
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address);
  } catch {
    return address;
  }
  if (ip.kind() === 'ipv4') return ip.toString();
  const parts = (ip as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}
