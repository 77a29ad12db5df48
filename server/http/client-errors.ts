// Answers to requests that never become a fastify request because Node's HTTP
// parser refused them (a head over the size limit, a method it does not know,
// a broken request line or header). They are rendered like every other failure
// and written on the socket as a complete HTTP/1.1 response.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, InvalidInputError, renderError, type RenderedError } from '../errors.ts';
import { NOSNIFF, NOSNIFF_HEADER } from './nosniff.ts';
import { newRequestId, REQUEST_ID_HEADER } from './request-id.ts';

/** Unread bytes after an answer are drained for at most this long, then the socket is dropped. */
const DRAIN_AFTER_ANSWER_MS = 5_000;

/**
 * Writes a complete response and closes the connection. What the client still
 * sends is read and discarded, so the close is orderly rather than a reset that
 * could destroy the answer before the client reads it.
 */
export function writeRawResponse(socket: Duplex, rendered: RenderedError): void {
  const body = Buffer.from(rendered.body);
  const head = [
    `HTTP/1.1 ${rendered.status} ${http.STATUS_CODES[rendered.status] ?? 'Error'}`,
    `Content-Type: ${rendered.contentType}`,
    `Content-Length: ${body.length}`,
    `${NOSNIFF_HEADER}: ${NOSNIFF}`,
    ...Object.entries(rendered.headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ].join('\r\n');
  socket.end(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), body]));
  socket.on('data', () => {});
  setTimeout(() => socket.destroy(), DRAIN_AFTER_ANSWER_MS).unref();
}

/** Which methods a path answers to (empty when the path does not exist), for 405 versus 404. */
export type AllowedMethods = (pathname: string) => string[];

/** The answer for a request with a method the host does not serve on this path. */
export function unservedMethodError(method: string, pathname: string, allowed: string[]): ApiError {
  if (!allowed.length) return new ApiError(404, `No endpoint ${method} ${pathname}`, { reason: 'no_route' });
  return new ApiError(405, `Method ${method} is not allowed on this path`, {
    reason: 'method_not_allowed',
    headers: { Allow: [...new Set(allowed)].join(', ') },
  });
}

type ClientError = Error & { code?: string; rawPacket?: unknown };

function clientErrorToApiError(error: ClientError, allowedMethods: AllowedMethods): ApiError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, `The request line and headers together are larger than ${http.maxHeaderSize} bytes`, {
        reason: 'head_too_large',
      });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, 'The request was not received in time', { reason: 'request_timeout' });
    case 'HPE_INVALID_METHOD': {
      // The parser stops at the method; the request line still names the path.
      const requestLine = /^(\S+) (\S+) HTTP\/\d/.exec(Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString('latin1') : '');
      if (requestLine) {
        const [, method, target] = requestLine;
        const pathname = target.split('?')[0];
        return unservedMethodError(method, pathname, allowedMethods(pathname));
      }
      return new InvalidInputError('Malformed HTTP request: unknown method', { reason: 'malformed_request' });
    }
    default:
      return new InvalidInputError('Malformed HTTP request', { reason: 'malformed_request' });
  }
}

/**
 * A fastify `clientErrorHandler`. Node may report one broken request more than
 * once (each later chunk fails to parse again); only the first is answered.
 */
export function createClientErrorHandler(allowedMethods: AllowedMethods) {
  const answered = new WeakSet<Duplex>();
  return (error: ClientError, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
    answered.add(socket);
    // A response already under way cannot be followed by another (Node's own rule).
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) return void socket.destroy();
    // No request was parsed, so there is no caller's id to echo: a new one, like every answer gets.
    const rendered = renderError(clientErrorToApiError(error, allowedMethods));
    writeRawResponse(socket, { ...rendered, headers: { ...rendered.headers, [REQUEST_ID_HEADER]: newRequestId() } });
  };
}
