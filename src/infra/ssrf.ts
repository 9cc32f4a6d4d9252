import dns from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ApiError } from '../core/errors';

/**
 * SSRF guard: a webhook URL must not let a merchant make our workers call
 * loopback, private or otherwise non-public addresses. Checked at registration and again at delivery, where
 * guardedLookup also covers the addresses actually connected to (DNS rebinding between check and connect).
 */

export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** C0 controls and DEL anywhere, or whitespace at either end. */
const CONTROL_OR_EDGE_SPACE = /[\u0000-\u001f\u007f]|^\s|\s$/;
// getaddrinfo has no timeout of its own; a registration must not hang on a slow resolver.
const LOOKUP_TIMEOUT_MS = 5_000;

/** IPv4 ranges that are not globally reachable (IANA special-purpose registry). */
const NON_PUBLIC_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast 255.255.255.255
];

/** Ranges inside IPv6 global unicast (2000::/3) that are still not public; everything outside 2000::/3 is refused. */
const NON_PUBLIC_V6_IN_GLOBAL: Array<[string, number]> = [
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
];

const blockedV4 = new BlockList();
for (const [net, prefix] of NON_PUBLIC_V4) blockedV4.addSubnet(net, prefix, 'ipv4');
const globalUnicastV6 = new BlockList();
globalUnicastV6.addSubnet('2000::', 3, 'ipv6');
const blockedV6 = new BlockList();
for (const [net, prefix] of NON_PUBLIC_V6_IN_GLOBAL) blockedV6.addSubnet(net, prefix, 'ipv6');

/** Eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
function ipv6Groups(ip: string): number[] | undefined {
  if (isIP(ip) !== 6) return undefined;
  let text = ip.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = (dotted[1] as string).split('.').map(Number) as [number, number, number, number];
    const tail = `${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`;
    text = text.slice(0, dotted.index) + tail;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const fill = rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((group) => parseInt(group, 16));
}

function v4FromGroups(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), so it is judged as that. */
function embeddedV4(groups: number[]): string | undefined {
  const g = (i: number) => groups[i] as number;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g(5) === 0xffff) return v4FromGroups(g(6), g(7)); // ::ffff:a.b.c.d
  if (zeros(0, 6) && g(6) !== 0) return v4FromGroups(g(6), g(7)); // ::a.b.c.d (deprecated compatible)
  if (g(0) === 0x64 && g(1) === 0xff9b && zeros(2, 6)) return v4FromGroups(g(6), g(7)); // NAT64 64:ff9b::/96
  if (g(0) === 0x2002) return v4FromGroups(g(1), g(2)); // 6to4 2002:V4ADDR::/48
  return undefined;
}

/** True only for a globally reachable unicast address; anything unparseable is not public. */
export function isPublicAddress(ip: string): boolean {
  const address = ip.replace(/^\[(.*)\]$/, '$1');
  // A zone id (fe80::1%eth0) only exists on link-local addresses.
  if (address.includes('%')) return false;
  const family = isIP(address);
  if (family === 4) return !blockedV4.check(address, 'ipv4');
  if (family !== 6) return false;
  const groups = ipv6Groups(address);
  if (!groups) return false;
  const v4 = embeddedV4(groups);
  if (v4 !== undefined) return isPublicAddress(v4);
  return globalUnicastV6.check(address, 'ipv6') && !blockedV6.check(address, 'ipv6');
}

/** Raised through a lookup callback when a name resolves to a non-public address. */
export class AddressNotAllowedError extends Error {
  readonly code = 'ERR_ADDRESS_NOT_PUBLIC';
  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    super(`${hostname} resolves to ${address}, which is not a public address`);
    this.name = 'AddressNotAllowedError';
  }
}

type LookupCallback = Parameters<LookupFunction>[2];
export type Lookup = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

const systemLookup: Lookup = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/**
 * A drop-in for dns.lookup (e.g. undici's `connect: { lookup }`) that fails when any resolved address is not
 * public, so the socket can only ever reach the addresses we judged. Honours `all` either way.
 */
export function guardedLookup(allowPrivate: boolean, lookup: Lookup = systemLookup): LookupFunction {
  return (hostname, options, callback: LookupCallback) => {
    const opts: dns.LookupOptions = typeof options === 'object' && options !== null ? options : {};
    lookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses ?? [];
      const blocked = allowPrivate ? undefined : list.find((entry) => !isPublicAddress(entry.address));
      if (blocked) return callback(new AddressNotAllowedError(hostname, blocked.address), '');
      const first = list[0];
      if (!first) {
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      }
      if (opts.all) return callback(null, list);
      return callback(null, first.address, first.family);
    });
  };
}

function refuse(message: string): ApiError {
  return new ApiError('url_not_allowed', message, { param: 'url' });
}

function invalid(message: string): ApiError {
  return new ApiError('invalid_url', message, { param: 'url' });
}

function resolveAll(lookup: Lookup, hostname: string): Promise<dns.LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('lookup timed out')), LOOKUP_TIMEOUT_MS);
    timer.unref();
    lookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(addresses ?? []);
    });
  });
}

/** `localhost`, `*.localhost` (RFC 6761), with or without the root dot. */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Parses and judges a webhook URL, returning the WHATWG-normalised URL (store and post `href`, so what was
 * judged is what is called). Throws ApiError (param `url`): invalid_url, url_not_https or url_not_allowed.
 * With allowPrivateTargets only the shape is checked and nothing is resolved (development and tests).
 */
export async function checkWebhookUrl(
  raw: string,
  opts: { allowPrivateTargets: boolean; lookup?: Lookup },
): Promise<URL> {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    throw invalid(`The URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters.`);
  }
  // WHATWG silently drops tabs and newlines anywhere and trims controls and spaces at the ends, so
  // `https://exa\nmple.com` would be stored as a URL the merchant never wrote; refuse instead of guessing.
  if (CONTROL_OR_EDGE_SPACE.test(raw)) {
    throw invalid(
      'The URL contains control characters or surrounding spaces; send it exactly as the receiver serves it.',
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('The URL could not be parsed; send an absolute https:// URL.');
  }
  // Percent-encoding and punycode can make the stored form several times longer than what was sent.
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) {
    throw invalid(`The URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters once encoded.`);
  }
  if (url.protocol !== 'https:') throw new ApiError('url_not_https', 'Webhook URLs must use https.', { param: 'url' });
  // Port 0 parses but can never be connected to.
  if (url.port === '0') throw invalid('The URL has port 0, which cannot receive connections.');
  if (url.username !== '' || url.password !== '') throw refuse('Webhook URLs must not contain credentials.');
  if (url.href.includes('#')) throw refuse('Webhook URLs must not contain a fragment.');
  if (url.hostname === '') throw invalid('The URL has no host.');
  if (opts.allowPrivateTargets) return url;

  if (isLocalhostName(url.hostname)) throw refuse('Webhook URLs must not point at localhost.');
  // WHATWG has already turned 2130706433, 0x7f.1 and 017700000001 into 127.0.0.1.
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(literal) !== 0) {
    if (!isPublicAddress(literal)) throw refuse('Webhook URLs must point at a public address.');
    return url;
  }
  let addresses: dns.LookupAddress[];
  try {
    addresses = await resolveAll(opts.lookup ?? systemLookup, url.hostname);
  } catch {
    throw invalid(`The host ${url.hostname} does not resolve.`);
  }
  if (addresses.length === 0) throw invalid(`The host ${url.hostname} does not resolve.`);
  if (addresses.some((entry) => !isPublicAddress(entry.address))) {
    throw refuse(`The host ${url.hostname} resolves to an address that is not public.`);
  }
  return url;
}
