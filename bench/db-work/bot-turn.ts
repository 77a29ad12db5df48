// PostgreSQL's work per chat-widget visitor message with any bot's turn it causes (the API
// process takes the message, a ROLE=worker process the turn), until the job queue is empty
// again; `away` gives the widgets an away message. This script's own polls and the processes'
// idle background are subtracted, and both processes' round trips to it counted; BENCH_TREE
// runs them from another checkout. docs/performance.md, Measuring one change.
//   node bench/db-work/bot-turn.ts [visitors] [away]
import pg from 'pg';
import { postgresCpuMs, postmasterPid, processCpuMs } from '../cpu-usage.ts';
import { cleanUp, root } from '../processes.ts';
import { COUNT_SETTLE_MS, roundTripCounter } from './round-trips.ts';
import { startWorkerRole } from '../scenarios/servers.ts';
import { startWidgetService } from './widget-service.ts';
import { measureWork, startCountingDatabase, STATS_SETTLE_MS, type WorkReport } from './counters.ts';

const VISITORS = Number(process.argv[2]) || 300;
const AWAY = process.argv[3] === 'away';
const WARM_VISITORS = 100;
const WIDGETS = 20;
const LANES = 4;
const POLL_MS = 100;
const IDLE_MS = 10_000;

try {
  const { url } = await startCountingDatabase();
  const counter = await roundTripCounter();
  const tree = process.env.BENCH_TREE ?? root;
  const { service, call, widgets, owner } = await startWidgetService(url, WIDGETS, AWAY ? { awayMessage: 'We are away; someone will answer here.' } : {}, counter.env('api'), tree);
  const worker = await startWorkerRole(url, counter.env('worker'), tree);

  const postmaster = await postmasterPid(url);
  /** CPU milliseconds so far of the API process, the worker and PostgreSQL. */
  const cpu = () => [processCpuMs(service.process.child.pid!), processCpuMs(worker.child.pid!), postgresCpuMs(postmaster)];
  const poller = new pg.Client(url);
  await poller.connect();
  let polls = 0;
  /**
   * Until no bot turn is waiting or running (finished jobs are deleted). Only the turns: the
   * webhook sender's wake-ups, queued for a few seconds ahead, need not be waited for.
   */
  const drained = async () => {
    for (;;) {
      polls += 1;
      const { rows } = await poller.query<{ n: number }>(
        `select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
          where t.identifier = 'chat_widget_message' and j.attempts < j.max_attempts`,
      );
      if (rows[0]!.n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };
  /** Message `round` of each visitor `prefix`0 ... (one visitor's messages one after another). */
  const post = async (prefix: string, visitors: number, round: number) => {
    let next = 0;
    const lane = async () => {
      for (let visitor = next++; visitor < visitors; visitor = next++) {
        await call('POST', `/v1/incoming-chat-widget-message?userId=${owner}`, {
          messageType: 'text',
          customData: { body: `message ${round} of ${visitor}`, fromId: `${prefix}${visitor}`, toId: widgets[visitor % WIDGETS] },
        });
      }
    };
    await Promise.all(Array.from({ length: LANES }, lane));
  };

  // Compiled, prepared and cached on both processes first.
  for (let round = 0; round < 3; round++) await post('warm', WARM_VISITORS, round);
  await drained();

  let idleRoundTripsPerMs = { api: 0, worker: 0 };
  const idle = await measureWork(url, 1, async () => {
    const counted = await counter.count();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const counts = await counter.count();
    idleRoundTripsPerMs = { api: (counts.api! - counted.api!) / (IDLE_MS + COUNT_SETTLE_MS), worker: (counts.worker! - counted.worker!) / (IDLE_MS + COUNT_SETTLE_MS) };
  });
  const idlePerMs = (key: 'statements' | 'commits' | 'walRecords' | 'walBytes' | 'walSyncs') => idle.perOperation[key] / (IDLE_MS + STATS_SETTLE_MS);
  console.log(
    `idle background: ${(idlePerMs('commits') * 1000).toFixed(2)} commits/s, ${(idlePerMs('statements') * 1000).toFixed(2)} statements/s, ` +
      `${(idleRoundTripsPerMs.api * 1000).toFixed(2)} round trips/s from the API process, ${(idleRoundTripsPerMs.worker * 1000).toFixed(2)} from the worker`,
  );

  type Net = { apiRoundTrips: number; workerRoundTrips: number; statements: number; commits: number; walRecords: number; walBytes: number; walSyncs: number };
  const measure = async (title: string, operations: number, operate: () => Promise<void>): Promise<Net> => {
    let pollsBefore = 0;
    let elapsed = 0;
    let cpuUsed: number[] = [];
    let roundTrips = { api: 0, worker: 0 };
    const report: WorkReport = await measureWork(url, operations, async () => {
      pollsBefore = polls;
      const started = performance.now();
      const cpuBefore = cpu();
      const counted = await counter.count();
      await operate();
      await drained();
      const counts = await counter.count();
      roundTrips = { api: counts.api! - counted.api!, worker: counts.worker! - counted.worker! };
      cpuUsed = cpu().map((ms, index) => ms - cpuBefore[index]!);
      elapsed = performance.now() - started;
    });
    const window = elapsed + STATS_SETTLE_MS;
    const pollsPer = (polls - pollsBefore) / operations;
    const { perOperation } = report;
    const net: Net = {
      apiRoundTrips: (roundTrips.api - idleRoundTripsPerMs.api * (elapsed - COUNT_SETTLE_MS)) / operations,
      workerRoundTrips: (roundTrips.worker - idleRoundTripsPerMs.worker * (elapsed - COUNT_SETTLE_MS)) / operations,
      statements: perOperation.statements - pollsPer - (idlePerMs('statements') * window) / operations,
      commits: perOperation.commits - pollsPer - (idlePerMs('commits') * window) / operations,
      walRecords: perOperation.walRecords - (idlePerMs('walRecords') * window) / operations,
      walBytes: perOperation.walBytes - (idlePerMs('walBytes') * window) / operations,
      walSyncs: perOperation.walSyncs - (idlePerMs('walSyncs') * window) / operations,
    };
    console.log(`\n${title}`);
    console.log(report.lines.join('\n'));
    console.log(
      `net of ${pollsPer.toFixed(2)} polls and the idle background: ${net.apiRoundTrips.toFixed(2)} round trips from the API process and ${net.workerRoundTrips.toFixed(2)} from the worker, ${net.statements.toFixed(2)} statements, ${net.commits.toFixed(2)} commits, ` +
        `${net.walRecords.toFixed(1)} WAL records, ${net.walBytes.toFixed(0)} WAL bytes, ${net.walSyncs.toFixed(2)} WAL fsyncs`,
    );
    const [api, work, postgres] = cpuUsed.map((ms) => ((ms / operations) * 1000).toFixed(0));
    console.log(`CPU per operation (the machine shared; from /proc, 10 ms ticks): API ${api} µs, worker ${work} µs, PostgreSQL ${postgres} µs`);
    return net;
  };

  const first = await measure(`first message of a new visitor (contact created, session opened, the bot greets), ${VISITORS} visitors`, VISITORS, () =>
    post('v', VISITORS, 0),
  );
  const later = await measure(`later messages (the bot silent${AWAY ? ': the away message was not due' : ''}), two per visitor`, 2 * VISITORS, async () => {
    await post('v', VISITORS, 1);
    await post('v', VISITORS, 2);
  });
  const mix = (key: keyof Net) => (first[key] + 2 * later[key]) / 3;
  console.log(
    `\nper visitor message, the events bench's mix (one first message, two later): ${mix('apiRoundTrips').toFixed(2)} + ${mix('workerRoundTrips').toFixed(2)} round trips (API process + worker), ${mix('statements').toFixed(2)} statements, ` +
      `${mix('commits').toFixed(2)} commits, ${mix('walRecords').toFixed(1)} WAL records, ${mix('walBytes').toFixed(0)} WAL bytes, ${mix('walSyncs').toFixed(2)} WAL fsyncs`,
  );
  await poller.end();
  await worker.stop();
  await service.process.stop();
} finally {
  await cleanUp();
}
process.exit(0);
