// The scrape's webhook figures read the last minutes of the delivery log, not the whole
// log: their statement reads the blocks the window's attempts are in (attempts are written
// in time order), checked on what PostgreSQL reads over a log of two days.
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { webhookSql } from '../../server/metrics/scrape-figures.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runCountingBuffers } from '../helpers/plan-buffers.ts';

/** Attempts of the two days before the window, one every two seconds, then a few in it. */
const OLD_ATTEMPTS = 86_400;
const RECENT_ATTEMPTS = 30;

let database: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(
    `insert into webhook_attempts (id, delivery_id, event_id, account_id, subscription_id, attempt, status_code, duration_ms, error, created_at)
     select 'wha_scrape_' || lpad(n::text, 6, '0'), 'dlv_scrape_' || n, 'evt_scrape_' || n, 'usr_scrape', 'whk_scrape_' || n % 2000, 1,
            case when n % 10 = 0 then 500 else 200 end, 5, null,
            case when n <= $1::int then now() - interval '2 days 1 hour' + n * interval '2 seconds' else now() - interval '1 minute' end
       from generate_series(1, $1::int + $2::int) n`,
    [OLD_ATTEMPTS, RECENT_ATTEMPTS],
  );
  // As autovacuum leaves an insert-only table: its block ranges summarised.
  await client.query('vacuum analyze webhook_attempts');
}, 240_000);

afterAll(async () => {
  await client?.end();
  await database?.drop();
});

test("the scrape's webhook figures read the window's blocks, not the log's", async () => {
  const { rows, buffers } = await runCountingBuffers<{ delivered: number; failed: number }>(client, webhookSql([0.5]).statement());
  expect(rows[0]).toMatchObject({ delivered: 27, failed: 3 });
  const pages = (await client.query<{ relpages: number }>(`select relpages from pg_class where relname = 'webhook_attempts'`)).rows[0]!.relpages;
  expect(pages).toBeGreaterThan(500);
  expect(buffers).toBeLessThan(pages / 10);
});
