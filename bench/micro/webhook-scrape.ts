// What the metrics' webhook figures cost a scrape when the last five minutes hold many
// attempts: reading the attempts of the window (as the scrape did, through a block-range
// index on their time) against reading the window's tallies (server/webhooks/attempt-tallies.ts).
// A bench database gets N attempts spread over the last 299 s and their tallies (30 slices,
// 4 writing connections), then each read runs 7 times.
//
//   node bench/micro/webhook-scrape.ts [N]   (750,000 by default: 2,500 deliveries/s)
import pg from 'pg';
import { seedAccounts, startBenchDatabase } from '../database.ts';
import { cleanUp } from '../processes.ts';
import { recentTallySql } from '../../server/webhooks/sql/attempt-tallies.ts';

const N = Number(process.argv[2] ?? 750_000);
const { url } = await startBenchDatabase();
await seedAccounts(url, 1);
const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  await client.query(`create index bench_attempts_time on webhook_attempts using brin (created_at) with (pages_per_range = 16)`);
  await client.query(
    `insert into webhook_attempts (id, delivery_id, event_id, account_id, subscription_id, attempt, status_code, duration_ms, error, created_at)
     select 'wha_' || n, 'dlv_' || n, 'evt_' || n, 'usr_bench', 'whk_' || n % 100, 1, case when n % 20 = 0 then 500 else 200 end, 20 + n % 200, null,
            now() - interval '299 seconds' + n * (interval '299 seconds' / $1::int)
       from generate_series(1, $1::int) n`,
    [N],
  );
  await client.query(
    `insert into webhook_attempt_tallies (slice, slot, delivered, failed, durations)
     select date_bin('10 seconds', now() - interval '299 seconds', timestamptz 'epoch') + s * interval '10 seconds', slot,
            $1::int / 120 * 19 / 20, $1::int / 120 / 20, array_fill($1::int / 120 / 14, array[14])
       from generate_series(0, 29) s, generate_series(1, 4) slot`,
    [N],
  );
  await client.query('vacuum analyze webhook_attempts, webhook_attempt_tallies');
  const attemptsRead = `with recent as (select status_code, duration_ms from webhook_attempts where created_at > now() - interval '5 minutes')
select (select count(*) from recent where status_code between 200 and 299)::int as delivered,
       (select count(*) from recent where status_code is null or status_code not between 200 and 299)::int as failed,
       (select percentile_cont(array[0.5, 0.95, 0.99]::float8[]) within group (order by duration_ms) from recent) as quantiles`;
  for (const [label, statement] of [
    ['the attempts of the window', { text: attemptsRead }],
    ['the tallies of the window', recentTallySql(5)],
  ] as const) {
    const ms: number[] = [];
    for (let i = 0; i < 7; i++) {
      const start = performance.now();
      await client.query(statement);
      ms.push(performance.now() - start);
    }
    ms.sort((a, b) => a - b);
    console.log(`${label}: median ${ms[3]!.toFixed(2)} ms (${ms.map((m) => m.toFixed(1)).join(', ')})`);
  }
} finally {
  await client.end();
  await cleanUp();
}
