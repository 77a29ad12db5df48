// Rate-limit tests count requests inside one 60-second window: when the current
// window (by the database clock) is about to end, wait for the next one, so a
// burst never straddles a window boundary.
import type pg from 'pg';

export async function waitForFreshWindow(pool: pg.Pool, secondsNeeded = 5): Promise<void> {
  const { rows } = await pool.query<{ left: number }>(`select 60 - mod(extract(epoch from now())::numeric, 60)::float8 as left`);
  const left = Number(rows[0].left);
  if (left < secondsNeeded) await new Promise((resolve) => setTimeout(resolve, left * 1000 + 200));
}

/** Sets a bucket's count in the current and the next window (so a boundary in between changes nothing). */
export async function seedBucket(pool: pg.Pool, bucket: string, count: number): Promise<void> {
  await pool.query(
    `insert into rate_counters (bucket, window_start, count)
     select $1, to_timestamp(floor(extract(epoch from now()) / 60) * 60) + make_interval(secs => 60 * g), $2
     from generate_series(0, 1) g
     on conflict (bucket, window_start) do update set count = excluded.count`,
    [bucket, count],
  );
}
