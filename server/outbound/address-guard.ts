// The public-address rule for outbound requests (spec, Webhook subscriptions rule 1:
// the url must use https:// and be publicly reachable). One table of blocked ranges;
// checked when a URL is accepted and again, by the outbound client, at connect time.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promisify } from 'node:util';
import { BlockList, isIP, isIPv4, type LookupFunction } from 'node:net';
import { InvalidInputError } from '../errors.ts';

type Family = 'ipv4' | 'ipv6';

/** Why an address is not public, as it appears in the refusal message. */
type AddressKind =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared (carrier-grade NAT)'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'unique-local'
  | 'site-local'
  | 'non-global';

/** Every range refused, in one place. IPv6 outside 2000::/3 is refused separately (not global unicast). */
const BLOCKED_RANGES: ReadonlyArray<readonly [network: string, prefix: number, family: Family, kind: AddressKind]> = [
  ['0.0.0.0', 32, 'ipv4', 'unspecified'],
  ['0.0.0.0', 8, 'ipv4', 'reserved'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.88.99.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['255.255.255.255', 32, 'ipv4', 'broadcast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['64:ff9b:1::', 48, 'ipv6', 'private'],
  ['100::', 64, 'ipv6', 'reserved'],
  ['2001::', 23, 'ipv6', 'reserved'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['3fff::', 20, 'ipv6', 'documentation'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

// One BlockList per range keeps the table order meaningful: the first match names the reason.
const BLOCKED = BLOCKED_RANGES.map(([network, prefix, family, kind]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { family, kind, list };
});

/** IPv6 prefixes that carry an IPv4 address in their last 32 bits (or bits 16-48 for 6to4). */
const EMBEDDING_PREFIXES: ReadonlyArray<{ name: string; matches: (bytes: Uint8Array) => boolean; extract: (bytes: Uint8Array) => Uint8Array }> = [
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible, deprecated)
  { name: 'IPv4-mapped', matches: (b) => isZero(b, 0, 10) && ((b[10] === 0xff && b[11] === 0xff) || (b[10] === 0 && b[11] === 0)), extract: (b) => b.subarray(12, 16) },
  // ::ffff:0:a.b.c.d (IPv4-translated, SIIT)
  { name: 'IPv4-translated', matches: (b) => isZero(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0, extract: (b) => b.subarray(12, 16) },
  // 64:ff9b::/96 (NAT64 well-known prefix)
  { name: 'NAT64', matches: (b) => b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && isZero(b, 4, 12), extract: (b) => b.subarray(12, 16) },
  // 2002:aabb:ccdd::/48 (6to4)
  { name: '6to4', matches: (b) => b[0] === 0x20 && b[1] === 0x02, extract: (b) => b.subarray(2, 6) },
];

/** The reason an address is not publicly routable, or null when it is. */
export function classifyAddress(ip: string): { kind: AddressKind; address: string } | null {
  const address = stripZone(stripBrackets(ip));
  const family = isIP(address);
  if (family === 4) {
    for (const range of BLOCKED) if (range.family === 'ipv4' && range.list.check(address, 'ipv4')) return { kind: range.kind, address };
    return null;
  }
  if (family !== 6) return { kind: 'reserved', address };
  const bytes = parseIPv6(address);
  // :: and ::1 sit inside the IPv4-compatible prefix but are their own thing.
  if (isZero(bytes, 0, 15) && bytes[15]! <= 1) return { kind: bytes[15] === 0 ? 'unspecified' : 'loopback', address };
  for (const embedding of EMBEDDING_PREFIXES) {
    if (!embedding.matches(bytes)) continue;
    const embedded = Array.from(embedding.extract(bytes)).join('.');
    const inner = classifyAddress(embedded);
    return inner ? { kind: inner.kind, address: `${address} = ${embedded}` } : null;
  }
  for (const range of BLOCKED) if (range.family === 'ipv6' && range.list.check(address, 'ipv6')) return { kind: range.kind, address };
  // Only 2000::/3 is global unicast.
  if ((bytes[0]! & 0xe0) !== 0x20) return { kind: 'non-global', address };
  return null;
}

/** True when the address (IPv4 or IPv6, brackets and zone allowed) is publicly routable. */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === null;
}

export type AllowHosts = readonly string[];

/** Host names and addresses as compared against `WEBHOOK_ALLOW_HOSTS`. */
function normaliseHost(host: string): string {
  return stripBrackets(host.trim().toLowerCase()).replace(/\.$/, '');
}

function isAllowed(host: string, allowHosts: AllowHosts): boolean {
  const wanted = normaliseHost(host);
  return allowHosts.some((entry) => normaliseHost(entry) === wanted);
}

/** Why a parsed URL can never be delivered to, judged without DNS; null when only resolution remains. */
export function refuseUrlWithoutLookup(url: URL, allowHosts: AllowHosts): string | null {
  if (url.protocol !== 'https:') return 'url must use https://';
  if (url.username || url.password) return 'url must not contain credentials';
  // The WHATWG parser has already rewritten 2130706433, 0177.0.0.1 and 0x7f.0.0.1 to 127.0.0.1.
  const host = stripBrackets(url.hostname);
  if (!host) return 'url must have a host';
  if (isIP(host) && !isAllowed(host, allowHosts)) {
    const refusal = classifyAddress(host);
    if (refusal) return refusalMessage(refusal);
  }
  return null;
}

function refusalMessage(refusal: { kind: AddressKind; address: string }): string {
  const article = /^[aeiou]/.test(refusal.kind) && !refusal.kind.startsWith('uni') ? 'an' : 'a';
  return `url resolves to ${article} ${refusal.kind} address (${refusal.address})`;
}

const lookupAll = promisify(dnsLookup);

/**
 * Refuses (InvalidInputError) a URL that is not https:// or whose host, literally or through
 * any address it resolves to, is not public. Hosts and addresses in allowHosts are exempt.
 */
export async function assertDeliverableUrl(url: string, options: { allowHosts: AllowHosts }): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError('url must be a valid absolute URL');
  }
  const refusal = refuseUrlWithoutLookup(parsed, options.allowHosts);
  if (refusal) throw new InvalidInputError(refusal);
  const host = stripBrackets(parsed.hostname);
  if (isIP(host) || isAllowed(host, options.allowHosts)) return;

  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(host, { all: true, verbatim: true });
  } catch {
    throw new InvalidInputError(`url host does not resolve (${host})`);
  }
  if (addresses.length === 0) throw new InvalidInputError(`url host does not resolve (${host})`);
  // Every address, not just the first: a client may connect to any of them.
  for (const { address } of addresses) {
    if (isAllowed(address, options.allowHosts)) continue;
    const addressRefusal = classifyAddress(address);
    if (addressRefusal) throw new InvalidInputError(refusalMessage(addressRefusal));
  }
}

/** Every address of a host; the system resolver unless a test supplies another. */
export type ResolveAll = (
  hostname: string,
  options: { family: number; hints: number | undefined },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const resolveAll: ResolveAll = (hostname, options, callback) => dnsLookup(hostname, { ...options, all: true }, callback);

/** The error a guarded lookup fails with; the outbound client reports it as a network failure. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'EADDRBLOCKED';
}

/**
 * A `lookup` for net/tls connect that resolves the host and keeps only public addresses
 * (all of them for an allowed host), so the address connected to is the address checked,
 * whatever DNS answered when the URL was accepted (DNS rebinding).
 */
export function createGuardedLookup(allowHosts: AllowHosts, resolve: ResolveAll = resolveAll): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number | string } & Record<string, unknown>, callback: (...args: any[]) => void) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    resolve(hostname, { family, hints: options.hints as number | undefined }, (error, addresses) => {
      if (error) return callback(error);
      const hostAllowed = isAllowed(hostname, allowHosts);
      const usable = hostAllowed ? addresses : addresses.filter(({ address }) => isAllowed(address, allowHosts) || isPublicAddress(address));
      if (usable.length === 0) {
        const refusal = addresses.map(({ address }) => classifyAddress(address)).find((found) => found !== null);
        return callback(new BlockedAddressError(refusal ? refusalMessage(refusal) : `url host does not resolve (${hostname})`));
      }
      if (options.all) return callback(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  }) as LookupFunction;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function stripZone(address: string): string {
  const percent = address.indexOf('%');
  return percent === -1 ? address : address.slice(0, percent);
}

function isZero(bytes: Uint8Array, from: number, to: number): boolean {
  for (let index = from; index < to; index++) if (bytes[index] !== 0) return false;
  return true;
}

/** 16 bytes of a valid IPv6 literal (isIP already said 6), including a dotted IPv4 tail. */
function parseIPv6(address: string): Uint8Array {
  let text = address;
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (isIPv4(last)) {
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest ? rest.split(':') : [];
  const groups = rest === undefined ? headGroups : [...headGroups, ...Array(8 - headGroups.length - restGroups.length).fill('0'), ...restGroups];
  const bytes = new Uint8Array(16);
  groups.forEach((group, index) => {
    const value = parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  });
  return bytes;
}
