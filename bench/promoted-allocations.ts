// Where a running Node process's long-lived garbage is allocated: V8's sampling heap profiler,
// over the process's inspector, for a while, then the allocation sites by bytes.
//
//   ./node_modules/.bin/node bench/promoted-allocations.ts <inspector port> [seconds]
//
// The process runs with `--inspect=127.0.0.1:<port>` (bench/cpu-ab.ts: CPU_AB_NODE_ARGS).
// By default objects that scavenges collect are left out, so what is counted reached the old
// generation (or is still alive): what fills it between major collections. PROMOTED_ALL=1
// counts every allocation instead; PROMOTED_FOCUS=<regexp> lists only the stacks it matches.
type CallFrame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { callFrame: CallFrame; selfSize: number; children: ProfileNode[] };

const port = process.argv[2];
if (!port) throw new Error('usage: bench/promoted-allocations.ts <inspector port> [seconds]');
const seconds = Number(process.argv[3] ?? '20');
const everything = process.env.PROMOTED_ALL === '1';
const focus = process.env.PROMOTED_FOCUS ? new RegExp(process.env.PROMOTED_FOCUS) : null;

const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
await new Promise((resolve, reject) => {
  socket.addEventListener('open', resolve, { once: true });
  socket.addEventListener('error', reject, { once: true });
});
let lastId = 0;
const pending = new Map<number, (result: unknown) => void>();
socket.addEventListener('message', (event) => {
  const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
  if (message.id !== undefined) pending.get(message.id)?.(message.result);
  pending.delete(message.id ?? -1);
});
const call = <T>(method: string, params: object = {}) =>
  new Promise<T>((resolve) => {
    const id = ++lastId;
    pending.set(id, resolve as (result: unknown) => void);
    socket.send(JSON.stringify({ id, method, params }));
  });

await call('HeapProfiler.enable');
await call('HeapProfiler.startSampling', {
  samplingInterval: 16_384,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: everything,
});
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const { profile } = await call<{ profile: { head: ProfileNode } }>('HeapProfiler.stopSampling');
socket.close();

const frameName = (frame: CallFrame) =>
  `${frame.functionName || '(anonymous)'} ${frame.url.replace(/.*node_modules\//, '').replace(`file://${process.cwd()}/`, '')}:${frame.lineNumber + 1}`;
const bySite = new Map<string, number>();
const byStack = new Map<string, number>();
let total = 0;
const walk = (node: ProfileNode, stack: string[]) => {
  const frames = [...stack, frameName(node.callFrame)];
  if (node.selfSize > 0) {
    total += node.selfSize;
    bySite.set(frames.at(-1)!, (bySite.get(frames.at(-1)!) ?? 0) + node.selfSize);
    const key = frames.slice(-8).reverse().join(' <- ');
    byStack.set(key, (byStack.get(key) ?? 0) + node.selfSize);
  }
  for (const child of node.children) walk(child, frames);
};
walk(profile.head, []);

const megabytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2).padStart(7)} MB`;
const top = (entries: Map<string, number>) => [...entries].filter(([key]) => !focus || focus.test(key)).sort((a, b) => b[1] - a[1]).slice(0, 25);
process.stdout.write(`${everything ? 'allocated' : 'reached the old generation or still alive'}: ${megabytes(total).trim()} sampled in ${seconds} s\n\nby site:\n`);
for (const [site, bytes] of top(bySite)) process.stdout.write(`${megabytes(bytes)}  ${site}\n`);
process.stdout.write('\nby stack (innermost first):\n');
for (const [stack, bytes] of top(byStack)) process.stdout.write(`${megabytes(bytes)}  ${stack}\n`);
