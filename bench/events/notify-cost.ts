// What a NOTIFY costs a committing transaction, measured rather than assumed: many clients
// commit small write transactions as fast as they can, with no notification, one, or three
// (each of a distinct payload, as a conversation event and Graphile Worker's `jobs:insert`
// are), and with the notification sent after the commit in a transaction of its own that
// does not wait for its WAL flush. PostgreSQL takes one cluster-wide lock in PreCommit_Notify
// for every transaction that notified, and holds it until its commit is flushed; the figures
// say whether the cost is per transaction or per notification, and what it does to the rate
// of commits. Variants alternate over rounds on one embedded PostgreSQL, with a session
// LISTENing (so the queue is read as in the service). Prints a table.
//
//   node bench/events/notify-cost.ts [clients=16] [seconds=4] [rounds=2]
import pg from 'pg';
import { startBenchDatabase } from '../database.ts';
import { cleanUp } from '../processes.ts';

type Variant = { name: string; notifies: number; after: boolean };
const VARIANTS: Variant[] = [
  { name: 'no notification', notifies: 0, after: false },
  { name: '1 notification in the transaction', notifies: 1, after: false },
  { name: '3 notifications in the transaction', notifies: 3, after: false },
  { name: '1 notification after commit (own statement, synchronous_commit off)', notifies: 1, after: true },
];

const clients = Number(process.argv[2] ?? 16);
const seconds = Number(process.argv[3] ?? 4);
const rounds = Number(process.argv[4] ?? 2);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

async function run(url: string, variant: Variant): Promise<{ commitsPerSecond: number; p50: number; p99: number; lockWaits: number }> {
  const sessions = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  const sampler = new pg.Client({ connectionString: url });
  await sampler.connect();
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  let sequence = 0;
  const loop = async (client: pg.Client) => {
    while (performance.now() < deadline) {
      const started = performance.now();
      const n = sequence++;
      const notifies = Array.from({ length: variant.notifies }, (_, index) => `pg_notify('notify_probe', '${n}:${index}')`).join(', ');
      await client.query('begin');
      await client.query('insert into notify_probe (body) values ($1)', [`row ${n}`]);
      if (notifies && !variant.after) await client.query(`select ${notifies}`);
      await client.query('commit');
      // As the conversation feed's announce() sends it: one statement, its own transaction.
      if (notifies && variant.after) await client.query(`select set_config('synchronous_commit', 'off', true), ${notifies}`);
      latencies.push(performance.now() - started);
    }
  };
  let samples = 0;
  let waiting = 0;
  const sampling = (async () => {
    while (performance.now() < deadline) {
      const { rows } = await sampler.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and wait_event = 'object'`,
      );
      samples += 1;
      waiting += rows[0]!.n;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const started = performance.now();
  await Promise.all(sessions.map(loop));
  const elapsed = (performance.now() - started) / 1000;
  await sampling;
  await Promise.all([...sessions, sampler].map((client) => client.end()));
  latencies.sort((a, b) => a - b);
  return { commitsPerSecond: latencies.length / elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), lockWaits: waiting / Math.max(1, samples) };
}

try {
  const database = await startBenchDatabase();
  const setup = new pg.Client({ connectionString: database.url });
  await setup.connect();
  await setup.query('create table notify_probe (id bigserial primary key, body text not null)');
  const listener = new pg.Client({ connectionString: database.url });
  await listener.connect();
  let heard = 0;
  listener.on('notification', () => (heard += 1));
  await listener.query('listen notify_probe');
  const results = new Map<string, Awaited<ReturnType<typeof run>>[]>();
  for (let round = 0; round < rounds; round++) {
    for (const variant of VARIANTS) {
      const result = await run(database.url, variant);
      results.set(variant.name, [...(results.get(variant.name) ?? []), result]);
      process.stderr.write(`${variant.name}: ${JSON.stringify(result)}\n`);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  process.stdout.write(`${clients} clients, ${seconds} s per variant, median of ${rounds} rounds; ${heard} notifications heard\n`);
  process.stdout.write('| variant | commits/s | p50 ms | p99 ms | sessions waiting on the notify lock (mean) |\n|---|---|---|---|---|\n');
  for (const variant of VARIANTS) {
    const runs = results.get(variant.name)!;
    const cell = (pick: (r: (typeof runs)[number]) => number, digits: number) => median(runs.map(pick)).toFixed(digits);
    process.stdout.write(`| ${variant.name} | ${cell((r) => r.commitsPerSecond, 0)} | ${cell((r) => r.p50, 2)} | ${cell((r) => r.p99, 2)} | ${cell((r) => r.lockWaits, 2)} |\n`);
  }
  await listener.end();
  await setup.end();
} finally {
  await cleanUp();
}
