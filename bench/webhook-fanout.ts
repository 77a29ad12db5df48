// Scenario `webhooks`: events through the real outbox to a real worker's signed deliveries,
// beside a bare sender (webhooks/bare-sender.ts) to the same loopback receiver; what each
// phase measures: docs/performance.md, What each scenario measures.
// Run alone: `npm exec -- node bench/webhook-fanout.ts [rounds] [durationSeconds]`.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMigrations } from 'graphile-worker';
import { createAccount } from '../server/accounts/create-account.ts';
import { loadConfig } from '../server/config.ts';
import { startEmbeddedPostgres } from '../server/db/embedded.ts';
import { newId } from '../server/db/ids.ts';
import { emit } from '../server/events/emit.ts';
import { createLogger } from '../server/log.ts';
import { createServices } from '../server/start-service.ts';
import type { Services } from '../server/process-services.ts';
import { mintSigningSecret } from '../server/webhooks/signature.ts';
import { nowMs, startBenchReceiver, type BenchReceiver } from './webhooks/receiver.ts';
import { SENDER_CLIENT_LIMITS } from '../server/webhooks/send-deliveries.ts';
import { createLocalCa } from '../test/helpers/local-ca.ts';
import { postgresCpuMs, postmasterPid, processCpuMs } from './cpu-usage.ts';
import { startBareSender, type BareRun, type BareSender, type BareSenderSettings } from './webhooks/bare-sender-process.ts';
import { sampleActivity } from './webhooks/pg-activity.ts';
import { startWorkerProcess } from './webhooks/worker-process.ts';

/** A figure; with `baseline`, the bare sender's figure, and the target is on value / baseline. */
export type BenchRow = { name: string; value: number; unit: string; baseline?: number; target?: string };

const ACCOUNTS = 20;
const SUBSCRIPTIONS_PER_ACCOUNT = 10;
const EVENT_NAME = 'Contact Created';
/** Events per emitting transaction, and transactions in flight at once. */
const EVENTS_PER_TRANSACTION = Number(process.env.BENCH_WEBHOOK_EVENTS_PER_TX ?? 10);
const CONCURRENT_TRANSACTIONS = Number(process.env.BENCH_WEBHOOK_CONCURRENT_TX ?? 8);
const WARM_UP_DELIVERIES_PER_S = 1_000;
/** Service deliveries/s over bare deliveries/s. */
const TARGET_RATIO = 0.5;
const TARGET_P50_MS = 50;
const DRAIN_TIMEOUT_MS = 120_000;

type Phase = { events: number; deliveries: number; firstCommitMs: number; lastArrivalMs: number; latencies: number[]; emitSeconds: number };

