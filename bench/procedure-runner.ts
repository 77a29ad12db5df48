// How long one procedure call takes in-process through the middleware runner the HTTP
// surfaces use (callProcedure in server/http/procedure-pipeline.ts) against tRPC's own
// procedure caller (the procedure called as a function, what tRPC's handlers do) and
// createCaller (a caller built per request, as a test does). The procedure has the chain
// shape every API procedure has (one `.use()` step from publicProcedure, input and output
// schemas, a resolver) and touches no database, so the figure is the runner's alone.
//
// Run with the pinned Node (the machine's own node is older):
//   node_modules/.bin/node bench/procedure-runner.ts
// Knobs: CALLS (per round and way, 20000), ROUNDS (15). The ways alternate within each
// round, in a rotating order, so background load falls on all of them alike; medians are
// reported with the load average.
import { loadavg } from 'node:os';
import { z } from 'zod';
import { callProcedure, type CallableProcedure } from '../server/http/procedure-pipeline.ts';
import type { Services } from '../server/services.ts';
import { createCallerFactory, createContext, publicProcedure, router, type Context } from '../server/trpc.ts';

const CALLS = Number(process.env.CALLS ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 15);

const ContactLookupInput = z.object({ email: z.string(), includeArchived: z.boolean().optional() });
const ContactLookupOutput = z.object({ id: z.string(), email: z.string(), tags: z.array(z.string()), archived: z.boolean() });

const benchRouter = router({
  contacts: router({
    find: publicProcedure
      .meta({ section: 'Contacts', access: 'read' })
      .input(ContactLookupInput)
      .output(ContactLookupOutput)
      .query(({ input }) => ({ id: 'ct_1', email: input.email, tags: ['a', 'b'], archived: input.includeArchived ?? false })),
  }),
});

const procedure = benchRouter.contacts.find;
const callable = procedure as unknown as CallableProcedure;
const createCaller = createCallerFactory(benchRouter);
// The procedure touches no service; the context is made per call as the surfaces make it.
const services = {} as Services;
const input = { email: 'ada@example.com', includeArchived: true };
const context = (): Context =>
  createContext(services, { method: 'GET', query: new URLSearchParams('email=ada%40example.com'), headers: {}, host: undefined, ip: '127.0.0.1' });

const ways: Record<string, () => Promise<unknown>> = {
  'callProcedure (copied runner)': () => callProcedure(callable, { path: 'contacts.find', ctx: context(), input }),
  "procedure() (tRPC's runner)": () =>
    procedure({ path: 'contacts.find', type: 'query', ctx: context(), input: undefined, getRawInput: async () => input, signal: undefined, batchIndex: 0 }),
  'createCaller per call': () => createCaller(context()).contacts.find(input),
};

async function round(call: () => Promise<unknown>, calls: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let index = 0; index < calls; index += 1) await call();
  return Number(process.hrtime.bigint() - start) / 1000 / calls;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main() {
  const names = Object.keys(ways);
  // Every way answers the same, and is warmed up before it is timed.
  for (const name of names) {
    const answer = JSON.stringify(await ways[name]!());
    if (answer !== '{"id":"ct_1","email":"ada@example.com","tags":["a","b"],"archived":true}') throw new Error(`${name} answered ${answer}`);
    await round(ways[name]!, CALLS);
  }
  const load = loadavg();
  const timings = new Map<string, number[]>(names.map((name) => [name, []]));
  for (let index = 0; index < ROUNDS; index += 1) {
    for (let offset = 0; offset < names.length; offset += 1) {
      const name = names[(index + offset) % names.length]!;
      timings.get(name)!.push(await round(ways[name]!, CALLS));
    }
  }
  const loadAfter = loadavg();
  console.log(`node ${process.version}, ${ROUNDS} rounds x ${CALLS} calls per way; load average before ${load.map((value) => value.toFixed(2)).join(' ')}, after ${loadAfter.map((value) => value.toFixed(2)).join(' ')}`);
  const baseline = median(timings.get(names[0]!)!);
  for (const name of names) {
    const values = timings.get(name)!;
    const figure = median(values);
    console.log(
      `${name.padEnd(32)} median ${figure.toFixed(2)} µs/call (min ${Math.min(...values).toFixed(2)}, max ${Math.max(...values).toFixed(2)}), ${(figure / baseline).toFixed(2)}x`,
    );
  }
}

await main();
