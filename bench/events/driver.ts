// The load of one step of the `events` scenario, in its own process: an open loop at a fixed
// rate (request i is due at start + i/rate, sent then whether or not earlier ones have
// answered), alternating visitor messages (POST /v1/incoming-chat-widget-message) and contact
// creates (POST /v1/contacts). Latency runs from when a request was due, so a server falling
// behind shows as latency, not as a lower offered rate. Visitor messages come from many
// loopback addresses, as real visitors come from many clients, so no one per-address
// counter row takes every message. Prints one JSON line (DriverResult).
//
//   node bench/events/driver.ts '<json DriverSpec>'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

export type DriverSpec = {
  origin: string;
  /** Requests per second, both kinds together. */
  rate: number;
  /** At the same rate, not measured (connections, TLS sessions). */
  warmupSeconds: number;
  measureSeconds: number;
  widgets: { id: string; ownerId: string }[];
  accounts: { apiKey: string; listId: string }[];
  /** Visitor ids of this step start with it (new visitors each step, so no visitor reaches its per-minute limit). */
  visitorPrefix: string;
  /** Where this step's phone numbers start (each contact create has a new one). */
  phoneStart: number;
  /** Loopback source addresses (127.0.0.2 and up). */
  addresses: number;
};

type KindResult = { count: number; p50: number; p99: number; failed: number };
export type DriverResult = {
  sent: number;
  contacts: number;
  /** Measured requests only. */
  all: KindResult;
  message: KindResult;
  contact: KindResult;
  /** Answers per second over the measured window. */
  answeredPerSecond: number;
  statusCodes: Record<string, number>;
  firstError: string;
  /** This driver's own event loop over the run, ms: a stall here delays sends and reads as latency. */
  loopDelay: { p99: number; max: number };
  /** Measured requests that took SLOW_MS or longer: how many, and when the first and last of them were due (epoch ms). */
  slow: { count: number; firstDue: number; lastDue: number };
};

/** A request at least this slow counts as slow (the scenario's p99 limit). */
const SLOW_MS = 100;

/** Visitor messages each visitor sends per step at most: far under its 20 per minute. */
const MESSAGES_PER_VISITOR = 3;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

async function main() {
  const spec = JSON.parse(process.argv[2] ?? '{}') as DriverSpec;
  const agents = Array.from(
    { length: spec.addresses },
    (_, index) => new Agent({ connect: { rejectUnauthorized: false, localAddress: `127.0.0.${2 + index}` }, connections: 64, keepAliveTimeout: 30_000 }),
  );
  const total = Math.round(spec.rate * (spec.warmupSeconds + spec.measureSeconds));
  const messagesTotal = Math.ceil(total / 2);
  const visitors = Math.max(1, Math.ceil(messagesTotal / MESSAGES_PER_VISITOR));
  const started = performance.now() + 20;
  const measureFrom = started + spec.warmupSeconds * 1000;
  const samples: { kind: 'message' | 'contact'; latency: number; ok: boolean; at: number; due: number }[] = [];
  const statusCodes: Record<string, number> = {};
  let firstError = '';
  let contacts = 0;

  const send = async (index: number, due: number) => {
    const isMessage = index % 2 === 0;
    let url: string;
    let body: string;
    let agent: Agent;
    if (isMessage) {
      const n = index / 2;
      const visitor = n % visitors;
      const widget = spec.widgets[visitor % spec.widgets.length]!;
      url = `${spec.origin}/v1/incoming-chat-widget-message?userId=${encodeURIComponent(widget.ownerId)}`;
      body = JSON.stringify({
        messageType: 'text',
        customData: { body: `bench message ${n}`, fromId: `${spec.visitorPrefix}v${visitor}`, toId: widget.id, messageSid: `${spec.visitorPrefix}m${n}` },
      });
      agent = agents[visitor % agents.length]!;
    } else {
      const n = (index - 1) / 2;
      const account = spec.accounts[n % spec.accounts.length]!;
      const number = spec.phoneStart + contacts++;
      // +1 303 and +1 720: area codes no other scenario writes, 8 million local numbers each.
      const phone = `+1${number < 8_000_000 ? '303' : '720'}${2_000_000 + (number % 8_000_000)}`;
      url = `${spec.origin}/v1/contacts?apiKey=${encodeURIComponent(account.apiKey)}`;
      body = JSON.stringify({ phoneNumber: phone, listId: account.listId });
      agent = agents[n % agents.length]!;
    }
    let ok = false;
    try {
      const response = await request(url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body, headersTimeout: 10_000, bodyTimeout: 10_000 });
      statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1;
      ok = response.statusCode >= 200 && response.statusCode < 300;
      if (!ok) firstError ||= `${response.statusCode} ${await response.body.text()}`;
      else await response.body.dump();
    } catch (error) {
      statusCodes.error = (statusCodes.error ?? 0) + 1;
      firstError ||= String(error);
    }
    const now = performance.now();
    if (due >= measureFrom) samples.push({ kind: isMessage ? 'message' : 'contact', latency: now - due, ok, at: now, due });
  };

  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const inFlight = new Set<Promise<void>>();
  let next = 0;
  while (next < total) {
    const now = performance.now();
    const due = started + (next * 1000) / spec.rate;
    if (due > now) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, due - now)));
      continue;
    }
    // Everything due by now goes out at once, each timed from its own due moment.
    while (next < total) {
      const dueAt = started + (next * 1000) / spec.rate;
      if (dueAt > performance.now()) break;
      const sending = send(next, dueAt).finally(() => inFlight.delete(sending));
      inFlight.add(sending);
      next += 1;
    }
  }
  await Promise.all(inFlight);
  loop.disable();

  const summarize = (kind?: 'message' | 'contact'): KindResult => {
    const chosen = kind ? samples.filter((sample) => sample.kind === kind) : samples;
    const latencies = chosen.map((sample) => sample.latency).sort((a, b) => a - b);
    return { count: chosen.length, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), failed: chosen.filter((sample) => !sample.ok).length };
  };
  const slow = samples.filter((sample) => sample.latency >= SLOW_MS).map((sample) => performance.timeOrigin + sample.due);
  const lastAnswer = samples.reduce((latest, sample) => Math.max(latest, sample.at), measureFrom);
  const result: DriverResult = {
    sent: total,
    contacts,
    all: summarize(),
    message: summarize('message'),
    contact: summarize('contact'),
    answeredPerSecond: samples.length / Math.max(spec.measureSeconds, (lastAnswer - measureFrom) / 1000),
    statusCodes,
    firstError: firstError.slice(0, 300),
    loopDelay: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
    slow: { count: slow.length, firstDue: slow.length ? Math.min(...slow) : 0, lastDue: slow.length ? Math.max(...slow) : 0 },
  };
  await Promise.all(agents.map((agent) => agent.close()));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
