// Scenario `push`: chat-widget push latency, a visitor message posted -> the same message
// received by that visitor's socket, with 10,000 visitors connected to one process at 1,000
// messages/s, and the resident memory each idle visitor socket costs that process; against
// a bare Socket.IO relay on fastify doing only the emit, in alternating rounds.
import { cpus } from 'node:os';
import path from 'node:path';
import { postgresCpuMs, postmasterPid, processCpuMs } from '../cpu-usage.ts';
import { median, progress, ratioRow, type Row, type ScenarioResult, type Settings } from '../measure.ts';
import { INSPECT_ARGS, inspectorUrl, settledMemory, type SettledMemory } from '../process-memory.ts';
import { freePort, startNode, type NodeProcess } from '../processes.ts';
import { startPushDrivers, type MergedRound } from '../push/drivers.ts';
import { callServer, cpuProfileArgs, startApiProcess } from './servers.ts';

/** BENCH_PUSH_VISITORS and BENCH_PUSH_RATE measure other loads (1,000 and 100 were the scenario's earlier ones). */
const VISITORS = Number(process.env.BENCH_PUSH_VISITORS) || 10_000;
const MESSAGES_PER_SECOND = Number(process.env.BENCH_PUSH_RATE) || 1_000;
/** Enough widgets that no widget's own message limit (600 a minute) is reached at this rate. */
const WIDGETS = Math.max(20, Math.ceil(MESSAGES_PER_SECOND / 10));
const WARM_UP_SECONDS = 2;
/** Rounds at most: connecting 20,000 sockets already takes minutes, so the scenario stays near five minutes. */
const MAX_ROUNDS = 3;
/**
 * Driver processes (BENCH_PUSH_DRIVERS, at least 2): the visitors' sockets to both servers,
 * 20,000 in all, do not fit one process's open-file limit (`ulimit -n`, 20,000 here).
 */
const DRIVERS = Math.max(2, Number(process.env.BENCH_PUSH_DRIVERS) || 2);
const METRICS_TOKEN = 'bench-push-metrics-token';
/** A directory for heap snapshots of each server before and after its visitors connect (to see what a socket holds); none when unset. */
const HEAP_SNAPSHOTS = process.env.BENCH_PUSH_HEAP_SNAPSHOTS;

