import { isIPv4, isIPv6 } from 'node:net';

/**
 * The key a per-client limit counts an address under. One IPv6 subscriber is handed a whole /64, so counting
 * each of its addresses apart would give it 2^64 allowances: IPv6 addresses count under their /64 prefix.
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d, what a dual-stack socket reports for an IPv4 peer) counts as
 * its IPv4 address, and an IPv4 address as itself. Anything else (not an address) is returned unchanged.
 */
export function clientLimitKey(address: string): string {
  const bare = address.trim();
  if (isIPv4(bare)) return bare;
  // A zone id (fe80::1%eth0) names the interface, not the client.
  const withoutZone = bare.split('%')[0] as string;
  if (!isIPv6(withoutZone)) return bare;
  const groups = expandIPv6(withoutZone);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const high = groups[6] as number;
    const low = groups[7] as number;
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, with :: expanded and a dotted IPv4 tail converted. */
function expandIPv6(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = (dotted[1] as string).split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
