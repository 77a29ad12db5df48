// The cost of one procedure call in-process through the HTTP surfaces' runner (callProcedure
// in server/http/procedure-pipeline.ts), beside tRPC's own procedure call and createCaller,
// with no database. How to run it and the last figures: docs/performance.md, Measuring one change.
//   node_modules/.bin/node bench/procedure-runner.ts   (knobs: CALLS, ROUNDS)
import { loadavg } from 'node:os';
import { z } from 'zod';
import { callProcedure, type CallableProcedure } from '../server/http/procedure-pipeline.ts';
import type { Services } from '../server/process-services.ts';
import { createCallerFactory, createContext, createPipelineContext, publicProcedure, router, type Context } from '../server/trpc.ts';

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
// The procedure touches no service; the context is made per call as the surfaces make it (an
// in-process caller's EntityManager is forked before tRPC copies the context: a stand-in here).
const services = { orm: { em: { fork: () => ({}) } } } as unknown as Services;
const input = { email: 'ada@example.com', includeArchived: true };
const request = () => ({ method: 'GET', query: new URLSearchParams('email=ada%40example.com'), headers: {}, host: undefined, ip: '127.0.0.1' });
const context = (): Context => createContext(services, request());
const pipelineContext = (): Context => createPipelineContext(services, request(), undefined);

const ways: Record<string, () => Promise<unknown>> = {
  'callProcedure (copied runner)': () => callProcedure(callable, { path: 'contacts.find', ctx: pipelineContext(), input }),
  "procedure() (tRPC's runner)": () =>
    procedure({ path: 'contacts.find', type: 'query', ctx: context(), input: undefined, getRawInput: async () => input, signal: undefined, batchIndex: 0 }),
  'createCaller per call': () => createCaller(context()).contacts.find(input),
};

type Timing = { wall: number; cpu: number };

/** Wall-clock and CPU microseconds per call over `calls` calls, one after another. */
async function round(call: () => Promise<unknown>, calls: number): Promise<Timing> {
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let index = 0; index < calls; index += 1) await call();
  const wall = Number(process.hrtime.bigint() - start) / 1000 / calls;
  const cpu = process.cpuUsage(cpuStart);
  return { wall, cpu: (cpu.user + cpu.system) / calls };
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
  const timings = new Map<string, Timing[]>(names.map((name) => [name, []]));
  for (let index = 0; index < ROUNDS; index += 1) {
    for (let offset = 0; offset < names.length; offset += 1) {
      const name = names[(index + offset) % names.length]!;
      timings.get(name)!.push(await round(ways[name]!, CALLS));
    }
  }
  const loadAfter = loadavg();
  const loads = (values: number[]) => values.map((value) => value.toFixed(2)).join(' ');
  console.log(`node ${process.version}, ${ROUNDS} rounds x ${CALLS} calls per way; load average before ${loads(load)}, after ${loads(loadAfter)}`);
  // CPU time is the steadier figure on a loaded machine: waiting for a core is not counted.
  const baseline = median(timings.get(names[0]!)!.map((timing) => timing.cpu));
  for (const name of names) {
    const cpu = timings.get(name)!.map((timing) => timing.cpu);
    const wall = timings.get(name)!.map((timing) => timing.wall);
    console.log(
      `${name.padEnd(30)} CPU median ${median(cpu).toFixed(2)} µs/call (${Math.min(...cpu).toFixed(2)}–${Math.max(...cpu).toFixed(2)}), ` +
        `${(median(cpu) / baseline).toFixed(2)}x; wall median ${median(wall).toFixed(2)} µs/call`,
    );
  }
}

await main();
