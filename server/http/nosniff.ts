// Every response says `X-Content-Type-Options: nosniff`: a plain-text or JSON answer can echo
// what the request sent (a parameter's name, a path), and no browser may read one as HTML or
// script. Set on the raw response before anything handles the request, so it holds for fastify's
// replies, its routing failures and what Socket.IO writes itself; answers written straight on
// a socket (client-errors.ts) carry it too.
import type { Server } from 'node:http';

export const NOSNIFF_HEADER = 'X-Content-Type-Options';
export const NOSNIFF = 'nosniff';

/** Runs before the server's own request handler (fastify's), on every request it serves. */
export function answerEveryRequestWithNosniff(server: Server): void {
  server.prependListener('request', (_request, response) => {
    response.setHeader(NOSNIFF_HEADER, NOSNIFF);
  });
}
