// Which connecting addresses are the proxies of TRUST_PROXY, and what a request says of
// itself once that is known: X-Forwarded-Host and X-Forwarded-Proto count only when the
// connection comes from one of them. fastify's `trustProxy` is given the same check, so
// the host and the raw requests it never sees (WebSocket upgrades, Socket.IO handshakes)
// believe the same headers from the same addresses.
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';

/** Whether the address at `hop` (0: the connecting one) is a trusted proxy. */
export type TrustedProxy = (address: string, hop: number) => boolean;

const TRUST_NONE: TrustedProxy = () => false;

/** The check for TRUST_PROXY's addresses and CIDRs (or the names proxy-addr knows, such as `loopback`). */
export function trustedProxy(addresses: readonly string[] | undefined): TrustedProxy {
  return addresses?.length ? proxyAddr.compile([...addresses]) : TRUST_NONE;
}

/** A header's last entry when sent more than once or as a list, as fastify reads X-Forwarded-*. */
function lastEntry(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value.join(',') : value;
  if (!text) return undefined;
  return text.slice(text.lastIndexOf(',') + 1).trim() || undefined;
}

function fromTrustedProxy(request: IncomingMessage, trust: TrustedProxy): boolean {
  const address = request.socket?.remoteAddress;
  return address !== undefined && trust(address, 0);
}

/** The host the client addressed: X-Forwarded-Host from a trusted proxy, else Host. */
export function requestHost(request: IncomingMessage, trust: TrustedProxy): string | undefined {
  const forwarded = fromTrustedProxy(request, trust) ? lastEntry(request.headers['x-forwarded-host']) : undefined;
  return forwarded ?? request.headers.host;
}

/** The scheme the client used: X-Forwarded-Proto from a trusted proxy, else this connection's. */
export function requestProtocol(request: IncomingMessage, trust: TrustedProxy): string {
  const forwarded = fromTrustedProxy(request, trust) ? lastEntry(request.headers['x-forwarded-proto']) : undefined;
  return forwarded ?? ((request.socket as { encrypted?: boolean } | undefined)?.encrypted ? 'https' : 'http');
}

/** The client's address: X-Forwarded-For as far as trusted proxies vouch for it, as fastify's `request.ip`. */
export function requestAddress(request: IncomingMessage, trust: TrustedProxy): string {
  if (!request.socket?.remoteAddress) return 'unknown';
  return proxyAddr(request, trust);
}