/** The service's event-loop delay p99 since the last scrape (prom-client resets its histogram on each), ms. */
async function serviceLoopDelayP99(origin: string): Promise<number> {
  const text = await callServer(origin, 'GET', '/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
  const match = /^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(text);
  return match ? Number(match[1]) * 1000 : NaN;
}

type Memory = { before: SettledMemory; after: SettledMemory };
const perSocket = (memory: Memory, key: keyof SettledMemory) => (memory.after[key] - memory.before[key]) / VISITORS;
const kib = (bytes: number) => Math.round(bytes / 102.4) / 10;

/** The service's database pool as /metrics shows it: connections open and idle, callers waiting for one. */
type PoolSample = { total: number; idle: number; waiting: number };

async function poolSample(origin: string): Promise<PoolSample> {
  const text = await callServer(origin, 'GET', '/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
  const read = (state: string) => Number(new RegExp(`^db_pool_connections\\{state="${state}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { total: read('total'), idle: read('idle'), waiting: read('waiting') };
}

/** BENCH_PUSH_POOL: the service's DATABASE_POOL_SIZE (its default otherwise). */
const POOL_SIZE = process.env.BENCH_PUSH_POOL;
const POOL_SAMPLE_MS = 500;

type Round = MergedRound & { serverCpuMs: number; postgresCpuMs: number; loopDelayP99: number; ms: number; pool: PoolSample[] };

export async function runPushScenario(settings: Settings, databaseUrl: string, apiKey: string): Promise<ScenarioResult> {
  // ROLE=api: the visitor's own message is pushed by the request's transaction; no worker
  // runs, so the bot's replies queue up instead of adding load to this figure.
  // Each visitor comes from its own address (X-Forwarded-For from the drivers, believed from
  // loopback through TRUST_PROXY), as on the open internet; the per-address limits are raised
  // besides, as the bench's traffic is far denser than one visitor's.
  const oneAddressForAll = '10000000';
  const limits = {
    WIDGET_REQUESTS_PER_IP_PER_MINUTE: oneAddressForAll,
    WIDGET_MESSAGES_PER_IP_PER_MINUTE: oneAddressForAll,
    WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE: oneAddressForAll,
    WIDGET_SOCKETS_PER_IP: oneAddressForAll,
  };
  const service = await startApiProcess(
    databaseUrl,
    { ...limits, METRICS_TOKEN, TRUST_PROXY: '127.0.0.1', ...(POOL_SIZE ? { DATABASE_POOL_SIZE: POOL_SIZE } : {}) },
    INSPECT_ARGS,
  );
  const relayPort = await freePort();
  const relay: NodeProcess = await startNode(
    'bench/push/bare-relay.ts',
    { PORT: String(relayPort), TLS_CERT_FILE: path.join(service.dataDir, 'tls-cert.pem'), TLS_KEY_FILE: path.join(service.dataDir, 'tls-key.pem') },
    /relay listening on (https:\/\/\S+)/,
    undefined,
    [...cpuProfileArgs('BENCH_BARE_CPU_PROF'), ...INSPECT_ARGS],
  );
  const relayOrigin = new URL(relay.ready[1]).origin;
  const drivers = await startPushDrivers(DRIVERS);
  try {
    const widgets: string[] = [];
    for (let index = 0; index < WIDGETS; index++) {
      const created = JSON.parse(await callServer(service.origin, 'POST', '/v1/chat-widgets', { 'x-api-key': apiKey }, { name: `bench widget ${index}`, settings: {} }));
      widgets.push(created.data.id);
    }
    const config = JSON.parse(await callServer(service.origin, 'GET', `/v1/chat-widget-config?configId=${encodeURIComponent(widgets[0]!)}`, {}));
    const servicePost = `/v1/incoming-chat-widget-message?userId=${encodeURIComponent(String(config.data.userId))}`;
    const postmaster = await postmasterPid(databaseUrl);

    // Memory: each process settled before any visitor connects, and again with all of them connected and idle.
    const servicePid = service.process.child.pid!;
    const relayPid = relay.child.pid!;
    const serviceInspector = inspectorUrl(service.process.output());
    const relayInspector = inspectorUrl(relay.output());
    const connectTimes: Record<string, number> = {};
    const memory: Record<'service' | 'bare' | 'plain' | 'proxied', Memory> = {} as never;
    for (const [name, origin, pid, inspector] of [
      ['service', service.origin, servicePid, serviceInspector],
      ['bare', relayOrigin, relayPid, relayInspector],
    ] as const) {
      const snapshot = (when: string) => (HEAP_SNAPSHOTS ? path.join(HEAP_SNAPSHOTS, `${name}-${when}.heapsnapshot`) : undefined);
      const before = await settledMemory(pid, inspector, snapshot('before'));
      progress(`push: connecting ${VISITORS} visitors to the ${name === 'bare' ? 'bare relay' : 'service'}`);
      const connected = await drivers.connect(name, origin, widgets, VISITORS);
      connectTimes[name] = connected.ms;
      const after = await settledMemory(pid, inspector, snapshot('after'));
      memory[name] = { before, after };
      progress(`push: ${name} connected in ${(connected.ms / 1000).toFixed(1)} s (${connected.retried} retried); RSS ${kib(before.rss)} KiB -> ${kib(after.rss)} KiB`);
    }

    // What TLS in the process costs: the same bare relay over plain HTTP, memory only.
    const plainRelay = await startNode('bench/push/bare-relay.ts', { PORT: String(await freePort()) }, /relay listening on (http:\/\/\S+)/, undefined, INSPECT_ARGS);
    try {
      const inspector = inspectorUrl(plainRelay.output());
      const before = await settledMemory(plainRelay.child.pid!, inspector);
      progress(`push: connecting ${VISITORS} visitors to the bare relay over plain HTTP`);
      await drivers.connect('plain', new URL(plainRelay.ready[1]).origin, widgets, VISITORS);
      memory.plain = { before, after: await settledMemory(plainRelay.child.pid!, inspector) };
      await drivers.disconnect('plain');
    } finally {
      await plainRelay.stop();
    }

    // The service as deployed behind a TLS-terminating balancer (TLS=off, TRUST_PROXY): memory only.
    const proxied = await startApiProcess(databaseUrl, { ...limits, TLS: 'off', TRUST_PROXY: '127.0.0.1' }, INSPECT_ARGS);
    try {
      const inspector = inspectorUrl(proxied.process.output());
      const pid = proxied.process.child.pid!;
      const before = await settledMemory(pid, inspector);
      progress(`push: connecting ${VISITORS} visitors to the service with TLS=off, as a balancer would`);
      // It prints the address its clients see through the balancer (https); the balancer itself speaks HTTP to it.
      await drivers.connect('proxied', proxied.origin.replace(/^https:/, 'http:'), widgets, VISITORS, { 'x-forwarded-proto': 'https' });
      memory.proxied = { before, after: await settledMemory(pid, inspector) };
      await drivers.disconnect('proxied');
    } finally {
      await proxied.process.stop();
    }

    // Every visitor's first message creates its contact: done once before the rounds, so each round stores messages of known visitors.
    progress('push: one unmeasured message per service visitor (their contacts)');
    const priming = await drivers.round('service', servicePost, MESSAGES_PER_SECOND, 0, VISITORS / MESSAGES_PER_SECOND, 'p');
    progress(`push: priming ${JSON.stringify({ ...priming, firstError: priming.firstError || undefined })}`);

    const measure = async (name: 'service' | 'bare', round: number): Promise<Round> => {
      const pid = name === 'service' ? servicePid : relayPid;
      if (name === 'service') await serviceLoopDelayP99(service.origin);
      const started = performance.now();
      const cpu = processCpuMs(pid);
      const pgCpu = postgresCpuMs(postmaster);
      // The service's pool, sampled through the round: whether messages wait for a connection.
      const pool: PoolSample[] = [];
      const sampler =
        name === 'service'
          ? setInterval(() => void poolSample(service.origin).then((sample) => pool.push(sample), () => {}), POOL_SAMPLE_MS)
          : null;
      const result =
        name === 'service'
          ? await drivers.round('service', servicePost, MESSAGES_PER_SECOND, WARM_UP_SECONDS, settings.durationSeconds, `f${round}`)
          : await drivers.round('bare', '/relay', MESSAGES_PER_SECOND, WARM_UP_SECONDS, settings.durationSeconds, `b${round}`);
      if (sampler) clearInterval(sampler);
      return {
        ...result,
        pool,
        serverCpuMs: processCpuMs(pid) - cpu,
        postgresCpuMs: postgresCpuMs(postmaster) - pgCpu,
        ms: performance.now() - started,
        loopDelayP99: name === 'service' ? await serviceLoopDelayP99(service.origin) : NaN,
      };
    };
    const bare: Round[] = [];
    const full: Round[] = [];
    const rounds = Math.min(settings.rounds, MAX_ROUNDS);
    for (let round = 1; round <= rounds; round++) {
      progress(`push: round ${round} of ${rounds}`);
      bare.push(await measure('bare', round));
      full.push(await measure('service', round));
      const brief = (r: Round) => ({ p50: r.p50, p99: r.p99, errors: r.errors, lost: r.lost, cpu: r.serverCpuMs / r.ms, pg: r.postgresCpuMs / r.ms, loop: r.loopDelayP99, driverCpu: r.driverCpuShare, driverLoop: r.driverLoopDelayP99, codes: r.statusCodes, firstError: r.firstError || undefined });
      progress(`push: bare ${JSON.stringify(brief(bare.at(-1)!))}`);
      progress(`push: service ${JSON.stringify(brief(full.at(-1)!))}`);
    }
    await drivers.disconnect('bare');
    await drivers.disconnect('service');

    const failures = (results: Round[]) => results.reduce((sum, result) => sum + result.errors + result.lost, 0);
    const share = (results: Round[], pick: (r: Round) => number) => median(results.map((r) => pick(r) / r.ms));
    // A round's CPU covers its warm-up, measured part and the drain after it.
    const perMessage = (results: Round[], pick: (r: Round) => number) => median(results.map((r) => pick(r) / (MESSAGES_PER_SECOND * (WARM_UP_SECONDS + settings.durationSeconds))));
    const label = `push, ${VISITORS.toLocaleString('en')} visitors connected to one process, ${MESSAGES_PER_SECOND.toLocaleString('en')} messages/s`;
    const p99 = median(full.map((r) => r.p99));
    const servicePerSocket = perSocket(memory.service, 'rss');
    const barePerSocket = perSocket(memory.bare, 'rss');
    const rows: Row[] = [
      ratioRow(`${label}: p50`, 'ms', median(full.map((r) => r.p50)), median(bare.map((r) => r.p50))),
      { ...ratioRow(`${label}: p99`, 'ms', p99, median(bare.map((r) => r.p99))), target: '< 50 ms', met: p99 < 50 },
      { name: 'non-200 answers and messages never pushed (all rounds)', value: failures(full), unit: '', baseline: failures(bare), target: '0', met: failures(full) === 0 },
      // With TLS in the process, Node keeps OpenSSL's record buffers per connection (about 34 KiB): reported, not targeted.
      ratioRow('resident memory per idle visitor socket, TLS in the process (information)', 'KiB', kib(servicePerSocket), kib(barePerSocket)),
      {
        ...ratioRow('resident memory per idle visitor socket, TLS terminated in front (TLS=off; baseline: bare relay over plain HTTP)', 'KiB', kib(perSocket(memory.proxied, 'rss')), kib(perSocket(memory.plain, 'rss'))),
        target: '≤ 20 KiB',
        met: perSocket(memory.proxied, 'rss') <= 20 * 1024,
      },
      ratioRow(`connecting ${VISITORS.toLocaleString('en')} visitors`, 's', connectTimes.service! / 1000, connectTimes.bare! / 1000),
      // What a message costs whatever the machine's other load: the rate one core carries is 1000 / this.
      ratioRow('CPU per message, server process', 'ms', perMessage(full, (r) => r.serverCpuMs), perMessage(bare, (r) => r.serverCpuMs)),
      ratioRow('CPU per message, PostgreSQL', 'ms', perMessage(full, (r) => r.postgresCpuMs), perMessage(bare, (r) => r.postgresCpuMs)),
    ];
    const poolSamples = full.flatMap((r) => r.pool);
    const waiting = poolSamples.map((sample) => sample.waiting).sort((a, b) => a - b);
    const allBusy = poolSamples.filter((sample) => sample.idle === 0).length / Math.max(1, poolSamples.length);
    const poolNote = poolSamples.length
      ? `The service's database pool (${POOL_SIZE ? `DATABASE_POOL_SIZE=${POOL_SIZE}` : 'its default size'}), sampled every ${POOL_SAMPLE_MS} ms through the service rounds from /metrics (${poolSamples.length} samples): up to ${Math.max(...poolSamples.map((sample) => sample.total))} connections open, none idle in ${(allBusy * 100).toFixed(0)}% of samples; callers waiting for a connection: median ${median(waiting)}, p90 ${waiting[Math.floor(waiting.length * 0.9)]}, max ${waiting.at(-1)}.`
      : 'The service pool was not sampled.';
    const heap = (memory: Memory) => `${kib(perSocket(memory, 'heapUsed'))} KiB JavaScript heap and ${kib(perSocket(memory, 'external'))} KiB external (buffers) of it`;
    return {
      name: 'push',
      title: 'Chat-widget push latency and memory per socket: visitor message posted -> pushed to its socket',
      rows,
      notes: [
        `Service: \`node server/main.ts\` with ROLE=api; each message is a POST /v1/incoming-chat-widget-message that stores the message in one transaction and publishes it with pg_notify in a statement sent with its COMMIT (with the widgets' default settings a visitor's later message queues no bot turn: its turn would be silent); the process LISTENing emits it to the visitor's Socket.IO room. ${WIDGETS} widgets, ${VISITORS.toLocaleString('en')} visitors on WebSocket transport (TLS) held for the whole scenario, one message per visitor per ${VISITORS / MESSAGES_PER_SECOND} s; ${rounds} rounds each (BENCH_ROUNDS, at most ${MAX_ROUNDS} here: connecting the sockets takes most of the scenario's time), each ${WARM_UP_SECONDS} s of the same traffic not measured, then ${settings.durationSeconds} s measured. Before the rounds every visitor sends one unmeasured message, which creates its contact.`,
        `Baseline: bench/push/bare-relay.ts, fastify over HTTPS with Socket.IO on the same server, emitting the posted message to the room directly (no database). The visitors and the posts come from ${DRIVERS} driver processes (bench/push/driver.ts), each holding its share of the sockets to both servers and posting its share of the rate; latency is from the POST being sent to the socket receiving the message. Busiest driver during a round (median): ${median(full.map((r) => r.driverCpuShare)).toFixed(2)} of a core, event-loop delay p99 ${median(full.map((r) => r.driverLoopDelayP99)).toFixed(1)} ms (10 ms timer).`,
        `Memory per socket: VmRSS of the server process (/proc/<pid>/status) with the ${VISITORS.toLocaleString('en')} sockets connected and idle, minus VmRSS before any visitor connected, divided by ${VISITORS.toLocaleString('en')}; each reading after two full garbage collections forced over the inspector (the processes run with ${INSPECT_ARGS.join(' ')}). Service: ${Math.round(memory.service.before.rss / 2 ** 20)} MiB -> ${Math.round(memory.service.after.rss / 2 ** 20)} MiB, ${heap(memory.service)}; bare relay: ${Math.round(memory.bare.before.rss / 2 ** 20)} MiB -> ${Math.round(memory.bare.after.rss / 2 ** 20)} MiB, ${heap(memory.bare)}; the same relay over plain HTTP: ${heap(memory.plain)}; the service with TLS=off: ${heap(memory.proxied)}. Beyond the JavaScript heap, the difference between HTTPS and plain HTTP is each connection's TLS state in Node and OpenSSL (${process.versions.openssl}).`,
        `Where a service round's time goes (medians over the measured part; the machine's ${cpus().length} cores carry all of it, drivers and PostgreSQL included): the service process ${share(full, (r) => r.serverCpuMs).toFixed(2)} of a core, its event loop delayed p99 ${median(full.map((r) => r.loopDelayP99)).toFixed(1)} ms (prom-client's 10 ms timer, which an idle loop reads as about 10 ms); PostgreSQL ${share(full, (r) => r.postgresCpuMs).toFixed(2)} of a core; the drivers ${median(full.map((r) => r.driverCpuShare)).toFixed(2)} each (busiest). The bare relay used ${share(bare, (r) => r.serverCpuMs).toFixed(2)} of a core for the same sockets and posts.`,
        `What bounds the latency, and what would move it: a message costs the service process ${perMessage(full, (r) => r.serverCpuMs).toFixed(2)} ms of CPU and PostgreSQL ${perMessage(full, (r) => r.postgresCpuMs).toFixed(2)} ms, so ${MESSAGES_PER_SECOND.toLocaleString('en')} messages/s ask for ${((perMessage(full, (r) => r.serverCpuMs) * MESSAGES_PER_SECOND) / 1000).toFixed(1)} cores of the one process and ${((perMessage(full, (r) => r.postgresCpuMs) * MESSAGES_PER_SECOND) / 1000).toFixed(1)} of PostgreSQL, on a machine whose ${cpus().length} cores also run the drivers, the relay and the other sockets' heartbeats. When that is more than the cores give, posts wait in the drivers' connection pools and the figure is mostly that queue. More cores for PostgreSQL and for the process (or a second API process: the push reaches a visitor on any process), or fewer statements per message (six round trips for a visitor without an identity token: the widget read with the message counted, BEGIN, the contact's lock, the session read, the write, COMMIT) move it; the service's CPU profile (BENCH_API_CPU_PROF) shows where its part goes: in the runs measured so far, writes to PostgreSQL's socket, one per statement, were three quarters of its socket-write time, above Socket.IO's frames.`,
        poolNote,
        `What bounds the memory, and what would move it: beyond the JavaScript heap (Socket.IO, Engine.IO and ws objects, about the bare relay's own), the TLS state of each connection in Node and OpenSSL, which the process does not hold when TLS is terminated in front of it (TLS=off and TRUST_PROXY, docs/operating.md: Deploying), as the TLS=off row measures.`,
      ],
    };
  } finally {
    await drivers.stop();
    await relay.stop();
    await service.process.stop();
  }
}
