// One port for HTTPS and a plain-HTTP answer. The first byte of a connection
// tells them apart: 0x16 opens a TLS handshake; anything else is plain HTTP,
// which gets the "HTTPS is required" 403 before any authentication.
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { ForbiddenError, renderError } from '../errors.ts';
import { writeRawResponse } from './client-errors.ts';

const TLS_HANDSHAKE = 0x16;
const FIRST_BYTE_TIMEOUT_MS = 10_000;
/**
 * How long an idle keep-alive connection stays open: fastify's default for the servers it
 * creates (it does not apply it to a factory's). Node's own 5 s is shorter than the idle
 * timeout of common load balancers (60 s), which then reuse connections this server has
 * just closed and answer their clients 502.
 */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** The contract's answer to plain HTTP, rendered like every other failure. */
export const HTTPS_REQUIRED = renderError(new ForbiddenError('HTTPS is required'));

/** An HTTPS server that also answers plain HTTP on the same port. */
export function createOnePortServer(
  tls: { key: string; cert: string },
  handler: http.RequestListener,
): https.Server {
  const server = https.createServer({ key: tls.key, cert: tls.cert }, handler);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  const tlsListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
    socket.once('readable', () => {
      const chunk = socket.read(1) as Buffer | null;
      if (!chunk) return void socket.destroy();
      socket.setTimeout(0);
      socket.unshift(chunk);
      if (chunk[0] === TLS_HANDSHAKE) {
        // TLSSocket picks up the bytes left in the stream's buffer.
        for (const listener of tlsListeners) listener.call(server, socket);
      } else {
        socket.read();
        writeRawResponse(socket, HTTPS_REQUIRED);
      }
    });
  });
  return server;
}
