// The delivery log of a quiet subscription costs what its own page holds, however many
// attempts other subscriptions record after it: its page reads along the subscription's own
// index, on the first page and on a page after a cursor. Checked on what PostgreSQL reads,
// with many busy subscriptions of the same size, so that the planner estimates the quiet
// one (not among the most common values) at their average: reading every attempt newest
// first until ten of its own come up then looks cheap, and reads them all.
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { deliveryLogPageSql } from '../../server/webhooks/list-delivery-attempts.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runCountingBuffers } from '../helpers/plan-buffers.ts';

/** Busy subscriptions, and the attempts of each: all newer than the quiet one's, interleaved. */
const BUSY_SUBSCRIPTIONS = 100;
const BUSY_ATTEMPTS = 2_000;
const QUIET_ATTEMPTS = 300;
const PAGE = 10;
/** Buffers a page may touch: its rows, their deliveries and events, the index path to them (about 90). */
const PAGE_BUFFERS = 200;

let database: TestDatabase;
let client: pg.Client;

/** Runs the page statement; its rows and the buffers it touched. */
async function page(subscriptionId: string, after: string | null) {
  const { rows, buffers } = await runCountingBuffers<{ id: string }>(client, deliveryLogPageSql(subscriptionId, after, PAGE).statement());
  return { ids: rows.map((row) => row.id), buffers };
}

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(`insert into accounts (id, email) values ('usr_log_plan', 'log-plan@example.com')`);
  await client.query(
    `insert into webhook_subscriptions (id, account_id, name, url, subscribed_to, subscribed_to_tags)
     select 'whk_' || n, 'usr_log_plan', 'hook ' || n, 'https://hooks.example/' || n, '{Task Created}', '{}' from generate_series(0, $1::int) n`,
    [BUSY_SUBSCRIPTIONS],
  );
  // One event per attempt, each delivered at its first attempt (no delivery row); the quiet subscription's attempts are the oldest.
  await client.query(
    `with attempts as (
       select n, 'whk_' || case when n <= $1::int then 0 else 1 + n % $3::int end as subscription_id from generate_series(1, $1::int + $2::int * $3::int) n
     ), events as (
       insert into events (id, account_id, name, payload, dispatched_at)
       select 'evt_log_' || n, 'usr_log_plan', 'Task Created', '{}', now() from attempts returning id
     )
     insert into webhook_attempts (id, delivery_id, event_id, account_id, subscription_id, attempt, status_code, duration_ms, error, created_at)
     select 'wha_log_' || lpad(n::text, 6, '0'), 'dlv_log_' || n, 'evt_log_' || n, 'usr_log_plan', subscription_id, 1, 200, 5, null,
            now() - interval '1 day' + n * interval '1 second'
       from attempts, (select count(*) from events) written`,
    [QUIET_ATTEMPTS, BUSY_ATTEMPTS, BUSY_SUBSCRIPTIONS],
  );
  await client.query('analyze webhook_attempts, webhook_deliveries, events');
  // Writing the busy subscriptions' attempts takes seconds, and far longer on a loaded machine.
}, 240_000);

afterAll(async () => {
  await client?.end();
  await database?.drop();
});

test("a quiet subscription's log pages read its own attempts, not the busy one's", async () => {
  const first = await page('whk_0', null);
  expect(first.ids).toEqual(Array.from({ length: PAGE }, (_, index) => `wha_log_${String(QUIET_ATTEMPTS - index).padStart(6, '0')}`));
  expect(first.buffers).toBeLessThan(PAGE_BUFFERS);

  const second = await page('whk_0', first.ids.at(-1)!);
  expect(second.ids).toEqual(Array.from({ length: PAGE }, (_, index) => `wha_log_${String(QUIET_ATTEMPTS - PAGE - index).padStart(6, '0')}`));
  expect(second.buffers).toBeLessThan(PAGE_BUFFERS);
});

test("a cursor of another subscription's attempt pages nothing", async () => {
  const busy = await page('whk_1', null);
  expect(busy.ids).toHaveLength(PAGE);
  expect((await page('whk_0', busy.ids[0]!)).ids).toEqual([]);
});
