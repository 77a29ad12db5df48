// Scenario `events`: the event ceiling, the highest rate of event-writing requests with p99
// under 100 ms, beside bench/bare-server.ts in BARE_MODE=silent-writes, sampling what bounds it
// (docs/performance.md, What each scenario measures). BENCH_EVENTS_BEFORE=<directory> ramps
// another checkout in the same rounds, so a change is measured before and after in one run.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { request, Agent } from 'undici';
import { createAccount } from '../../server/accounts/create-account.ts';
import { loadConfig } from '../../server/config.ts';
import { newId } from '../../server/db/ids.ts';
import { createLogger } from '../../server/log.ts';
import { createServices } from '../../server/start-service.ts';
import { mintSigningSecret } from '../../server/webhooks/signature.ts';
import { createLocalCa } from '../../test/helpers/local-ca.ts';
import { postgresCpuMs, postmasterPid, processCpuMs } from '../cpu-usage.ts';
import { BENCH_SECRET_KEY, settleAfterLoad, statementStatistics } from '../database.ts';
import { resetStatements, statementsOver } from '../statements.ts';
import type { DriverResult, DriverSpec } from '../events/driver.ts';
import { median, progress, ratioRow, type ScenarioResult, type Settings } from '../measure.ts';
import { atCleanup, runNode, tempDir, type NodeProcess } from '../processes.ts';
import { startBenchReceiver } from '../webhooks/receiver.ts';
import { metricsSample, startApiProcess, type MetricsSample, startBareServer, startWorkerRole, type StartedServer } from './servers.ts';

const P99_LIMIT_MS = 100;
const TARGET_RATIO = 0.75;
/** Accounts per side: contact creates rotate over all, so each key stays far under 300 per minute. */
const ACCOUNTS = 120;
/** Widgets per side (one per account): visitor messages rotate over them, each far under 600 per minute. */
const WIDGETS = 60;
const SOURCE_ADDRESSES = 32;
const EVENT_NAMES = ['Contact Created', 'New Message', 'Replies'];
const FIRST_RATE = 20;
const RATE_FACTOR = 1.4;
const MIN_RATE = 5;
const MAX_RATE = 4_000;
const DRAIN_TIMEOUT_MS = 30_000;
const DELIVERY_TIMEOUT_MS = 60_000;
const SAMPLE_EVERY_MS = 20;
const METRICS_TOKEN = 'bench-events-metrics-token';

/** How long after the last slow request's due moment describeStall still reads the samples. */
const SLOW_WINDOW_MS = 300;
/**
 * Requests a step measures at least: a p99 over fewer than 100 requests is their slowest
 * one, so at low rates one stray wait (a WAL flush, a background sweep) would end a ramp.
 */
const MIN_MEASURED = 400;
/** Unmeasured load at the first rate before each ramp. */
const WARMUP_RAMP_SECONDS = 5;
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

type Side = 'service' | 'before' | 'bare';
type Account = { accountId: string; apiKey: string; listId: string };
type Step = {
  rate: number;
  result: DriverResult;
  passed: boolean;
  /** CPU of each process over the step, as a share of one core. */
  cpu: Record<string, number>;
  commitsPerSecond: number;
  /** Checkpoints PostgreSQL began during the step (timed or requested, by WAL volume among others). */
  checkpoints: number;
  /** Mean number of active client sessions in each wait state (`CPU` when waiting on nothing). */
  waits: Record<string, number>;
  /** The database while the slow requests were due (describeStall), empty when none was slow. */
  stall: string;
  /** Graphile Worker jobs added per second over the step (the worker's own and the triggers'). */
  jobsPerSecond: number;
  /**
   * The API process's event loop over the step: longest delay, ms, and full collections. From
   * its /metrics scraped as the step starts and as it ends: prom-client's longest delay is
   * since the scrape before, so two scrapes cover the step, and each scrape also reads the
   * deployment's figures from PostgreSQL (the last five minutes of webhook attempts among them,
   * tens of ms at these rates), load the service would not otherwise carry.
   */
  api: { loopMaxMs: number; gcMajor: number; gcMajorMs: number } | null;
  /** What PostgreSQL's statements took over the step, per request (BENCH_PG_STATEMENTS=1; empty otherwise). */
  statements: string;
  /** The same rate's first try, when it missed and this step is its repeat. */
  firstTry?: Step;
};
type Ramp = { side: Side; ceiling: number; steps: Step[] };