export async function runWebhookFanout(options: { rounds: number; durationSeconds: number }): Promise<{ rows: BenchRow[]; notes: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-webhooks-'));
  const cleanups: (() => Promise<unknown>)[] = [async () => rm(dir, { recursive: true, force: true })];
  const cleanup = async () => {
    for (const step of cleanups.splice(0).reverse()) await step().catch((error: unknown) => process.stderr.write(`bench cleanup: ${String(error)}\n`));
  };
  try {
    await mkdir(join(dir, 'db'));
    const database = await startEmbeddedPostgres({ dataDir: join(dir, 'db') });
    cleanups.push(() => database.stop());
    const secretKey = randomBytes(32).toString('hex');
    const config = loadConfig({ DATABASE_URL: database.url, DATA_DIR: join(dir, 'bench-data'), SECRET_KEY: secretKey, LOG_LEVEL: 'warn' });
    const services = await createServices(config, createLogger('warn'), database.url);
    cleanups.push(() => services.orm.close());
    await runMigrations({ connectionString: database.url });

    const tls = await createLocalCa({ dir, name: 'webhook fan-out bench', validForMs: 24 * 3600_000 });
    const signingSecret = mintSigningSecret();
    const receiver = await startBenchReceiver(tls, signingSecret);
    cleanups.push(() => receiver.close());
    const accounts = await createSubscribedAccounts(services, receiver.origin, signingSecret);

    const worker = await startWorkerProcess(
      {
        DATABASE_URL: database.url,
        DATA_DIR: join(dir, 'worker-data'),
        SECRET_KEY: secretKey,
        NODE_EXTRA_CA_CERTS: tls.caFile,
        WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1',
      },
      { cpuProfDir: process.env.BENCH_WORKER_CPU_PROF },
    );
    cleanups.push(() => worker.stop());
    const bare = await startBareSender(
      { accounts, secret: signingSecret, concurrency: SENDER_CLIENT_LIMITS.maxConcurrentPerOrigin },
      { NODE_EXTRA_CA_CERTS: tls.caFile },
    );
    cleanups.push(() => bare.stop());
    const accountIds = accounts.map((account) => account.id);
    const cpu = cpuMeter({ worker: worker.child.pid!, bare: bare.pid, postmaster: await postmasterPid(database.url) });

    // Warm-up: connections, TLS sessions, JIT.
    await runBare(bare, receiver, 1);
    await runPhase(services, receiver, accountIds, WARM_UP_DELIVERIES_PER_S, 1);

    const bareRates: number[] = [];
    const throughputs: number[] = [];
    const pacedRates: number[] = [];
    const p50s: number[] = [];
    const p99s: number[] = [];
    const burstP50s: number[] = [];
    const bareCpu: CpuPerDelivery[] = [];
    const serviceCpu: CpuPerDelivery[] = [];
    for (let round = 0; round < options.rounds; round++) {
      let started = cpu.now();
      const bareRun = await runBare(bare, receiver, options.durationSeconds);
      const bareRate = bareRun.deliveries / bareRun.seconds;
      bareRates.push(bareRate);
      bareCpu.push(cpu.perDelivery(started, bareRun.deliveries));
      started = cpu.now();
      const sampler = process.env.BENCH_PG_SAMPLE ? await sampleActivity(database.url) : null;
      const burst = await runPhase(services, receiver, accountIds, bareRate, options.durationSeconds);
      serviceCpu.push(cpu.perDelivery(started, burst.deliveries));
      if (sampler) process.stderr.write(`${await sampler.stop()}\n`);
      if (process.env.BENCH_VERBOSE) process.stderr.write(`CPU µs/delivery: bare ${JSON.stringify(roundAll(bareCpu.at(-1)!))}, service ${JSON.stringify(roundAll(serviceCpu.at(-1)!))}\n`);
      const sustained = burst.deliveries / ((burst.lastArrivalMs - burst.firstCommitMs) / 1000);
      throughputs.push(sustained);
      burstP50s.push(percentile(burst.latencies, 0.5));
      // The latency phase is offered half the rate the service itself sustained this round:
      // half the bare rate may be past its capacity, and would then measure only the backlog.
      pacedRates.push(sustained / 2);
      const paced = await runPhase(services, receiver, accountIds, sustained / 2, options.durationSeconds);
      p50s.push(percentile(paced.latencies, 0.5));
      p99s.push(percentile(paced.latencies, 0.99));
    }
    if (receiver.unsigned > 0 || receiver.badSignatures > 0) {
      throw new Error(`receiver saw ${receiver.unsigned} unsigned deliveries and ${receiver.badSignatures} bad signatures`);
    }
    await worker.stop();
    const concurrency = SENDER_CLIENT_LIMITS.maxConcurrentPerOrigin;
    return {
      rows: [
        {
          name: `webhook fan-out: signed deliveries/s end to end, service vs bare sender (offered the bare rate, ${SUBSCRIPTIONS_PER_ACCOUNT} subscriptions per account, ${concurrency} in flight)`,
          value: round1(median(throughputs)),
          unit: 'deliveries/s',
          baseline: round1(median(bareRates)),
          target: `ratio >= ${TARGET_RATIO}`,
        },
        { name: 'webhook fan-out: event commit -> first attempt p50 (at half the service\'s sustained rate)', value: round1(median(p50s)), unit: 'ms', target: `< ${TARGET_P50_MS}` },
        { name: 'webhook fan-out: event commit -> first attempt p99 (at half the service\'s sustained rate)', value: round1(median(p99s)), unit: 'ms' },
        { name: 'webhook fan-out: event commit -> first attempt p50 (offered the bare rate)', value: round1(median(burstP50s)), unit: 'ms' },
      ],
      notes: [
        `Bare sender: bench/webhooks/bare-sender.ts, its own process, signing (server/webhooks/signature.ts) and POSTing the same payloads to the same receiver with undici, ${concurrency} requests in flight; rounds alternate bare, service offered the bare rate, service offered half the rate it sustained in that phase.`,
        `Bare rates per round: ${bareRates.map((rate) => Math.round(rate)).join(', ')} deliveries/s; the latency phase was offered ${pacedRates.map((rate) => Math.round(rate)).join(', ')} deliveries/s.`,
        `CPU per delivery (medians, µs): bare: sender ${medianOf(bareCpu, 'bare')}, bench process (receiver) ${medianOf(bareCpu, 'bench')}; ` +
          `service at the bare rate: worker ${medianOf(serviceCpu, 'worker')}, PostgreSQL ${medianOf(serviceCpu, 'postgres')}, bench process (receiver and event writer) ${medianOf(serviceCpu, 'bench')}.`,
      ],
    };
  } finally {
    await cleanup();
  }
}

