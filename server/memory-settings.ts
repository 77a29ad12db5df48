// How this service's processes hold memory, applied by main.ts once it knows the process's
// role and before the service starts. Both settings keep full collections of a large heap
// rare: with 10,000 widget sockets connected the heap holds about 230 MB of live objects, and
// a full collection of it takes the event loop for hundreds of milliseconds
// (bench/results/history.md).
import { Buffer } from 'node:buffer';
import v8 from 'node:v8';
import type { Config } from './config.ts';

const HEAP_GROWING_PERCENT = 100;

export function applyMemorySettings(role: Config['ROLE']): void {
  // Node's Buffer pool is off where widget sockets are served. Node carves small Buffers
  // (under 4 KiB: a statement's protocol message, a socket frame, a string turned into bytes)
  // out of shared 8 KiB slabs, and a slab lives as long as any one of its Buffers does. Under
  // load some of those Buffers reach the old generation, and each then holds its whole slab
  // until the next full collection: about 11 KiB of slabs per visitor message. V8 starts a
  // full collection whenever such memory outside its heap has grown by 64 MiB since the last
  // one, which at 120 messages/s was every 45 s. Without the pool each Buffer has memory of
  // its own, freed with it. A worker (ROLE=worker) holds no sockets and keeps the pool: a
  // webhook send makes small Buffers for each request, and without the pool a delivery cost
  // the worker about a tenth more CPU (one run each way).
  if (role !== 'worker') Buffer.poolSize = 0;

  // The old generation may grow to twice what the last full collection left alive before the
  // next one starts. Under the push load V8's own factor was 1.1–1.3 (it lowers it once its
  // memory reducer has run), which with the sockets' heap meant a full collection every
  // 30–60 s. The cost is memory: up to twice the live heap between collections. A
  // `--heap-growing-percent` given on Node's command line is left as given.
  if (!process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg))) {
    v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
}