/** The rates a ramp offers: FIRST_RATE, then each RATE_FACTOR times the one before. */
function ladder(): number[] {
  const rates: number[] = [];
  for (let rate = FIRST_RATE; rate <= MAX_RATE; rate *= RATE_FACTOR) rates.push(Math.round(rate));
  return rates;
}

async function api(origin: string, pathname: string, apiKey: string, body: unknown): Promise<Record<string, any>> {
  const response = await request(origin + pathname, {
    method: 'POST',
    dispatcher: insecure,
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(body),
  });
  const json = (await response.body.json()) as Record<string, any>;
  if (response.statusCode >= 300) throw new Error(`POST ${pathname}: ${response.statusCode} ${JSON.stringify(json)}`);
  return json;
}

/** What one sample of pg_stat_activity saw: when, and each active client session's wait state and statement. */
type ActivitySample = { at: number; sessions: { state: string; query: string }[] };

/**
 * Samples pg_stat_activity's active client sessions until stopped; returns the mean count per
 * wait state, and every sample, so a stall's window can be read back (describeStall).
 */
function sampleWaits(databaseUrl: string): { stop(): Promise<{ means: Record<string, number>; timeline: ActivitySample[] }> } {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-wait-sampler' });
  const counts: Record<string, number> = {};
  const timeline: ActivitySample[] = [];
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      // Autovacuum's workers are read for the timeline only, named in place of their wait state.
      const { rows } = await client.query<{ state: string; query: string; client: boolean }>(
        `select case when backend_type = 'client backend' then coalesce(wait_event_type || ':' || wait_event, 'CPU') else 'autovacuum' end as state,
                left(regexp_replace(query, '\\s+', ' ', 'g'), 70) as query, backend_type = 'client backend' as client
           from pg_stat_activity
          where backend_type in ('client backend', 'autovacuum worker') and state = 'active' and pid <> pg_backend_pid()`,
      );
      timeline.push({ at: Date.now(), sessions: rows });
      for (const row of rows) if (row.client) counts[row.state] = (counts[row.state] ?? 0) + 1;
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop.catch(() => {});
      await client.end().catch(() => {});
      const means: Record<string, number> = {};
      for (const [state, count] of Object.entries(counts)) means[state] = count / Math.max(1, timeline.length);
      return { means, timeline };
    },
  };
}

/**
 * Where the database was while a step's slow requests were due: the samples from the first
 * slow request's due moment to SLOW_WINDOW_MS after the last, their most active sessions
 * (mean count per sample, by wait state and statement) and the most any one sample saw.
 */
function describeStall(result: DriverResult, timeline: ActivitySample[]): string {
  if (result.slow.count === 0) return '';
  const window = timeline.filter((sample) => sample.at >= result.slow.firstDue && sample.at <= result.slow.lastDue + SLOW_WINDOW_MS);
  const seconds = (result.slow.lastDue - result.slow.firstDue) / 1000;
  const when = new Date(result.slow.firstDue).toISOString().slice(11, 23);
  const groups: Record<string, number> = {};
  for (const sample of window) for (const session of sample.sessions) groups[`${session.state} ${session.query}`] = (groups[`${session.state} ${session.query}`] ?? 0) + 1;
  const most = Object.entries(groups)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([what, count]) => `${(count / Math.max(1, window.length)).toFixed(1)} ${what}`)
    .join('; ');
  const peak = Math.max(0, ...window.map((sample) => sample.sessions.length));
  return `; ${result.slow.count} request(s) of ${result.all.count} took ≥ 100 ms, due from ${when} UTC over ${seconds.toFixed(2)} s; then ${window.length} samples, at most ${peak} active sessions, most: ${most || 'none'}`;
}

/** Jobs ever added to Graphile Worker's queue (its id sequence; completed jobs are deleted). */
async function jobsAdded(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string | null }>(`select pg_sequence_last_value(pg_get_serial_sequence('graphile_worker._private_jobs', 'id')) as n`);
  return Number(rows[0]!.n ?? 0);
}

async function commits(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('select xact_commit as n from pg_stat_database where datname = current_database()');
  return Number(rows[0]!.n);
}

/** Checkpoints the cluster has begun since its statistics were reset (PostgreSQL 17 and later). */
async function checkpointsBegun(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('select num_timed + num_requested as n from pg_stat_checkpointer');
  return Number(rows[0]!.n);
}

