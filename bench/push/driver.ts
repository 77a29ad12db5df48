// The load of the push figure, in its own process: connects many chat-widget visitors with
// socket.io-client, posts visitor messages at a fixed rate, and times each from the moment
// it is posted to the moment its visitor's socket receives it. Prints one JSON line.
//
//   node bench/push/driver.ts '<json options>'
import { performance } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import { Agent, request } from 'undici';

type Options = {
  origin: string;
  /** The service's incoming endpoint, or the bare relay's. */
  postPath: (string & {}) | '/relay';
  widgets: string[];
  visitors: number;
  messagesPerSecond: number;
  durationSeconds: number;
  runId: string;
};

const options = JSON.parse(process.argv[2] ?? '{}') as Options;
const agent = new Agent({ connect: { rejectUnauthorized: false }, connections: 64 });

type Visitor = { widgetId: string; visitorId: string; socket: Socket };

function connect(widgetId: string, visitorId: string): Promise<Visitor> {
  const socket = io(options.origin, {
    path: '/socket.io',
    transports: ['websocket'],
    auth: { configId: widgetId, visitorId },
    rejectUnauthorized: false,
    reconnection: false,
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve({ widgetId, visitorId, socket }));
    socket.once('connect_error', (error) => reject(error));
  });
}

const visitors: Visitor[] = [];
for (let start = 0; start < options.visitors; start += 100) {
  const batch = [];
  for (let index = start; index < Math.min(options.visitors, start + 100); index++) {
    batch.push(connect(options.widgets[index % options.widgets.length]!, `v${options.runId}x${index}`.padEnd(12, '0')));
  }
  visitors.push(...(await Promise.all(batch)));
}

const sentAt = new Map<string, number>();
const latencies: number[] = [];
let errors = 0;
const statusCodes: Record<string, number> = {};
let firstError = '';
for (const visitor of visitors) {
  visitor.socket.on('message', (message: { body: string }) => {
    const started = sentAt.get(message.body);
    if (started === undefined) return;
    sentAt.delete(message.body);
    latencies.push(performance.now() - started);
  });
}

async function post(visitor: Visitor, body: string): Promise<void> {
  sentAt.set(body, performance.now());
  try {
    const response = await request(options.origin + options.postPath, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messageType: 'text', customData: { body, fromId: visitor.visitorId, toId: visitor.widgetId } }),
    });
    statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1;
    if (response.statusCode !== 200) firstError ||= await response.body.text();
    else await response.body.dump();
    if (response.statusCode !== 200) {
      errors += 1;
      sentAt.delete(body);
    }
  } catch (error) {
    firstError ||= String(error);
    errors += 1;
    sentAt.delete(body);
  }
}

const interval = 1000 / options.messagesPerSecond;

/** Posts `count` messages at the rate, the first to visitor `offset`; returns when all were answered. */
async function postAtRate(count: number, offset: number, tag: string): Promise<void> {
  const began = performance.now();
  const posts: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    const due = began + index * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    posts.push(post(visitors[(offset + index) % visitors.length]!, `${options.runId}-${tag}${index}`));
  }
  await Promise.all(posts);
}

// Two seconds of the same traffic first, not measured: connections, JIT and caches warm up.
const warmUp = options.messagesPerSecond * 2;
await postAtRate(warmUp, 0, 'w');
await new Promise((resolve) => setTimeout(resolve, 500));
latencies.length = 0;
errors = 0;
for (const key of Object.keys(statusCodes)) delete statusCodes[key];
const total = options.messagesPerSecond * options.durationSeconds;
await postAtRate(total, warmUp, 'm');
// Give the last pushes a moment; anything later counts as lost.
const deadline = performance.now() + 5_000;
while (sentAt.size > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));

const sorted = latencies.sort((a, b) => a - b);
const percentile = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN);
console.log(JSON.stringify({ sent: total, received: sorted.length, errors, lost: sentAt.size, p50: percentile(50), p99: percentile(99), statusCodes, firstError: firstError.slice(0, 300) }));
for (const visitor of visitors) visitor.socket.disconnect();
await agent.close();
process.exit(0);
