// The load of the push figure, in its own process (the scenario runs several, each with its
// share of the visitors and of the rate): holds chat-widget visitor sockets (socket.io-client,
// WebSocket transport) to each server under test for the whole scenario, and on request posts
// visitor messages at a fixed rate and times each from the moment it is posted to the moment
// its visitor's socket receives it. Driven over the IPC channel (bench/push/drivers.ts).
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import { Agent, request } from 'undici';

export type ConnectCommand = {
  cmd: 'connect';
  target: string;
  origin: string;
  widgets: string[];
  /** This driver's visitors: ids `v<prefix>x<index>` for index in [0, count). */
  prefix: string;
  count: number;
  /** Handshakes in flight at once. */
  concurrency: number;
  /** Headers of each socket's upgrade request (a TLS-terminating proxy's X-Forwarded-Proto). */
  headers?: Record<string, string>;
  /**
   * Visitors come from many addresses, as on the open internet: each visitor's socket and
   * posts carry X-Forwarded-For 10.<network>.x.y, which the service believes from loopback
   * (TRUST_PROXY), so no per-address counter is shared by every visitor of the bench.
   */
  network: number;
};
export type RoundCommand = {
  cmd: 'round';
  target: string;
  /** The service's incoming endpoint, or the bare relay's. */
  postPath: string;
  messagesPerSecond: number;
  /** Unmeasured traffic first (connections, JIT and caches warm up), then the measured seconds. */
  warmUpSeconds: number;
  seconds: number;
  tag: string;
};
export type DisconnectCommand = { cmd: 'disconnect'; target: string };
export type Command = (ConnectCommand | RoundCommand | DisconnectCommand) & { id: number };

export type ConnectResult = { connected: number; retried: number; ms: number };
export type RoundResult = {
  sent: number;
  errors: number;
  lost: number;
  /** Post -> received, ms, of every measured message received. */
  latencies: number[];
  /** Post -> its 200 answer, ms: the part of the latency before the push. */
  answered: number[];
  statusCodes: Record<string, number>;
  firstError: string;
  /** This driver's CPU over the measured part (wallMs long), ms, and its event-loop delay p99 then, ms. */
  cpuMs: number;
  wallMs: number;
  loopDelayP99: number;
};

type Visitor = { widgetId: string; visitorId: string; address: string; socket: Socket };
type Target = { origin: string; visitors: Visitor[]; sentAt: Map<string, number>; latencies: number[]; answered: number[]; agent: Agent; next: number };

const targets = new Map<string, Target>();

function openSocket(origin: string, widgetId: string, visitorId: string, headers?: Record<string, string>): Promise<Socket> {
  const socket = io(origin, {
    extraHeaders: headers,
    path: '/socket.io',
    transports: ['websocket'],
    auth: { configId: widgetId, visitorId },
    rejectUnauthorized: false,
    reconnection: false,
    forceNew: true,
    timeout: 60_000,
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (error) => {
      socket.close();
      reject(error);
    });
  });
}

async function connect(command: ConnectCommand): Promise<ConnectResult> {
  const started = performance.now();
  const target: Target = {
    origin: command.origin,
    visitors: new Array(command.count),
    sentAt: new Map(),
    latencies: [],
    answered: [],
    // Rounds go on through the visitors where the last one stopped, so each hears as often as the others.
    next: 0,
    agent: new Agent({ connect: { rejectUnauthorized: false }, connections: 32 }),
  };
  targets.set(command.target, target);
  let next = 0;
  let retried = 0;
  // A fixed number of handshakes in flight: the servers' accept queues and the database
  // see a steady stream, not 10,000 at once.
  const worker = async () => {
    while (next < command.count) {
      const index = next++;
      const widgetId = command.widgets[index % command.widgets.length]!;
      const visitorId = `v${command.prefix}x${index}`.padEnd(12, '0');
      const address = `10.${command.network}.${(index >> 8) & 255}.${index & 255}`;
      const headers = { ...command.headers, 'x-forwarded-for': address };
      let socket: Socket;
      try {
        socket = await openSocket(command.origin, widgetId, visitorId, headers);
      } catch {
        retried += 1;
        socket = await openSocket(command.origin, widgetId, visitorId, headers);
      }
      socket.on('message', (message: { body: string }) => {
        const sent = target.sentAt.get(message.body);
        if (sent === undefined) return;
        target.sentAt.delete(message.body);
        target.latencies.push(performance.now() - sent);
      });
      target.visitors[index] = { widgetId, visitorId, address, socket };
    }
  };
  await Promise.all(Array.from({ length: command.concurrency }, worker));
  return { connected: command.count, retried, ms: performance.now() - started };
}

