// The metrics' webhook figures read the attempts' tallies (server/webhooks/attempt-tallies.ts),
// written by the one writer of attempts: a scrape reads a few rows of the window's slices, not
// the window's attempts, so its cost stays flat however many deliveries a deployment makes.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { registry } from '../../server/metrics/registry.ts';
import { readScrapeFigures } from '../../server/metrics/scrape-figures.ts';
import type { Services } from '../../server/process-services.ts';
import { DURATION_BOUNDS_MS, durationQuantile, sumTallies, tallyOf, type Tally } from '../../server/webhooks/attempt-tallies.ts';
import { recentTallySql } from '../../server/webhooks/sql/attempt-tallies.ts';
import { insertAttempts, type AttemptRow } from '../../server/webhooks/sql/record-attempts.ts';
import { sweepWebhookHistoryTask } from '../../workers/sweep-webhook-history.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runCountingBuffers } from '../helpers/plan-buffers.ts';

let database: TestDatabase;
let first: pg.Client;
let second: pg.Client;
let serial = 0;

/** `count` attempts as a sending round records them, every tenth failed (HTTP 500). */
function attempts(count: number, durationMs: number): AttemptRow[] {
  return Array.from({ length: count }, () => {
    const n = ++serial;
    return {
      id: `wha_tally_${n}`,
      deliveryId: `dlv_tally_${n}`,
      eventId: `evt_tally_${n}`,
      accountId: 'usr_tally',
      subscriptionId: `whk_tally_${n % 50}`,
      attempt: 1,
      statusCode: n % 10 === 0 ? 500 : 200,
      durationMs,
      error: n % 10 === 0 ? 'HTTP 500' : null,
    };
  });
}

const record = (client: pg.Client, rows: AttemptRow[]) => insertAttempts(client as unknown as pg.PoolClient, rows);

async function scrape(client: pg.Client) {
  const { rows, buffers } = await runCountingBuffers<Tally>(client, recentTallySql(5));
  return { sum: sumTallies(rows), buffers };
}

beforeAll(async () => {
  database = await createTestDatabase();
  first = new pg.Client({ connectionString: database.url });
  second = new pg.Client({ connectionString: database.url });
  await first.connect();
  await second.connect();
}, 60_000);

afterAll(async () => {
  await first?.end();
  await second?.end();
  await database?.drop();
});

