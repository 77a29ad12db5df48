// The address of the client behind a raw request (a Socket.IO handshake, which fastify never
// sees): the connecting address, or the X-Forwarded-For entry the TRUST_PROXY proxies vouch
// for, read by the same proxy-addr rules fastify applies to `request.ip`.
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { TrustedProxy } from './trusted-proxy.ts';

export function clientAddress(request: IncomingMessage, trust: TrustedProxy): string {
  if (!request.socket?.remoteAddress) return 'unknown';
  return proxyAddr(request, trust);
}
