// PostgreSQL's work per chat-widget visitor message (POST /v1/incoming-chat-widget-message)
// at steady state: each visitor already has its contact and an open session, with the
// service's round trips to it; BENCH_TREE runs the service from another checkout.
//
//   node bench/db-work/visitor-message.ts [messages] [--analyze]
//
// With --analyze the tables are analysed after the warm-up, as autovacuum's analyse would
// have done for a deployment; without, the planner still sees the tables as they were at
// the start (empty), as it does between analyses of a growing table.
import { postgresCpuMs, postmasterPid, processCpuMs } from '../cpu-usage.ts';
import { cleanUp, root } from '../processes.ts';
import { roundTripCounter } from './round-trips.ts';
import { startWidgetService } from './widget-service.ts';
import { measureWork, runAnalyze, startCountingDatabase } from './counters.ts';

const MESSAGES = Number(process.argv[2]) || 1000;
const VISITORS = 200;
const WIDGETS = 20;

try {
  const { url } = await startCountingDatabase();
  const counter = await roundTripCounter();
  const { service, call, widgets, owner } = await startWidgetService(url, WIDGETS, {}, counter.env('api'), process.env.BENCH_TREE ?? root);
  const post = async (count: number) => {
    let next = 0;
    const lane = async () => {
      for (let index = next++; index < count; index = next++) {
        const visitor = index % VISITORS;
        await call('POST', `/v1/incoming-chat-widget-message?userId=${owner}`, {
          messageType: 'text',
          customData: { body: `message ${index}`, fromId: `visitor${visitor}`.padEnd(12, '0'), toId: widgets[visitor % WIDGETS] },
        });
      }
    };
    await Promise.all(Array.from({ length: 4 }, lane));
  };
  await post(2 * VISITORS);
  if (process.argv.includes('--analyze')) await runAnalyze(url);
  // CPU over the messages alone (from /proc, 10 ms ticks; it moves with the machine's other load, the counts do not).
  const postmaster = await postmasterPid(url);
  let cpu = { api: 0, postgres: 0, ms: 0 };
  let roundTrips = 0;
  const report = await measureWork(url, MESSAGES, async () => {
    const api = processCpuMs(service.process.child.pid!);
    const postgres = postgresCpuMs(postmaster);
    const started = performance.now();
    const counted = (await counter.count()).api!;
    await post(MESSAGES);
    roundTrips = (await counter.count()).api! - counted;
    cpu = { api: processCpuMs(service.process.child.pid!) - api, postgres: postgresCpuMs(postmaster) - postgres, ms: performance.now() - started };
  });
  console.log(report.lines.join('\n'));
  console.log(`round trips to PostgreSQL per message: ${(roundTrips / MESSAGES).toFixed(2)} (the API process's background included)`);
  console.log(
    `CPU per message: API process ${((cpu.api / MESSAGES) * 1000).toFixed(0)} µs, PostgreSQL ${((cpu.postgres / MESSAGES) * 1000).toFixed(0)} µs; ` +
      `${(MESSAGES / (cpu.ms / 1000)).toFixed(0)} messages/s from 4 lanes`,
  );
  await service.process.stop();
} finally {
  await cleanUp();
}
process.exit(0);
