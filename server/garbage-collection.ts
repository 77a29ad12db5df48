// V8's settings for this service's heap, applied before anything else is loaded (main.ts
// imports this module first).
//
// Allocation-site pretenuring is off. V8 allocates an object straight into the old
// generation when most objects from the same site survived a recent young collection. A
// request's objects live a few milliseconds, but during a brief stall many are still in
// flight. V8 then pretenures their sites, and every later request's garbage fills the old
// generation. With 10,000 widget sockets connected, each major collection of that heap holds
// the event loop for hundreds of milliseconds. Measured under the push load: 4.5 times less
// reached the old generation with pretenuring off, at the same CPU per message
// (bench/results/history.md).
import v8 from 'node:v8';

v8.setFlagsFromString('--no-allocation-site-pretenuring');
