// Two worker processes on one database run each cron tick once: Graphile Worker records
// each crontab's last execution in _private_known_crontabs, and only the process that
// advances it schedules the tick's job. Slow: it waits for two real minute ticks.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { workerProcesses } from '../helpers/worker-process.ts';
import { waitFor } from './fixtures.ts';

/** The crontab's per-minute tasks (workers/index.ts). */
const EVERY_MINUTE = ['close-chat-windows', 'dispatch-webhook-events', 'send-webhook-deliveries'];

let service: TestService;
const workers = workerProcesses(() => service.databaseUrl);

beforeAll(async () => {
  service = await startTestService({ env: { ROLE: 'api' } });
  // Every job the workers schedule, as the database stores it (the jobs themselves are deleted once done).
  await service.services.pool.query(`
    create table test_scheduled_jobs (task text not null, cron_ts text);
    create function test_record_job() returns trigger language plpgsql as $$
    begin
      insert into test_scheduled_jobs select t.identifier, new.payload->'_cron'->>'ts' from graphile_worker._private_tasks t where t.id = new.task_id;
      return new;
    end $$;
    create trigger test_record_job after insert on graphile_worker._private_jobs for each row execute function test_record_job();
  `);
});

afterAll(async () => {
  await workers.stopAll();
  await service?.stop();
});

test('with two worker processes each per-minute cron task is scheduled once per tick', async () => {
  await workers.start();
  await workers.start();
  const { rows: [{ since }] } = await service.services.pool.query<{ since: string }>(`select now()::text as since`);
  const ticks = async () =>
    (
      await service.services.pool.query<{ task: string; ts: string; n: number }>(
        `select task, cron_ts as ts, count(*)::int as n from test_scheduled_jobs
          where cron_ts is not null and cron_ts::timestamptz > $1::timestamptz group by task, cron_ts order by cron_ts, task`,
        [since],
      )
    ).rows;
  // Two ticks with both processes running: the first is then over for both.
  const seen = await waitFor(async () => {
    const rows = await ticks();
    return new Set(rows.filter((row) => row.task === 'close-chat-windows').map((row) => row.ts)).size >= 2 ? rows : undefined;
  }, 'two cron ticks', 150_000);
  const tickTimes = [...new Set(seen.map((row) => row.ts))].sort();
  const firstTick = tickTimes[0]!;
  for (const task of EVERY_MINUTE) {
    expect(seen.find((row) => row.task === task && row.ts === firstTick), `${task} at ${firstTick}`).toEqual({ task, ts: firstTick, n: 1 });
  }
  expect(seen.filter((row) => row.n !== 1)).toEqual([]);
  // The bookkeeping both processes consult: one row per crontab item, at the latest tick.
  const { rows: known } = await service.services.pool.query<{ identifier: string }>(
    `select identifier from graphile_worker._private_known_crontabs where identifier = any($1::text[])`,
    [EVERY_MINUTE],
  );
  expect(known.map((row) => row.identifier).sort()).toEqual([...EVERY_MINUTE].sort());
}, 180_000);