function topWaits(waits: Record<string, number>, count = 4): string {
  return Object.entries(waits)
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([state, mean]) => `${state} ${mean.toFixed(1)}`)
    .join(', ');
}

/** Over a step's samples: the API's longest event-loop delay, and the full collections it made and their time. */
function apiOver(samples: MetricsSample[]): Step['api'] {
  if (samples.length < 2) return null;
  const first = samples[0]!;
  const last = samples.at(-1)!;
  return { loopMaxMs: Math.max(...samples.slice(1).map((sample) => sample.loopMaxMs)), gcMajor: last.gcMajorCount - first.gcMajorCount, gcMajorMs: last.gcMajorMs - first.gcMajorMs };
}

function describeStep(step: Step): string {
  const cpu = Object.entries(step.cpu)
    .map(([name, share]) => `${name} ${Math.round(share * 100)}%`)
    .join(', ');
  const failed = step.result.all.failed ? `, ${step.result.all.failed} failed (${step.result.firstError.slice(0, 80)})` : '';
  const first = step.firstTry ? ` (missed once first: p99 ${step.firstTry.result.all.p99.toFixed(1)} ms${step.firstTry.stall})` : '';
  return `${step.rate}/s${first}: p50 ${step.result.all.p50.toFixed(1)} ms, p99 ${step.result.all.p99.toFixed(1)} ms (messages ${step.result.message.p99.toFixed(1)}, contacts ${step.result.contact.p99.toFixed(1)})${failed}; CPU ${cpu}; ${Math.round(step.commitsPerSecond)} commits/s, ${Math.round(step.jobsPerSecond)} jobs added/s; ${step.checkpoints} checkpoint(s) begun; active sessions: ${topWaits(step.waits)}; event loop's longest delay: driver ${step.result.loopDelay.max.toFixed(0)} ms${step.api ? `, api ${step.api.loopMaxMs.toFixed(0)} ms (${step.api.gcMajor} full collection(s), ${step.api.gcMajorMs.toFixed(0)} ms)` : ''}${step.statements}${step.stall}`;
}