type CpuPerDelivery = { bench: number; worker: number; bare: number; postgres: number };

/** CPU time of each process taking part, so a figure says where a delivery's time goes. */
function cpuMeter(pids: { worker: number; bare: number; postmaster: number }) {
  const now = (): CpuPerDelivery => {
    const own = process.cpuUsage();
    return { bench: (own.user + own.system) / 1000, worker: processCpuMs(pids.worker), bare: processCpuMs(pids.bare), postgres: postgresCpuMs(pids.postmaster) };
  };
  return {
    now,
    /** Microseconds of CPU per delivery since `since`. */
    perDelivery(since: CpuPerDelivery, deliveries: number): CpuPerDelivery {
      const end = now();
      const per = (key: keyof CpuPerDelivery) => ((end[key] - since[key]) * 1000) / Math.max(1, deliveries);
      return { bench: per('bench'), worker: per('worker'), bare: per('bare'), postgres: per('postgres') };
    },
  };
}

function roundAll(sample: CpuPerDelivery): CpuPerDelivery {
  return { bench: Math.round(sample.bench), worker: Math.round(sample.worker), bare: Math.round(sample.bare), postgres: Math.round(sample.postgres) };
}

function medianOf(samples: CpuPerDelivery[], key: keyof CpuPerDelivery): number {
  return Math.round(median(samples.map((sample) => sample[key])));
}

/** Runs the bare sender for `seconds`, and returns once the receiver has every delivery it made. */
async function runBare(bare: BareSender, receiver: BenchReceiver, seconds: number): Promise<BareRun> {
  receiver.reset();
  const run = await bare.run(seconds);
  if (run.failures > 0) throw new Error(`bare sender: ${run.failures} deliveries failed`);
  await receiver.waitForDeliveries(run.deliveries, DRAIN_TIMEOUT_MS);
  if (process.env.BENCH_VERBOSE) process.stderr.write(`bare: ${run.deliveries} deliveries in ${run.seconds.toFixed(2)} s, ${Math.round(run.deliveries / run.seconds)}/s\n`);
  return run;
}

/** Accounts with SUBSCRIPTIONS_PER_ACCOUNT signed subscriptions each, under distinct paths (distinct URLs). */
async function createSubscribedAccounts(services: Services, origin: string, signingSecret: string): Promise<BareSenderSettings['accounts']> {
  const sealed = services.secrets.seal(signingSecret);
  const accounts: BareSenderSettings['accounts'] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const email = `bench-${a}-${Date.now()}@example.com`;
    const account = await createAccount(services.orm.em.fork(), services.secrets, { email });
    const urls: string[] = [];
    accounts.push({ id: account.userId, email, urls });
    for (let s = 0; s < SUBSCRIPTIONS_PER_ACCOUNT; s++) {
      const id = newId('wh');
      urls.push(`${origin}/hooks/${a}/${s}`);
      await services.pool.query(
        `insert into webhook_subscriptions (id, account_id, name, url, subscribed_to, subscribed_to_tags, retries_enabled, enabled, apply_to_sub_accounts, signing_secret_sealed, signing_secret_created_at)
         values ($1, $2, $3, $4, $5, '{}', true, true, false, $6, now())`,
        [id, account.userId, `bench ${id}`, urls[s], [EVENT_NAME], sealed],
      );
    }
  }
  return accounts;
}

/**
 * Emits events at `deliveriesPerSecond / SUBSCRIPTIONS_PER_ACCOUNT` events/s (as fast as the
 * database allows when it cannot keep up) for `seconds`, then waits for every delivery.
 */
