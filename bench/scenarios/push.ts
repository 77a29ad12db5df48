// Scenario `push`: the highest message rate at which a visitor message posted -> the same
// message received by that visitor's socket stays under 50 ms at p99, with 10,000 visitors
// connected to one process, against a bare durable relay (fastify + Socket.IO inserting the
// message row in one statement and emitting it), both ramped in the same run, alternating
// step by step; and the resident memory each idle visitor socket costs the process.
import { cpus } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { machineMajorFaults, postgresCpuMs, postmasterPid, processCpuMs, processMajorFaults } from '../cpu-usage.ts';
import { settleAfterLoad, statementStatistics } from '../database.ts';
import { median, progress, ratioRow, type Row, type ScenarioResult, type Settings } from '../measure.ts';
import { INSPECT_ARGS, inspectorUrl, settledMemory, type SettledMemory } from '../process-memory.ts';
import { freePort, startNode, type NodeProcess } from '../processes.ts';
import { startPushDrivers, type MergedRound } from '../push/drivers.ts';
import { resetStatements, statementsOver } from '../statements.ts';
import { callServer, cpuProfileArgs, metricsSample, startApiProcess, type MetricsSample } from './servers.ts';

/** BENCH_PUSH_VISITORS measures another number of connected visitors (1,000 was an earlier one). */
const VISITORS = Number(process.env.BENCH_PUSH_VISITORS) || 10_000;
/**
 * The ramp: each target's rate starts at BENCH_PUSH_RAMP_FROM messages/s and grows by
 * BENCH_PUSH_RAMP_FACTOR per step until a step misses (p99 at or over P99_LIMIT_MS, or any
 * message not answered 200 or never pushed), then narrows the gap between its last passing
 * and first missing rate BENCH_PUSH_RAMP_REFINE times (when the first step misses, it steps
 * down first). No rate above BENCH_PUSH_RAMP_MAX:
 * a visitor may send 20 messages a minute, so 10,000 visitors carry 3,333 a second at most.
 */
const RAMP_FROM = Number(process.env.BENCH_PUSH_RAMP_FROM) || 200;
const RAMP_FACTOR = Number(process.env.BENCH_PUSH_RAMP_FACTOR) || 1.2;
const RAMP_REFINE = Number(process.env.BENCH_PUSH_RAMP_REFINE ?? 2);
const RAMP_MAX = Math.min(Number(process.env.BENCH_PUSH_RAMP_MAX) || 3000, Math.floor((VISITORS * 20) / 60 / 1.1));
const P99_LIMIT_MS = 50;
/** The service's highest passing rate as a share of the relay's. */
const TARGET_RATIO = 0.6;
/** The rate of the unmeasured first message of each visitor (which creates its contact). */
const PRIMING_RATE = Math.min(500, RAMP_MAX);
/** Enough widgets that no widget's own message limit (600 a minute) is reached at the ramp's highest rate. */
const WIDGETS = Math.max(20, Math.ceil(RAMP_MAX / 10));
const WARM_UP_SECONDS = 2;
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

/** Over a step's samples: the event loop's longest stall, and the full (major) collections and their time. */
function stalls(samples: MetricsSample[]): { loopMaxMs?: number; gcMajor?: string } {
  if (samples.length < 2) return {};
  const first = samples[0]!;
  const last = samples.at(-1)!;
  const count = last.gcMajorCount - first.gcMajorCount;
  return {
    loopMaxMs: Math.round(Math.max(...samples.map((sample) => sample.loopMaxMs))),
    gcMajor: `${count} taking ${Math.round(last.gcMajorMs - first.gcMajorMs)} ms`,
  };
}

/** BENCH_PUSH_POOL: the service's DATABASE_POOL_SIZE (its default otherwise). */
const POOL_SIZE = process.env.BENCH_PUSH_POOL;
const POOL_SAMPLE_MS = 500;

