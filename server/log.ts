// The process logger: JSON lines on stderr, so stdout stays free for what
// commands print (the admin CLI's one JSON line, the start-up line).
import pino, { type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid } }, pino.destination(2));
}