describe('webhook attempt tallies', () => {
  test("the scrape's figures read the window's tallies: a few pages for 20,000 attempts, none of two days of tallies before it", async () => {
    // Two days of tallies before the window, one a slice, each of 1,000 failed attempts.
    await first.query(
      `insert into webhook_attempt_tallies (slice, slot, delivered, failed, durations)
       select date_bin('10 seconds', now() - interval '2 days 1 hour', timestamptz 'epoch') + n * interval '10 seconds', 1, 0, 1000, $1::int[]
         from generate_series(1, 17280) n`,
      [DURATION_BOUNDS_MS.map((_, index) => (index === 0 ? 1000 : 0))],
    );
    for (let round = 0; round < 40; round++) await record(first, attempts(500, 120));
    await first.query('vacuum analyze webhook_attempt_tallies, webhook_attempts');

    const { sum, buffers } = await scrape(first);
    expect(sum.delivered).toBe(18_000);
    expect(sum.failed).toBe(2_000);
    expect(sum.durations[DURATION_BOUNDS_MS.indexOf(100)]).toBe(20_000);
    const pages = (await first.query<{ relpages: number }>(`select relpages from pg_class where relname = 'webhook_attempts'`)).rows[0]!.relpages;
    expect(pages).toBeGreaterThan(200);
    expect(buffers).toBeLessThan(10);

    // What the scrape reports is the tallies': it stands with the attempts' rows gone.
    await first.query('delete from webhook_attempts');
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      await readScrapeFigures({ pool, connectedSockets: () => 0 });
    } finally {
      await pool.end();
    }
    const gauge = async (name: string, labels: Record<string, string>) =>
      (await registry.getSingleMetric(name)!.get()).values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
    expect(await gauge('webhook_attempts_recent', { outcome: 'delivered' })).toBe(18_000);
    expect(await gauge('webhook_attempts_recent', { outcome: 'failed' })).toBe(2_000);
    // All 20,000 took 120 ms: in the bucket 100–250 ms, the median half-way into it.
    expect(await gauge('webhook_attempt_duration_seconds_recent', { quantile: '0.5' })).toBeCloseTo(0.175, 9);
  }, 120_000);

  test("each connection's rounds add to its own row of the slice; the window sums them", async () => {
    const before = await scrape(first);
    await record(second, attempts(10, 3));
    await record(second, attempts(10, 40_000));
    await record(first, attempts(5, 700));
    const after = await scrape(first);
    // Rows by writer: the slot is the connection's backend pid.
    const pids = await Promise.all([first, second].map(async (client) => (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid));
    const { rows: bySlot } = await first.query<{ slot: number; attempts: number }>(
      `select slot, sum(delivered + failed)::int as attempts from webhook_attempt_tallies where slice > now() - interval '5 minutes' group by slot order by slot`,
    );
    expect(bySlot).toEqual(expect.arrayContaining([{ slot: pids[0], attempts: 20_005 }, { slot: pids[1], attempts: 20 }]));
    expect(bySlot).toHaveLength(2);
    expect(after.sum.delivered - before.sum.delivered).toBe(23);
    expect(after.sum.failed - before.sum.failed).toBe(2);
    const added = after.sum.durations.map((count, index) => count - before.sum.durations[index]!);
    expect(added[DURATION_BOUNDS_MS.indexOf(0)]).toBe(10);
    expect(added[DURATION_BOUNDS_MS.indexOf(30_000)]).toBe(10);
    expect(added[DURATION_BOUNDS_MS.indexOf(500)]).toBe(5);
  });

  test('the hourly sweep deletes tallies older than an hour and keeps the recent ones', async () => {
    await first.query(
      `insert into webhook_attempt_tallies (slice, slot, delivered, failed, durations)
       values (date_bin('10 seconds', now() - interval '61 minutes', timestamptz 'epoch'), 2, 1, 0, '{1}'),
              (date_bin('10 seconds', now() - interval '59 minutes', timestamptz 'epoch'), 2, 1, 0, '{1}')`,
    );
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      const services = { pool, config: { WEBHOOK_HISTORY_DAYS: 30 } } as unknown as Services;
      const helpers = { logger: { info() {} } } as unknown as Parameters<ReturnType<typeof sweepWebhookHistoryTask>>[1];
      await sweepWebhookHistoryTask(services)({}, helpers);
    } finally {
      await pool.end();
    }
    const { rows } = await first.query<{ older: number; hour: number; recent: number }>(
      `select count(*) filter (where slice < now() - interval '1 hour')::int as older,
              count(*) filter (where slot = 2)::int as hour,
              count(*) filter (where slice > now() - interval '5 minutes')::int as recent
         from webhook_attempt_tallies`,
    );
    expect(rows[0]).toEqual({ older: 0, hour: 1, recent: 2 });
  });
});

describe('duration quantiles, estimated within their bucket', () => {
  const tally = (durations: number[]) => tallyOf(durations.map((durationMs) => ({ error: null, durationMs })));

  test('tallyOf counts outcomes (delivered: no error, as the sender judged a 2xx; failed: any error) and durations by lower bound', () => {
    const counted = tallyOf([
      { error: null, durationMs: 0 },
      { error: null, durationMs: 4 },
      { error: 'permanent: redirect (300) not followed', durationMs: 5 },
      { error: 'temporary: timed out', durationMs: 10_000 },
      { error: 'temporary: receiver answered 503', durationMs: 99_000 },
    ]);
    expect(counted.delivered).toBe(2);
    expect(counted.failed).toBe(3);
    expect(counted.durations[0]).toBe(2);
    expect(counted.durations[DURATION_BOUNDS_MS.indexOf(5)]).toBe(1);
    expect(counted.durations[DURATION_BOUNDS_MS.indexOf(10_000)]).toBe(1);
    expect(counted.durations[DURATION_BOUNDS_MS.length - 1]).toBe(1);
  });

  test('a quantile is interpolated linearly in its bucket', () => {
    // 100, 300 and 2000 ms: the median's rank 1.5 falls half-way into the bucket 250–500 ms.
    expect(durationQuantile(tally([100, 300, 2000]).durations, 0.5)).toBe(375);
    // Ten in 100–250 ms: the 0.95 quantile is 95% of the way through it.
    expect(durationQuantile(tally(Array(10).fill(120)).durations, 0.95)).toBeCloseTo(242.5, 9);
    expect(durationQuantile(tally([1, 2, 3, 4]).durations, 0.5)).toBeCloseTo(2.5, 9);
  });

  test('the last bucket, with no upper bound, gives its lower bound; nothing counted gives none', () => {
    expect(durationQuantile(tally([70_000, 90_000]).durations, 0.99)).toBe(60_000);
    expect(durationQuantile(tally([]).durations, 0.5)).toBeNull();
  });
});
