// The process logger: JSON lines on stderr, so stdout stays free for what
// commands print (the admin CLI's one JSON line, the start-up line).
import pino, { type Logger } from 'pino';
import { currentRequestId } from './request-context.ts';

export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid }, mixin: requestIdMixin }, pino.destination(2));
}

/** Every line written while a request is served names it (`requestId`), whichever logger writes it. */
export function requestIdMixin(): { requestId?: string } {
  const requestId = currentRequestId();
  return requestId ? { requestId } : {};
}
