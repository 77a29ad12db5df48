// Rate-limit tests count requests inside one 60-second window (fixed windows on the
// database clock): a burst that straddles a window boundary counts in two.
import type pg from 'pg';

/** The start of the current window by the database clock, in epoch seconds. */
export async function currentWindow(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ start: number }>(`select floor(extract(epoch from now()) / 60)::float8 * 60 as start`);
  return Number(rows[0]!.start);
}

/**
 * Runs `body`, whose counts must all fall in one window, and when it fails after a window
 * boundary passed while it ran, runs it again (so `body` starts from a fresh account or
 * bucket each time). However slowly the machine runs, a run that stays inside one window
 * decides; a failure there is the test's failure.
 */
export async function inOneWindow<T>(pool: pg.Pool, body: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const startedIn = await currentWindow(pool);
    try {
      return await body();
    } catch (error) {
      if (attempt >= 3 || (await currentWindow(pool)) === startedIn) throw error;
    }
  }
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