export async function runEventsScenario(settings: Settings, databaseUrl: string): Promise<ScenarioResult> {
  const rounds = Math.min(settings.rounds, 2);
  const measureSeconds = Math.min(5, Math.max(2, Math.round(settings.durationSeconds * 0.4)));
  const warmupSeconds = 1;
  const dir = await tempDir('events');
  const config = loadConfig({ DATABASE_URL: databaseUrl, DATA_DIR: path.join(dir, 'setup'), SECRET_KEY: BENCH_SECRET_KEY, LOG_LEVEL: 'warn' });
  const services = await createServices(config, createLogger('warn'), databaseUrl);
  atCleanup(() => services.orm.close());
  const pool = services.pool;

  progress('events: webhook receiver and the processes');
  const tls = await createLocalCa({ dir, name: 'events bench', validForMs: 24 * 3600_000 });
  const signingSecret = mintSigningSecret();
  const receiver = await startBenchReceiver(tls, signingSecret);
  atCleanup(() => receiver.close());
  const beforeTree = process.env.BENCH_EVENTS_BEFORE || null;
  // Visitors come from many loopback addresses; no per-address limit should refuse the bench.
  const many = '1000000';
  const apiEnv = {
    WIDGET_REQUESTS_PER_IP_PER_MINUTE: many,
    WIDGET_MESSAGES_PER_IP_PER_MINUTE: many,
    WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE: many,
    WIDGET_SOCKETS_PER_IP: many,
    METRICS_TOKEN,
  };
  const workerEnv = { NODE_EXTRA_CA_CERTS: tls.caFile, WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' };
  // Each service side's API process runs for the whole scenario (so every ramp meets a warm
  // one); its worker runs only during that side's ramps, so one worker at a time takes jobs.
  const apis: Partial<Record<Side, StartedServer>> = { service: await startApiProcess(databaseUrl, apiEnv) };
  if (beforeTree) apis.before = await startApiProcess(databaseUrl, apiEnv, [], beforeTree);
  const startStack = async (side: Side): Promise<{ origin: string; processes: { name: string; pid: number }[]; stop(): Promise<void> }> => {
    const worker: NodeProcess = await startWorkerRole(databaseUrl, workerEnv, side === 'before' ? beforeTree! : undefined);
    const api = apis[side]!;
    return {
      origin: api.origin,
      processes: [
        { name: 'api', pid: api.process.child.pid! },
        { name: 'worker', pid: worker.child.pid! },
      ],
      stop: () => worker.stop(),
    };
  };
  const setupOrigin = apis.service!.origin;
  const bare = await startBareServer(databaseUrl, apis.service!.dataDir, 'silent-writes');

  progress(`events: ${ACCOUNTS} accounts with a webhook subscription, ${ACCOUNTS} without`);
  const runId = randomBytes(4).toString('hex');
  const createAccounts = async (side: Side): Promise<Account[]> => {
    const accounts: Account[] = [];
    for (let index = 0; index < ACCOUNTS; index++) {
      const created = await createAccount(services.orm.em.fork(), services.secrets, { email: `events-${side}-${runId}-${index}@example.com` });
      accounts.push({ accountId: created.userId, apiKey: created.apiKey, listId: newId('lst') });
    }
    await pool.query(`insert into lists (id, account_id, name) select * from unnest($1::text[], $2::text[], $3::text[])`, [
      accounts.map((account) => account.listId),
      accounts.map((account) => account.accountId),
      accounts.map(() => 'Events bench list'),
    ]);
    return accounts;
  };
  const accounts: Record<Side, Account[]> = { service: await createAccounts('service'), before: [], bare: await createAccounts('bare') };
  const sealed = services.secrets.seal(signingSecret);
  for (const [index, account] of accounts.service.entries()) {
    await pool.query(
      `insert into webhook_subscriptions (id, account_id, name, url, subscribed_to, subscribed_to_tags, retries_enabled, enabled, apply_to_sub_accounts, signing_secret_sealed, signing_secret_created_at)
       values ($1, $2, 'events bench', $3, $4, '{}', true, true, false, $5, now())`,
      [newId('wh'), account.accountId, `${receiver.origin}/hooks/${index}`, EVENT_NAMES, sealed],
    );
  }
  accounts.before = accounts.service;
  const widgets: Record<Side, { id: string; ownerId: string }[]> = { service: [], before: [], bare: [] };
  for (const side of ['service', 'bare'] as const) {
    for (const account of accounts[side].slice(0, WIDGETS)) {
      const created = await api(setupOrigin, '/v1/chat-widgets', account.apiKey, { name: `events bench ${side}`, settings: {} });
      widgets[side].push({ id: created.data.id, ownerId: account.accountId });
    }
  }
  widgets.before = widgets.service;

  const postmaster = await postmasterPid(databaseUrl);
  // The side being ramped: its origin and the processes whose CPU each step reads.
  let target: { origin: string; processes: { name: string; pid: number }[] } = { origin: '', processes: [] };
  const serviceAccountIds = accounts.service.map((account) => account.accountId);
  const bareAccountIds = accounts.bare.map((account) => account.accountId);

  // What one side's steps leave behind, cleared before the next step is measured.
  const settle = async (side: Side) => {
    if (side === 'bare') {
      // The silent job rows name no task a worker runs, and the bare events are the outbox's
      // to mark (its accounts subscribe to nothing): cleared here, untimed, instead of by the
      // per-minute safety net in the middle of a later step.
      await pool.query(`delete from graphile_worker._private_jobs where key like 'bench_silent_turn:%'`);
      await pool.query(`update events set dispatched_at = now() where dispatched_at is null and account_id = any($1::text[])`, [bareAccountIds]);
      return;
    }
    // The worker catches up (bot turns, dispatch, deliveries) before the next step starts.
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    for (;;) {
      const { rows } = await pool.query<{ jobs: number; events: number }>(
        `select (select count(*) from graphile_worker._private_jobs where run_at <= now() and attempts < max_attempts)::int as jobs,
                (select count(*) from events where dispatched_at is null and account_id = any($1::text[]))::int as events`,
        [serviceAccountIds],
      );
      if ((rows[0]!.jobs === 0 && rows[0]!.events === 0) || Date.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  let phones = 0;
  let stepNumber = 0;
  // Each run of the driver has new visitors and new phone numbers (the driver reports how many it used).
  const stepSpec = (side: Side, rate: number): DriverSpec => {
    const measured = Math.max(measureSeconds, Math.ceil(MIN_MEASURED / rate));
    const spec = {
      origin: target.origin,
      rate,
      warmupSeconds,
      measureSeconds: measured,
      widgets: widgets[side],
      accounts: accounts[side],
      visitorPrefix: `${runId}s${stepNumber++}`,
      phoneStart: phones,
      addresses: SOURCE_ADDRESSES,
    };
    // Generously past what the run will use: its contacts are counted only after it ends.
    phones += Math.ceil(rate * (WARMUP_RAMP_SECONDS + measured + 1));
    return spec;
  };
  const measureStep = async (side: Side, rate: number): Promise<Step> => {
    const spec = stepSpec(side, rate);
    const cpuBefore = target.processes.map((process) => processCpuMs(process.pid));
    const postgresBefore = postgresCpuMs(postmaster);
    const commitsBefore = await commits(pool);
    const checkpointsBefore = await checkpointsBegun(pool);
    const jobsBefore = await jobsAdded(pool);
    if (statementStatistics) await resetStatements(pool);
    const started = performance.now();
    const sampler = sampleWaits(databaseUrl);
    const apiOrigin = side === 'bare' ? null : target.origin;
    const apiSamples: MetricsSample[] = [];
    if (apiOrigin) apiSamples.push(await metricsSample(apiOrigin, METRICS_TOKEN));
    const output = await runNode('bench/events/driver.ts', [JSON.stringify(spec)]);
    if (apiOrigin) apiSamples.push(await metricsSample(apiOrigin, METRICS_TOKEN));
    const { means: waits, timeline } = await sampler.stop();
    const seconds = (performance.now() - started) / 1000;
    const result = JSON.parse(output.trim().split('\n').at(-1)!) as DriverResult;
    const cpu: Record<string, number> = { postgres: (postgresCpuMs(postmaster) - postgresBefore) / 1000 / seconds };
    target.processes.forEach((process, index) => (cpu[process.name] = (processCpuMs(process.pid) - cpuBefore[index]!) / 1000 / seconds));
    const commitsPerSecond = ((await commits(pool)) - commitsBefore) / seconds;
    const checkpoints = (await checkpointsBegun(pool)) - checkpointsBefore;
    const jobsPerSecond = ((await jobsAdded(pool)) - jobsBefore) / seconds;
    const statements = statementStatistics ? `; ${await statementsOver(pool, result.sent)}` : '';
    await settle(side);
    const passed = result.all.p99 < P99_LIMIT_MS && result.all.failed === 0;
    const step = { rate, result, passed, cpu, commitsPerSecond, checkpoints, waits, stall: describeStall(result, timeline), jobsPerSecond, api: apiOver(apiSamples), statements };
    progress(`events: ${side} ${describeStep(step)}`);
    return step;
  };
  /**
   * A rate is missed only when it misses twice in a row: one stall of the machine's disk (a
   * WAL flush held up for a few hundred ms, seen on either side as commits waiting on
   * LWLock:WALWrite) otherwise ends a ramp wherever it lands, whatever the rate.
   */
  const runStep = async (side: Side, rate: number): Promise<Step> => {
    const step = await measureStep(side, rate);
    if (step.passed) return step;
    return { ...(await measureStep(side, rate)), firstTry: step };
  };

  /** Steps up from the rung `from` until a step fails; the ceiling is the last rate that passed (0 if none). */
  const ramp = async (side: Side, from: number): Promise<Ramp> => {
    const stack = side === 'bare' ? null : await startStack(side);
    target = stack ?? { origin: bare.origin, processes: [{ name: 'bare', pid: bare.process.child.pid! }] };
    const rates = ladder();
    const steps: Step[] = [];
    let ceiling = 0;
    try {
      // What the ramp before left is cleaned up, untimed, so a ramp does not pay for the one
      // before (autovacuum catching up in the middle of its steps): every table with dead
      // rows is vacuumed, the job table Graphile Worker polls among them (the bare side
      // inserts and deletes thousands of job rows per step).
      // And the ramp starts with no checkpoint owed for the WAL the one before wrote: a
      // checkpoint forced by WAL volume would otherwise land in its first steps.
      await settleAfterLoad(pool);
      // Fresh processes compile their code on the first requests: a few seconds of the
      // lowest rate, not measured, so the first step measures a warm server.
      progress(`events: warming ${side} up`);
      await runNode('bench/events/driver.ts', [JSON.stringify({ ...stepSpec(side, FIRST_RATE), warmupSeconds: WARMUP_RAMP_SECONDS, measureSeconds: 1 })]);
      await settle(side);
      for (const rate of rates.slice(from)) {
        const step = await runStep(side, rate);
        steps.push(step);
        if (!step.passed) break;
        ceiling = rate;
      }
      // A later round's first rung failed: step down the ladder until a rung passes.
      for (const rate of ceiling === 0 ? rates.slice(0, from).reverse() : []) {
        const step = await runStep(side, rate);
        steps.push(step);
        if (step.passed) {
          ceiling = rate;
          break;
        }
      }
      // The lowest rung failed (a machine busy with other work): halve the rate until one
      // passes or it is below MIN_RATE, so the report still says where the ceiling is.
      for (let rate = Math.round(FIRST_RATE / 2); ceiling === 0 && rate >= MIN_RATE; rate = Math.round(rate / 2)) {
        const step = await runStep(side, rate);
        steps.push(step);
        if (step.passed) ceiling = rate;
      }
      // One more step halfway (geometrically) between the last rate that passed and the
      // first that failed, so the ceiling is known to within about RATE_FACTOR's square root.
      const failed = steps.filter((step) => !step.passed && step.rate > ceiling).sort((a, b) => a.rate - b.rate)[0];
      const between = failed && ceiling > 0 ? Math.round(Math.sqrt(ceiling * failed.rate)) : 0;
      if (between > ceiling && between < failed!.rate) {
        const step = await runStep(side, between);
        steps.push(step);
        if (step.passed) ceiling = between;
      }
    } finally {
      await stack?.stop();
    }
    return { side, ceiling, steps: steps.sort((a, b) => a.rate - b.rate) };
  };

  const ramps: Record<Side, Ramp[]> = { service: [], before: [], bare: [] };
  const startRung = (side: Side) => {
    const last = ramps[side].at(-1);
    if (!last || last.ceiling === 0) return 0;
    // A later round starts a few rungs below the ceiling the round before found.
    const rung = ladder().findLastIndex((rate) => rate <= last.ceiling);
    return Math.max(0, rung - 2);
  };
  const eventsBefore = await pool.query<{ n: number }>(`select count(*)::int as n from events where account_id = any($1::text[])`, [serviceAccountIds]);
  for (let round = 1; round <= rounds; round++) {
    // Alternating which side goes first, so neither always runs on a warmer machine.
    const sides: Side[] = beforeTree ? ['service', 'bare', 'before'] : ['service', 'bare'];
    const order = round % 2 === 1 ? sides : [...sides].reverse();
    for (const side of order) {
      progress(`events: round ${round} of ${rounds}, ${side}`);
      ramps[side].push(await ramp(side, startRung(side)));
    }
  }

  // Every event the service wrote for a subscribed account reaches the receiver: a worker
  // runs again for whatever the last ramp left.
  const drainer = await startStack('service');
  const { rows: written } = await pool.query<{ n: number }>(
    `select count(*)::int as n from events where account_id = any($1::text[]) and name = any($2::text[])`,
    [serviceAccountIds, EVENT_NAMES],
  );
  const expected = written[0]!.n - eventsBefore.rows[0]!.n;
  await receiver.waitForDeliveries(expected, DELIVERY_TIMEOUT_MS).catch(() => {});
  const delivered = new Set([...receiver.arrivals.values()].map((arrival) => arrival.eventId)).size;
  await drainer.stop();
  await bare.process.stop();
  for (const api of Object.values(apis)) await api.process.stop();

  const serviceCeiling = median(ramps.service.map((r) => r.ceiling));
  const bareCeiling = median(ramps.bare.map((r) => r.ceiling));
  const atCeiling = (side: Side) => ramps[side].map((r) => r.steps.find((step) => step.passed && step.rate === r.ceiling)).filter((step): step is Step => step !== undefined);
  const firstFailed = (side: Side) => ramps[side].map((r) => r.steps.find((step) => !step.passed)).filter((step): step is Step => step !== undefined);
  const serviceAt = atCeiling('service');
  const label = `visitor messages and contact creates 1:1, p99 request latency < ${P99_LIMIT_MS} ms`;
  const notes = [
    `Service: \`node server/main.ts\` ROLE=api (one process throughout) and ROLE=worker (started for each of its ramps) on the seeded database; ${ACCOUNTS} accounts each with one webhook subscription (${EVENT_NAMES.join(', ')}) to a loopback HTTPS receiver, ${WIDGETS} chat widgets. Load (bench/events/driver.ts): an open loop at a fixed rate alternating POST /v1/incoming-chat-widget-message (new visitors each step, ${3} messages each at most, from ${SOURCE_ADDRESSES} loopback addresses) and POST /v1/contacts (a new number each); latency from when each request was due, so it is the commit latency of those writes plus the HTTP around them. Rates from ${FIRST_RATE}/s, ×${RATE_FACTOR} per step (${warmupSeconds} s unmeasured, then ${measureSeconds} s measured, longer when that is fewer than ${MIN_MEASURED} requests: a p99 of fewer than 100 is their slowest one) until a step's p99 reaches ${P99_LIMIT_MS} ms or a request fails (a step that misses is run once more, and the rate counts as missed only when both miss: one stall of the machine's disk, a WAL flush held up for a few hundred ms, would otherwise end a ramp wherever it lands), then one step between the last rate that passed and that one (when even ${FIRST_RATE}/s fails, half that rate, down to ${MIN_RATE}/s); the ceiling is the highest rate that passed, median over ${rounds} round(s). Before each ramp, untimed, every table with more than 1,000 dead rows or rows changed since its last analysis is vacuumed and analysed and a checkpoint is taken; each ramp then starts with ${WARMUP_RAMP_SECONDS} s at ${FIRST_RATE}/s, not measured. Between steps the worker catches up.`,
    `Baseline: bench/bare-server.ts BARE_MODE=silent-writes, fastify + pg on the same database: the service's own rate counting, reads and writers for a visitor message (contact, Contact Created, message, New Message/Replies, and the bot's answer the widget's settings decide with its New Message: the greeting of a session's first message, with the default settings), in one transaction without any NOTIFY (a message naming a hand-off keyword, which the scenario never sends, would add the bot-typing flag and a job row inserted directly); contact creates as the bare contact write (key counted, contact, list membership, Contact Created). Its accounts have no webhook subscription, so the outbox trigger queues nothing (and notifies nothing); no worker runs during its ramps (any job row names no task), and its job rows and events are cleared between steps, untimed.`,
    `Events written by the service for subscribed accounts: ${expected}; distinct events that reached the receiver: ${delivered}.`,
    ...ramps.service.map((r, index) => `Service round ${index + 1} (ceiling ${r.ceiling}/s): ${r.steps.slice(-3).map(describeStep).join(' | ')}`),
    ...ramps.bare.map((r, index) => `Bare round ${index + 1} (ceiling ${r.ceiling}/s): ${r.steps.slice(-3).map(describeStep).join(' | ')}`),
    ...ramps.before.map((r, index) => `BENCH_EVENTS_BEFORE (${beforeTree}) round ${index + 1} (ceiling ${r.ceiling}/s): ${r.steps.slice(-3).map(describeStep).join(' | ')}`),
  ];
  const failedService = firstFailed('service');
  const beforeCeiling = ramps.before.length ? median(ramps.before.map((r) => r.ceiling)) : null;
  return {
    name: 'events',
    title: 'Event ceiling: notifying writes (visitor messages, contact creates) until p99 passes 100 ms',
    rows: [
      ratioRow(`event ceiling: ${label}`, 'requests/s', serviceCeiling, bareCeiling, { atLeast: TARGET_RATIO }),
      ...(beforeCeiling === null ? [] : [ratioRow(`event ceiling, this checkout against BENCH_EVENTS_BEFORE's`, 'requests/s', serviceCeiling, beforeCeiling)]),
      {
        name: 'p99 at the ceiling (service)',
        value: serviceAt.length ? Math.round(median(serviceAt.map((step) => step.result.all.p99)) * 10) / 10 : NaN,
        unit: 'ms',
      },
      {
        name: 'p99 one step above the ceiling (service)',
        value: failedService.length ? Math.round(median(failedService.map((step) => step.result.all.p99)) * 10) / 10 : NaN,
        unit: 'ms',
      },
      { name: 'events written but not delivered to the receiver', value: Math.max(0, expected - delivered), unit: '', target: '0', met: delivered >= expected },
    ],
    notes,
  };
}