async function runPhase(services: Services, receiver: BenchReceiver, accountIds: string[], deliveriesPerSecond: number, seconds: number): Promise<Phase> {
  receiver.reset();
  const commits = new Map<string, number>();
  const eventsPerSecond = deliveriesPerSecond / SUBSCRIPTIONS_PER_ACCOUNT;
  const totalTransactions = Math.max(1, Math.round((eventsPerSecond * seconds) / EVENTS_PER_TRANSACTION));
  const started = nowMs();
  let next = 0;
  const emitter = async () => {
    for (;;) {
      const index = next++;
      if (index >= totalTransactions) return;
      // Open loop: transaction `index` is due at its slot, not after the previous one.
      const dueMs = started + (index * EVENTS_PER_TRANSACTION * 1000) / eventsPerSecond;
      const waitMs = dueMs - nowMs();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      const accountId = accountIds[index % accountIds.length];
      const ids = await services.orm.em.fork().transactional(async (tx) => {
        const emitted: string[] = [];
        for (let e = 0; e < EVENTS_PER_TRANSACTION; e++) {
          emitted.push(await emit(tx, accountId, EVENT_NAME, { contact: { id: newId('ct'), phone_number: '+14155550100', email: null, lists: [] } }));
        }
        return emitted;
      });
      const committedMs = nowMs();
      for (const id of ids) commits.set(id, committedMs);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_TRANSACTIONS }, emitter));
  const emitSeconds = (nowMs() - started) / 1000;
  const expected = commits.size * SUBSCRIPTIONS_PER_ACCOUNT;
  await receiver.waitForDeliveries(expected, DRAIN_TIMEOUT_MS);

  let firstCommitMs = Infinity;
  for (const at of commits.values()) firstCommitMs = Math.min(firstCommitMs, at);
  let lastArrivalMs = 0;
  const latencies: number[] = [];
  for (const arrival of receiver.arrivals.values()) {
    const committedMs = commits.get(arrival.eventId);
    if (committedMs === undefined) continue;
    lastArrivalMs = Math.max(lastArrivalMs, arrival.atMs);
    latencies.push(arrival.atMs - committedMs);
  }
  if (process.env.BENCH_VERBOSE) {
    process.stderr.write(`phase ${deliveriesPerSecond}/s: ${commits.size} events in ${emitSeconds.toFixed(2)} s, ${latencies.length} deliveries, span ${((lastArrivalMs - firstCommitMs) / 1000).toFixed(2)} s, p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms\n`);
    process.stderr.write(`${await latencyLegs(services, receiver, commits)}\n`);
  }
  return { events: commits.size, deliveries: latencies.length, firstCommitMs, lastArrivalMs, latencies, emitSeconds };
}

/**
 * Where the latency goes, per delivery: event commit -> the start of the transaction that made
 * its first attempt (the attempt row's time) -> arrival.
 */
async function latencyLegs(services: Services, receiver: BenchReceiver, commits: Map<string, number>): Promise<string> {
  const ids = [...receiver.arrivals.keys()];
  const { rows } = await services.pool.query<{ id: string; roundMs: number }>(
    `select delivery_id as id, extract(epoch from created_at) * 1000 as "roundMs"
     from webhook_attempts where delivery_id = any ($1::text[]) and attempt = 1`,
    [ids],
  );
  const toRound: number[] = [];
  const toArrival: number[] = [];
  for (const row of rows) {
    const arrival = receiver.arrivals.get(row.id)!;
    const committedMs = commits.get(arrival.eventId);
    if (committedMs === undefined) continue;
    toRound.push(Number(row.roundMs) - committedMs);
    toArrival.push(arrival.atMs - Number(row.roundMs));
  }
  const legs = (values: number[]) => `p50 ${percentile(values, 0.5).toFixed(1)} / p99 ${percentile(values, 0.99).toFixed(1)} ms`;
  return `  commit -> first attempt's round ${legs(toRound)}; round -> arrival ${legs(toArrival)}`;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

function median(values: number[]): number {
  return percentile(values, 0.5);
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

if (import.meta.main) {
  const rounds = Number(process.argv[2] ?? 3);
  const durationSeconds = Number(process.argv[3] ?? 5);
  const { rows, notes } = await runWebhookFanout({ rounds, durationSeconds });
  for (const row of rows) {
    const baseline = row.baseline === undefined ? '' : ` vs bare ${row.baseline} (ratio ${round1((row.value / row.baseline) * 100) / 100})`;
    console.log(`${row.name}: ${row.value} ${row.unit}${baseline}${row.target ? ` (target ${row.target})` : ''}`);
  }
  for (const note of notes) console.log(note);
}