type Round = MergedRound & {
  rate: number;
  serverCpuMs: number;
  postgresCpuMs: number;
  loopDelayP99: number;
  ms: number;
  pool: MetricsSample[];
  /** Page faults read from disk during the step: by the server process, and by the whole machine. */
  majorFaults: { server: number; machine: number };
  /** What PostgreSQL's statements took, per message (BENCH_PG_STATEMENTS=1; undefined otherwise). */
  statements?: string;
};

/** A step passes when its p99 is under the limit and every message was answered 200 and pushed. */
const passes = (round: Round) => round.p99 < P99_LIMIT_MS && round.errors + round.lost === 0 && round.sent > 0;

/** One target's ramp: its steps, the highest rate that passed (0: none yet) and the lowest that missed. */
type Ramp = { steps: Round[]; passed: number; missed: number | null; refined: number };

/** The ramp's next rate, or null when it is done. */
function nextRate(ramp: Ramp): number | null {
  if (ramp.missed === null) {
    if (ramp.steps.length === 0) return RAMP_FROM;
    const next = Math.round(ramp.passed * RAMP_FACTOR);
    return next > RAMP_MAX ? (ramp.passed < RAMP_MAX ? RAMP_MAX : null) : next;
  }
  // Nothing passed yet: down a step at a time, to the start's third step below at most.
  if (ramp.passed === 0) {
    const lower = Math.round(ramp.missed / RAMP_FACTOR);
    return lower >= Math.max(1, RAMP_FROM / RAMP_FACTOR ** 3) ? lower : null;
  }
  if (ramp.refined >= RAMP_REFINE) return null;
  const between = Math.round(Math.sqrt(ramp.passed * ramp.missed));
  return between > ramp.passed && between < ramp.missed ? between : null;
}