async function round(command: RoundCommand): Promise<RoundResult> {
  const target = targets.get(command.target);
  if (!target) throw new Error(`not connected to ${command.target}`);
  let errors = 0;
  let firstError = '';
  const statusCodes: Record<string, number> = {};

  const post = async (body: string) => {
    const visitor = target.visitors[target.next++ % target.visitors.length]!;
    const sent = performance.now();
    target.sentAt.set(body, sent);
    try {
      const response = await request(target.origin + command.postPath, {
        method: 'POST',
        dispatcher: target.agent,
        headers: { 'content-type': 'application/json', 'x-forwarded-for': visitor.address },
        body: JSON.stringify({ messageType: 'text', customData: { body, fromId: visitor.visitorId, toId: visitor.widgetId } }),
      });
      statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1;
      if (response.statusCode === 200) {
        target.answered.push(performance.now() - sent);
        return void (await response.body.dump());
      }
      firstError ||= `${response.statusCode} ${await response.body.text()}`;
    } catch (error) {
      firstError ||= String(error);
    }
    errors += 1;
    target.sentAt.delete(body);
  };

  /** Posts at the rate for `seconds`: each tick sends every message due by then, so the rate holds whatever the timer's granularity. */
  const postAtRate = async (seconds: number, tag: string) => {
    const count = Math.round(command.messagesPerSecond * seconds);
    const interval = 1000 / command.messagesPerSecond;
    const began = performance.now();
    const posts: Promise<void>[] = [];
    let index = 0;
    while (index < count) {
      const due = Math.min(count, Math.floor((performance.now() - began) / interval) + 1);
      for (; index < due; index++) posts.push(post(`${tag}-${index}`));
      if (index < count) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(posts);
    return count;
  };

  if (command.warmUpSeconds > 0) await postAtRate(command.warmUpSeconds, `${command.tag}w`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  target.sentAt.clear();
  target.latencies = [];
  target.answered = [];
  errors = 0;
  firstError = '';
  for (const code of Object.keys(statusCodes)) delete statusCodes[code];

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const cpuBefore = process.cpuUsage();
  const measuredFrom = performance.now();
  const sent = await postAtRate(command.seconds, `${command.tag}m`);
  // Give the last pushes a moment; anything later counts as lost.
  const deadline = performance.now() + 5_000;
  while (target.sentAt.size > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const cpu = process.cpuUsage(cpuBefore);
  delay.disable();
  return {
    sent,
    errors,
    lost: target.sentAt.size,
    latencies: target.latencies,
    answered: target.answered,
    statusCodes,
    firstError: firstError.slice(0, 300),
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs: performance.now() - measuredFrom,
    loopDelayP99: delay.percentile(99) / 1e6,
  };
}

async function disconnect(command: DisconnectCommand): Promise<{ disconnected: number }> {
  const target = targets.get(command.target);
  if (!target) return { disconnected: 0 };
  targets.delete(command.target);
  for (const visitor of target.visitors) visitor?.socket.disconnect();
  await target.agent.close();
  return { disconnected: target.visitors.length };
}

process.on('message', (command: Command) => {
  const run = command.cmd === 'connect' ? connect(command) : command.cmd === 'round' ? round(command) : disconnect(command);
  run.then(
    (result) => process.send!({ id: command.id, result }),
    (error: Error) => process.send!({ id: command.id, error: error.stack ?? String(error) }),
  );
});
// Disconnected from the scenario (it ended or died): nothing left to do.
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
