// Webhook fan-out benchmark: events written through the real outbox path (emit()
// inside transactions, many events per transaction, many transactions at once), a
// real worker process dispatching and sending signed HTTPS deliveries, and a loopback
// receiver timing their arrival.
//
// Per round, two phases on the same database and worker:
// - throughput: events offered faster than the target (OFFERED_DELIVERIES_PER_S) for
//   `durationSeconds`; deliveries/s = deliveries / (first event commit → last delivery received);
// - latency: events paced at LATENCY_DELIVERIES_PER_S (half the throughput target, so
//   the engine is loaded but not backlogged) for `durationSeconds`; per delivery, its
//   event's commit → its first attempt's arrival.
// Figures are medians over `rounds`.
//
// Run alone: `npm exec -- node bench/webhook-fanout.ts [rounds] [durationSeconds]`.
// BENCH_WORKER_CPU_PROF=<dir> runs the worker under --cpu-prof.
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
import { createLocalCa } from '../test/helpers/local-ca.ts';
import { startWorkerProcess } from './webhooks/worker-process.ts';

export type BenchRow = { name: string; value: number; unit: string; target?: string };

const ACCOUNTS = 20;
const SUBSCRIPTIONS_PER_ACCOUNT = 10;
const EVENT_NAME = 'Contact Created';
/** Events per emitting transaction, and transactions in flight at once. */
const EVENTS_PER_TRANSACTION = Number(process.env.BENCH_WEBHOOK_EVENTS_PER_TX ?? 10);
const CONCURRENT_TRANSACTIONS = Number(process.env.BENCH_WEBHOOK_CONCURRENT_TX ?? 8);
const OFFERED_DELIVERIES_PER_S = Number(process.env.BENCH_WEBHOOK_OFFERED ?? 4_000);
const LATENCY_DELIVERIES_PER_S = 1_000;
const TARGET_DELIVERIES_PER_S = 2_000;
const TARGET_P50_MS = 50;
const DRAIN_TIMEOUT_MS = 120_000;

type Phase = { events: number; deliveries: number; firstCommitMs: number; lastArrivalMs: number; latencies: number[]; emitSeconds: number };

export async function runWebhookFanout(options: { rounds: number; durationSeconds: number }): Promise<{ rows: BenchRow[] }> {
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
    const accountIds = await createSubscribedAccounts(services, receiver.origin, signingSecret);

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

    // Warm-up: connections, TLS sessions, JIT.
    await runPhase(services, receiver, accountIds, LATENCY_DELIVERIES_PER_S, 1);

    const throughputs: number[] = [];
    const p50s: number[] = [];
    const p99s: number[] = [];
    const burstP50s: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const burst = await runPhase(services, receiver, accountIds, OFFERED_DELIVERIES_PER_S, options.durationSeconds);
      throughputs.push(burst.deliveries / ((burst.lastArrivalMs - burst.firstCommitMs) / 1000));
      burstP50s.push(percentile(burst.latencies, 0.5));
      const paced = await runPhase(services, receiver, accountIds, LATENCY_DELIVERIES_PER_S, options.durationSeconds);
      p50s.push(percentile(paced.latencies, 0.5));
      p99s.push(percentile(paced.latencies, 0.99));
    }
    if (receiver.unsigned > 0 || receiver.badSignatures > 0) {
      throw new Error(`receiver saw ${receiver.unsigned} unsigned deliveries and ${receiver.badSignatures} bad signatures`);
    }
    await worker.stop();
    return {
      rows: [
        { name: `webhook fan-out: signed deliveries/s end to end (offered ${OFFERED_DELIVERIES_PER_S}/s, ${SUBSCRIPTIONS_PER_ACCOUNT} subscriptions per account)`, value: round1(median(throughputs)), unit: 'deliveries/s', target: `>= ${TARGET_DELIVERIES_PER_S}` },
        { name: `webhook fan-out: event commit -> first attempt p50 (at ${LATENCY_DELIVERIES_PER_S} deliveries/s)`, value: round1(median(p50s)), unit: 'ms', target: `< ${TARGET_P50_MS}` },
        { name: `webhook fan-out: event commit -> first attempt p99 (at ${LATENCY_DELIVERIES_PER_S} deliveries/s)`, value: round1(median(p99s)), unit: 'ms' },
        { name: `webhook fan-out: event commit -> first attempt p50 (offered ${OFFERED_DELIVERIES_PER_S}/s)`, value: round1(median(burstP50s)), unit: 'ms' },
      ],
    };
  } finally {
    await cleanup();
  }
}

/** Accounts with SUBSCRIPTIONS_PER_ACCOUNT signed subscriptions each, under distinct paths (distinct URLs). */
async function createSubscribedAccounts(services: Services, origin: string, signingSecret: string): Promise<string[]> {
  const sealed = services.secrets.seal(signingSecret);
  const accountIds: string[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const account = await createAccount(services.orm.em.fork(), services.secrets, { email: `bench-${a}-${Date.now()}@example.com` });
    accountIds.push(account.userId);
    for (let s = 0; s < SUBSCRIPTIONS_PER_ACCOUNT; s++) {
      const id = newId('wh');
      await services.pool.query(
        `insert into webhook_subscriptions (id, account_id, name, url, subscribed_to, subscribed_to_tags, retries_enabled, enabled, apply_to_sub_accounts, signing_secret_sealed, signing_secret_created_at)
         values ($1, $2, $3, $4, $5, '{}', true, true, false, $6, now())`,
        [id, account.userId, `bench ${id}`, `${origin}/hooks/${a}/${s}`, [EVENT_NAME], sealed],
      );
    }
  }
  return accountIds;
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
  }
  return { events: commits.size, deliveries: latencies.length, firstCommitMs, lastArrivalMs, latencies, emitSeconds };
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
  const { rows } = await runWebhookFanout({ rounds, durationSeconds });
  for (const row of rows) console.log(`${row.name}: ${row.value} ${row.unit}${row.target ? ` (target ${row.target})` : ''}`);
}
