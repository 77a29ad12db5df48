// Loaded into a service process (NODE_OPTIONS=--import) by round-trips.ts: counts the
// process's round trips to PostgreSQL where pg sends them. A round trip starts when a
// connection sends while it waits for no answer (no Query or Sync unanswered); statements
// sent behind others before their answers (pipelined) ride on the same one. The count goes
// to ROUND_TRIPS_FILE every 100 ms and at exit; with RT_DEBUG=1, to `<that file>.debug`
// besides, how many round trips began with each message's first bytes.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

type Connection = { _send(buffer: Buffer): void; sync(): void; query(text: string): void; emit(event: string, ...args: unknown[]): boolean };
/** `unanswered`: Queries and Syncs sent and not yet answered; `open`: a round trip is counted and not over. */
type Counted = Connection & { unanswered?: number; open?: boolean };

const file = process.env.ROUND_TRIPS_FILE;
if (!file) throw new Error('ROUND_TRIPS_FILE is required');
// The pg the service itself loads: resolved from where it runs.
const pg = createRequire(path.join(process.cwd(), 'package.json'))('pg') as { Connection: { prototype: Connection } };
const prototype = pg.Connection.prototype;
let roundTrips = 0;
const debug = process.env.RT_DEBUG ? new Map<string, number>() : null;

const { _send: send, sync, query, emit } = prototype;
prototype._send = function (this: Counted, buffer: Buffer) {
  if (!this.open) {
    roundTrips += 1;
    if (debug) {
      const key = buffer.subarray(0, 48).toString('latin1').replace(/[^ -~]/g, '.');
      debug.set(key, (debug.get(key) ?? 0) + 1);
    }
  }
  this.open = true;
  send.call(this, buffer);
};
prototype.sync = function (this: Counted) {
  sync.call(this);
  this.unanswered = (this.unanswered ?? 0) + 1;
};
prototype.query = function (this: Counted, text: string) {
  query.call(this, text);
  this.unanswered = (this.unanswered ?? 0) + 1;
};
prototype.emit = function (this: Counted, event: string, ...args: unknown[]) {
  if (event === 'readyForQuery') {
    // The first one ends the log-in, which sends no Query or Sync.
    this.unanswered = Math.max((this.unanswered ?? 0) - 1, 0);
    if (this.unanswered === 0) this.open = false;
  }
  return emit.call(this, event, ...args);
};

const write = () => {
  writeFileSync(file, String(roundTrips));
  if (debug) writeFileSync(`${file}.debug`, [...debug].sort((a, b) => b[1] - a[1]).map(([key, n]) => `${n} ${key}`).join('\n'));
};
setInterval(write, 100).unref();
process.on('exit', write);