function record(ramp: Ramp, round: Round): void {
  if (ramp.missed !== null && ramp.passed > 0) ramp.refined += 1;
  ramp.steps.push(round);
  if (passes(round)) ramp.passed = Math.max(ramp.passed, round.rate);
  else ramp.missed = Math.min(ramp.missed ?? Infinity, round.rate);
}

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
    {
      PORT: String(relayPort),
      TLS_CERT_FILE: path.join(service.dataDir, 'tls-cert.pem'),
      TLS_KEY_FILE: path.join(service.dataDir, 'tls-key.pem'),
      // Durable: the message row committed before it is emitted.
      DATABASE_URL: databaseUrl,
      ...(POOL_SIZE ? { RELAY_POOL_SIZE: POOL_SIZE } : {}),
    },
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

    // Every visitor's first message creates its contact: done once before the ramp, so each step stores messages of known visitors.
    progress('push: one unmeasured message per service visitor (their contacts)');
    const priming = await drivers.round('service', servicePost, PRIMING_RATE, 0, VISITORS / PRIMING_RATE, 'p');
    progress(`push: priming ${JSON.stringify({ ...priming, firstError: priming.firstError || undefined })}`);
    // The priming's 10,000 new contacts, sessions and messages are cleaned up before the ramp,
    // as the event scenario does before each of its ramps: the steps measure messages, not
    // autovacuum and a checkpoint catching up with the priming.
    const settling = new pg.Client({ connectionString: databaseUrl });
    await settling.connect();
    try {
      await settleAfterLoad(settling);
    } finally {
      await settling.end();
    }

    // BENCH_PG_STATEMENTS=1: each step says which statements PostgreSQL's time went to.
    const statementsClient = statementStatistics ? new pg.Client({ connectionString: databaseUrl }) : null;
    await statementsClient?.connect();
    const measure = async (name: 'service' | 'bare', rate: number, tag: string): Promise<Round> => {
      const pid = name === 'service' ? servicePid : relayPid;
      if (name === 'service') await serviceLoopDelayP99(service.origin);
      if (statementsClient) await resetStatements(statementsClient);
      const started = performance.now();
      const cpu = processCpuMs(pid);
      const pgCpu = postgresCpuMs(postmaster);
      const faults = { server: processMajorFaults(pid), machine: machineMajorFaults() };
      // The service's pool, sampled through the step: whether messages wait for a connection.
      const pool: MetricsSample[] = [];
      const sampler =
        name === 'service'
          ? setInterval(() => void metricsSample(service.origin, METRICS_TOKEN).then((sample) => pool.push(sample), () => {}), POOL_SAMPLE_MS)
          : null;
      const result = await drivers.round(name, name === 'service' ? servicePost : '/relay', rate, WARM_UP_SECONDS, settings.durationSeconds, tag);
      if (sampler) clearInterval(sampler);
      return {
        ...result,
        rate,
        pool,
        serverCpuMs: processCpuMs(pid) - cpu,
        postgresCpuMs: postgresCpuMs(postmaster) - pgCpu,
        majorFaults: { server: processMajorFaults(pid) - faults.server, machine: machineMajorFaults() - faults.machine },
        ms: performance.now() - started,
        loopDelayP99: name === 'service' ? await serviceLoopDelayP99(service.origin) : NaN,
        // Over the warm-up too, as the statistics are.
        statements: statementsClient ? await statementsOver(statementsClient, Math.round(rate * (WARM_UP_SECONDS + settings.durationSeconds))) : undefined,
      };
    };
    // Both ramps in the same run, a step of each in turn, so the machine's other load falls on both alike.
    const ramps: Record<'service' | 'bare', Ramp> = {
      bare: { steps: [], passed: 0, missed: null, refined: 0 },
      service: { steps: [], passed: 0, missed: null, refined: 0 },
    };
    const brief = (r: Round) => ({ rate: r.rate, p50: r.p50, p99: r.p99, answeredP99: r.answeredP99, errors: r.errors, lost: r.lost, cpu: r.serverCpuMs / r.ms, pg: r.postgresCpuMs / r.ms, loop: r.loopDelayP99, ...stalls(r.pool), majorFaults: r.majorFaults, driverCpu: r.driverCpuShare, driverLoop: r.driverLoopDelayP99, codes: r.statusCodes, firstError: r.firstError || undefined, statements: r.statements });
    for (let step = 1; ; step++) {
      const due = (['bare', 'service'] as const).map((name) => [name, nextRate(ramps[name])] as const).filter(([, rate]) => rate !== null);
      if (due.length === 0) break;
      for (const [name, rate] of due) {
        progress(`push: step ${step}, ${name === 'bare' ? 'bare relay' : 'service'} at ${rate} messages/s`);
        const round = await measure(name, rate!, `${name[0]}${step}`);
        record(ramps[name], round);
        progress(`push: ${name} ${JSON.stringify(brief(round))}${passes(round) ? '' : ' (missed)'}`);
      }
    }
    await statementsClient?.end();
    await drivers.disconnect('bare');
    await drivers.disconnect('service');

    const serviceRate = ramps.service.passed;
    const bareRate = ramps.bare.passed;
    const ratio = bareRate === 0 ? NaN : serviceRate / bareRate;
    /** Each target's step at the service's highest passing rate (the bare relay's at the same rate or the nearest below). */
    const at = (name: 'service' | 'bare', rate: number) =>
      ramps[name].steps.filter((r) => r.rate <= rate && passes(r)).sort((a, b) => b.rate - a.rate)[0] ?? ramps[name].steps[0]!;
    const full = at('service', serviceRate);
    const bare = at('bare', full.rate);
    // A step's CPU covers its warm-up, measured part and the drain after it.
    const perMessage = (round: Round, pick: (r: Round) => number) => pick(round) / (round.rate * (WARM_UP_SECONDS + settings.durationSeconds));
    const share = (round: Round, pick: (r: Round) => number) => pick(round) / round.ms;
    const ceiling = (ramp: Ramp) => (ramp.missed === null ? ' (no step missed: the ramp\'s highest rate)' : '');
    const label = `push, ${VISITORS.toLocaleString('en')} visitors connected to one process`;
    const servicePerSocket = perSocket(memory.service, 'rss');
    const barePerSocket = perSocket(memory.bare, 'rss');
    const rows: Row[] = [
      {
        ...ratioRow(`${label}: highest message rate with p99 < ${P99_LIMIT_MS} ms (baseline: bare durable relay)`, 'messages/s', serviceRate, bareRate),
        // No rate of the relay passed: no ratio to give.
        ratio,
        target: `ratio ≥ ${TARGET_RATIO}`,
        met: ratio >= TARGET_RATIO,
      },
      ratioRow(`${label}, ${full.rate.toLocaleString('en')} messages/s: p50`, 'ms', full.p50, bare.p50),
      ratioRow(`${label}, ${full.rate.toLocaleString('en')} messages/s: p99`, 'ms', full.p99, bare.p99),
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
    const steps = (name: 'service' | 'bare') =>
      ramps[name].steps.map((r) => `${r.rate}/s p99 ${r.p99.toFixed(1)} ms (answered ${r.answeredP99.toFixed(1)}; major faults ${r.majorFaults.server}, machine ${r.majorFaults.machine})${r.errors + r.lost ? `, ${r.errors} errors, ${r.lost} lost` : ''}${passes(r) ? '' : ' (missed)'}`).join('; ');
    const poolSamples = full.pool;
    const waiting = poolSamples.map((sample) => sample.waiting).sort((a, b) => a - b);
    const allBusy = poolSamples.filter((sample) => sample.idle === 0).length / Math.max(1, poolSamples.length);
    const poolNote = poolSamples.length
      ? `The service's database pool (${POOL_SIZE ? `DATABASE_POOL_SIZE=${POOL_SIZE}` : 'its default size'}), sampled every ${POOL_SAMPLE_MS} ms through the service's step at ${full.rate.toLocaleString('en')} messages/s from /metrics (${poolSamples.length} samples): up to ${Math.max(...poolSamples.map((sample) => sample.total))} connections open, none idle in ${(allBusy * 100).toFixed(0)}% of samples; callers waiting for a connection: median ${median(waiting)}, p90 ${waiting[Math.floor(waiting.length * 0.9)]}, max ${waiting.at(-1)}.`
      : 'The service pool was not sampled.';
    const heap = (memory: Memory) => `${kib(perSocket(memory, 'heapUsed'))} KiB JavaScript heap and ${kib(perSocket(memory, 'external'))} KiB external (buffers) of it`;
    return {
      name: 'push',
      title: 'Chat-widget push latency and memory per socket: visitor message posted -> pushed to its socket',
      rows,
      notes: [
        `Service: \`node server/main.ts\` with ROLE=api; each message is a POST /v1/incoming-chat-widget-message that stores the message in one transaction and publishes it with pg_notify in a statement sent with its COMMIT (with the widgets' default settings a visitor's later message queues no bot turn: its turn would be silent); the process LISTENing emits it to the visitor's Socket.IO room. ${WIDGETS} widgets, ${VISITORS.toLocaleString('en')} visitors on WebSocket transport (TLS) held for the whole scenario. Before the ramp every visitor sends one unmeasured message (at ${PRIMING_RATE}/s), which creates its contact; then every table with more than 1,000 dead or changed rows is vacuumed and analysed and a checkpoint is taken, untimed.`,
        `The ramp: from ${RAMP_FROM} messages/s up by a factor ${RAMP_FACTOR} a step (BENCH_PUSH_RAMP_FROM, BENCH_PUSH_RAMP_FACTOR; at most ${RAMP_MAX}/s, BENCH_PUSH_RAMP_MAX) until a step misses (p99 ≥ ${P99_LIMIT_MS} ms, or a message not answered 200 or never pushed within 5 s), then up to ${RAMP_REFINE} more between the last passing and the first missing rate (BENCH_PUSH_RAMP_REFINE; when the first step misses, down a step at a time first); each step ${WARM_UP_SECONDS} s of the same traffic not measured, then ${settings.durationSeconds} s measured (BENCH_DURATION). The service and the relay step in turn through the same run. Service: ${steps('service')}${ceiling(ramps.service)}. Bare relay: ${steps('bare')}${ceiling(ramps.bare)}.`,
        `Baseline: bench/push/bare-relay.ts with DATABASE_URL, fastify over HTTPS with Socket.IO on the same server: it inserts the posted message as one row (a table made \`like messages\`: the same columns and indexes, no foreign keys) in one statement on a pool as large as the service's, committed durably, then emits it to the room; no authentication, no counting, no session. The visitors and the posts come from ${DRIVERS} driver processes (bench/push/driver.ts), each holding its share of the sockets to both servers and posting its share of the rate; latency is from the POST being sent to the socket receiving the message. Busiest driver during the service's step at ${full.rate.toLocaleString('en')}/s: ${full.driverCpuShare.toFixed(2)} of a core, event-loop delay p99 ${full.driverLoopDelayP99.toFixed(1)} ms (10 ms timer).`,
        `Memory per socket: VmRSS of the server process (/proc/<pid>/status) with the ${VISITORS.toLocaleString('en')} sockets connected and idle, minus VmRSS before any visitor connected, divided by ${VISITORS.toLocaleString('en')}; each reading after two full garbage collections forced over the inspector (the processes run with ${INSPECT_ARGS.join(' ')}). Service: ${Math.round(memory.service.before.rss / 2 ** 20)} MiB -> ${Math.round(memory.service.after.rss / 2 ** 20)} MiB, ${heap(memory.service)}; bare relay: ${Math.round(memory.bare.before.rss / 2 ** 20)} MiB -> ${Math.round(memory.bare.after.rss / 2 ** 20)} MiB, ${heap(memory.bare)}; the same relay over plain HTTP (no database): ${heap(memory.plain)}; the service with TLS=off: ${heap(memory.proxied)}. Beyond the JavaScript heap, the difference between HTTPS and plain HTTP is each connection's TLS state in Node and OpenSSL (${process.versions.openssl}).`,
        `Where the service's step at ${full.rate.toLocaleString('en')} messages/s spends its time (the machine's ${cpus().length} cores carry all of it, drivers and PostgreSQL included): the service process ${share(full, (r) => r.serverCpuMs).toFixed(2)} of a core, its event loop delayed p99 ${full.loopDelayP99.toFixed(1)} ms (prom-client's 10 ms timer, which an idle loop reads as about 10 ms); PostgreSQL ${share(full, (r) => r.postgresCpuMs).toFixed(2)} of a core; the busiest driver ${full.driverCpuShare.toFixed(2)}. The bare relay at ${bare.rate.toLocaleString('en')}/s used ${share(bare, (r) => r.serverCpuMs).toFixed(2)} of a core and PostgreSQL ${share(bare, (r) => r.postgresCpuMs).toFixed(2)}.`,
        `What bounds the rate: a message costs the service process ${perMessage(full, (r) => r.serverCpuMs).toFixed(2)} ms of CPU and PostgreSQL ${perMessage(full, (r) => r.postgresCpuMs).toFixed(2)} ms in three round trips for a returning visitor without an identity token (the widget read with the message counted; BEGIN with the contact's lock and the session read; the write with COMMIT and the announcement), and three commits (the count, the message, the announcement, which waits for no WAL flush); the relay's message one statement and one commit. Past the rate the cores give, posts wait in the drivers' connection pools or the database pool and p99 climbs; the service's CPU profile (BENCH_API_CPU_PROF) shows where its part goes.`,
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
